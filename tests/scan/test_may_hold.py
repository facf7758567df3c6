"""``may_hold``, the cheap test that decides which texts the search for direct identifiers reads,
never turns away a text one of the patterns finds something in.

- Derived: each text pattern's least count of digits, of "@", of ":" and of characters, read
  from its parsed expression, is what ``may_hold`` asks for.
- Generated: hypothesis writes texts each pattern matches (``from_regex``), alone and inside
  other text; every one may hold.
- Searched: on texts holding real identifiers, and on random texts, the search with
  ``may_hold`` finds what the search of every text finds.
"""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812 (the names re's parser gives its nodes)
import re._parser as sre_parse
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.scan.core import _IBAN_LEAST, may_hold
from veil.scan.recognizers import TEXT_RECOGNIZERS
from veil.scan.text import find_entities_cells

_PATTERNS = sorted({p.regex for r in TEXT_RECOGNIZERS for p in r.text_patterns})
_ENTITIES = sorted({r.entity for r in TEXT_RECOGNIZERS})
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)


def _least(parsed: Any, wanted: Callable[[str], bool] | None) -> int:
    """The fewest characters ``wanted`` accepts (every character for None) that any match of
    ``parsed`` holds: a character class counts only when each of its characters is wanted."""
    return sum(_node(op, av, wanted) for op, av in parsed)


def _node(op: Any, av: Any, wanted: Callable[[str], bool] | None) -> int:
    if op is C.LITERAL:
        return 1 if wanted is None or wanted(chr(av)) else 0
    if op in (C.IN, C.ANY, C.NOT_LITERAL):
        return 1 if wanted is None or (op is C.IN and _class_wanted(av, wanted)) else 0
    if op is C.CATEGORY:  # a category outside a class: only \d is all digits
        return 1 if wanted is None or (av is C.CATEGORY_DIGIT and wanted("0")) else 0
    if op in _REPEATS:
        low, _, sub = av
        return low * _least(sub, wanted)
    if op is C.SUBPATTERN:
        return _least(av[-1], wanted)
    if op is C.ATOMIC_GROUP:
        return _least(av, wanted)
    if op is C.BRANCH:
        return min(_least(branch, wanted) for branch in av[1])
    # anchors and lookarounds hold no character of the match (a lookaround's are outside it
    # or counted by what follows)
    assert op in (C.AT, C.ASSERT, C.ASSERT_NOT, C.GROUPREF), f"unread node {op}"
    return 0


def _class_wanted(items: Any, wanted: Callable[[str], bool]) -> bool:
    chars: list[str] = []
    for op, av in items:
        if op is C.LITERAL:
            chars.append(chr(av))
        elif op is C.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op is C.CATEGORY and av is C.CATEGORY_DIGIT:
            chars.append("0")
        else:  # a negation, \w, \s...: not only wanted characters
            return False
    return bool(chars) and all(wanted(c) for c in chars)


def _digit(c: str) -> bool:
    return re.fullmatch(r"\d", c) is not None


@pytest.mark.parametrize("regex", _PATTERNS)
def test_each_pattern_asks_for_what_may_hold_looks_for(regex: str) -> None:
    parsed = sre_parse.parse(regex)
    digits = _least(parsed, _digit)
    signs = _least(parsed, lambda c: c in "@:")
    length = _least(parsed, None)
    assert signs >= 1 or digits >= 4 or (digits >= 1 and length >= _IBAN_LEAST), (
        f"{regex!r} matches a text with {digits} digits, no @ or : and {length} characters: "
        "may_hold would not let the search read it"
    )


def test_the_least_is_read_right() -> None:
    """The reading of an expression, on ones whose least is known."""
    assert _least(sre_parse.parse(r"\d{3}-\d{2}-\d{4}"), _digit) == 9
    assert _least(sre_parse.parse(r"(?:\d{1,3}\.){3}\d{1,3}"), _digit) == 4
    assert _least(sre_parse.parse(r"[A-Z]{2}\d{2}(?:\s?[A-Z0-9]){11,30}"), None) == 15
    assert _least(sre_parse.parse(r"a\d|\d{5}"), _digit) == 1
    assert _least(sre_parse.parse(r"[0-9a]{4}"), _digit) == 0


@pytest.mark.parametrize("regex", _PATTERNS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_text_a_pattern_matches_may_hold(regex: str, data: st.DataObject) -> None:
    text = data.draw(st.from_regex(regex, fullmatch=True))
    around = data.draw(st.text(max_size=8)), data.draw(st.text(max_size=8))
    assert may_hold(text), text
    assert may_hold(around[0] + text + around[1])


#: digits as Arabic-Indic script writes them: ``\d`` matches them, as the patterns read it
_ARABIC = str.maketrans("0123456789", "".join(chr(0x660 + i) for i in range(10)))
_HELD = [
    "jane.wanjiku@example.co.ke",
    "+254 712 345 678",
    "0712345678",
    "call 0712345678 after six".translate(_ARABIC),
    "+254712345678".translate(_ARABIC),
    "10.0.0.1",
    "fe80::1",
    "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32",
    "A012345678Z",
    "12345678",
    "078-05-1120",
    "QQ 12 34 56 C",
]
_NOT_HELD = ["<=50K", ">50K", "2nd", "Grade 11", "10th", "1-4 yrs", "n/a"]


def test_the_search_with_may_hold_finds_what_the_whole_search_finds() -> None:
    for text in _HELD + _NOT_HELD:
        spans = find_entities_cells([text], _ENTITIES)[0]
        assert not spans or may_hold(text), (text, spans)
    assert all(find_entities_cells([t], _ENTITIES)[0] for t in _HELD[:6])
    assert not any(may_hold(t) for t in _NOT_HELD)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789 +-.:@()abcXYZ" + "012345".translate(_ARABIC), max_size=40))
def test_a_random_text_turned_away_holds_nothing(text: str) -> None:
    if not may_hold(text):
        assert find_entities_cells([text], _ENTITIES) == [[]]
