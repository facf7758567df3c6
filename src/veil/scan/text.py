"""Personal data inside free text: the entities of a note, with where they are.

``find_entities("Call Carrie on +1-875-988-3835")`` finds a person's name and a phone number,
with their character offsets, as Presidio's analyzer does. Two kinds of search, each declared
where its entity is (``Entity.in_text``, ``Entity.context``, ``Entity.label``):

- value patterns (e-mail addresses, phones, cards, IBANs, IP addresses, KRA PINs, SSNs...)
  searched inside the text, each hit confirmed by the same checksum or parse that confirms a
  whole value; a shape too common to search alone (a Kenyan ID's 6-8 digits) counts only
  shortly after one of its context words ("ID no 12345678");
- people's names: capitalized words after a title ("Mr Otieno", "Bi Wanjiru"), known given or
  family names after a cue ("Call Carrie", "Dear John", "spoke to Amina"), and pairs of a
  known given name and a known family name ("Grace Wanjiru"). The gazetteer is Faker's name
  lists in every locale; common words that are also names somewhere ("Will", "May", "Grace
  period") count only after a title or cue.

Overlapping hits are resolved as Presidio does: the surer, then the longer, wins. No model is
downloaded: the search is regular expressions, checksums and word lists.

A column of texts is searched at once (``find_entities_cells``, ``find_all_cells``: the scan
and ``Redact`` do): Arrow's RE2 kernels say, per pattern, which texts it may match in and where
its first match starts, and the patterns above then run only there, so the spans are the same
as text by text.
"""

from __future__ import annotations

import gc
import re
import threading
from bisect import bisect_left
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from veil.scan.recognizers import ENTITY_INFO, TEXT_RECOGNIZERS, PatternRecognizer
from veil.scan.recognizers import vocabulary as words
from veil.scan.recognizers.base import LONGEST_WORD
from veil.scan.recognizers.normalize import normalize, normalize_place

#: A hit whose pattern is only a shape (no checksum, no parse) must score this much.
MIN_TEXT_SCORE = 0.75
#: A hit this sure is confirmed (a checksum, a phone-number parse, an e-mail address's form).
CONFIRMED = 0.95
#: How many words before a match its context word may be ("ID no. 12345678").
CONTEXT_WORDS = 3

PERSON = "PERSON"


class Span(NamedTuple):
    """One entity found in a text: ``text[start:end]`` is it. A named tuple: a column's search
    makes one per hit, and a tuple is made in a third of a frozen dataclass's time."""

    entity: str
    start: int
    end: int
    score: float


def label(entity: str) -> str:
    """The entity in a sentence: ``PHONE`` -> ``a phone number``."""
    info = ENTITY_INFO.get(entity)
    return info.label if info is not None and info.label else entity.lower().replace("_", " ")


@dataclass(frozen=True)
class _Searcher:
    entity: str
    regex: re.Pattern[str]
    recognizer: PatternRecognizer
    context: re.Pattern[str]  # the entity's words shortly before a hit
    needs_context: bool  # a shape too common to count without them


def _words_before(phrases: Collection[str]) -> re.Pattern[str]:
    """One of ``phrases``, then at most ``CONTEXT_WORDS - 1`` words, at the end of a text."""
    cue = "|".join(re.escape(c).replace(r"\ ", r"[\s._-]*") for c in sorted(phrases))
    tail = rf"(?:\W+\w+){{0,{CONTEXT_WORDS - 1}}}\W*$"
    return re.compile(rf"(?i)\b(?:{cue})\b{tail}")


@cache
def _searchers() -> tuple[_Searcher, ...]:
    found = []
    for recognizer in TEXT_RECOGNIZERS:
        info = ENTITY_INFO[recognizer.entity]
        # a hit stands alone: no letter or digit glued to either end, nor a number joined
        # to it by a hyphen or dot, or a colon before it (the 03-08 15 of 2023-03-08 15:47,
        # the 06-814888 of an ISBN 978-1-06-814888-0, the 08296560 of a UUID 08296560-253b;
        # a port after an IP address is no part of it: 10.0.0.1:8080)
        regex = re.compile(
            rf"(?<![A-Za-z0-9])(?<![0-9][-.:])(?:{recognizer.text_union})"
            r"(?![A-Za-z0-9])(?![-.][0-9])"
        )
        # as Presidio's context words: the entity's own words ("tel", "simu") make a
        # possible hit count; for a common shape they are required
        context = _words_before({*info.context, *info.hints})
        found.append(
            _Searcher(recognizer.entity, regex, recognizer, context, info.context_required)
        )
    return tuple(found)


_DATE = re.compile(
    r"(?:(?:19|20)\d\d[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:19|20)?\d\d)"
)


def _within_date(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of a date the text writes (tried at each of the few
    places such a date could begin: no search of the rest of a long text)."""
    for at in range(max(0, start - _LONGEST_DATE), start + 1):
        date = _DATE_IN_TEXT.match(text, at)
        if date is not None and date.end() >= end:
            return True
    return False


#: characters of the longest date ``_DATE_IN_TEXT`` matches before the part of it searched
_LONGEST_DATE = 24


def _searched(searcher: _Searcher, text: str, where: int = 0) -> list[Span]:
    """The hits of one searcher in ``text`` (none starts before ``where``), each confirmed."""
    spans = []
    for match in searcher.regex.finditer(text, where):  # its lookbehind sees before where
        value = match.group(0)
        # 04-04-2021 is a date, whatever a phone plan allows; so is 22.08.1946, whose
        # 08.1946 a phone plan allows too
        if _DATE.fullmatch(value) or _within_date(text, match.start(), match.end()):
            continue
        score = searcher.recognizer.score_value(value, in_text=True)
        if score == 0.0:  # a checksum or parse said no
            continue
        if score < MIN_TEXT_SCORE or searcher.needs_context:
            before = text[max(0, match.start() - 40) : match.start()]
            if not searcher.context.search(before):
                continue
            score = max(score, MIN_TEXT_SCORE)
        spans.append(Span(searcher.entity, match.start(), match.end(), score))
    return spans


def _wanted(wanted: Collection[str] | None) -> list[_Searcher]:
    return [s for s in _searchers() if wanted is None or s.entity in wanted]


def _patterns(text: str, wanted: Collection[str] | None) -> list[Span]:
    return [span for searcher in _wanted(wanted) for span in _searched(searcher, text)]


#: A word: letters, apostrophes and hyphens, from a letter on (a title's full stop is not in it:
#: "Mr." is the word "Mr", then a full stop).
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'\u2019-]*")
_WORD_SPLIT = re.compile(f"({_WORD.pattern})")


def _is_capitalized(token: str) -> bool:
    return (token[0].isupper() and not token.isupper()) or (len(token) <= 3 and token.istitle())


#: Each word's key in the word lists and whether it is capitalized, computed once per distinct
#: word (notes repeat their words), for at most ``_KEPT_WORDS`` words.
_WORDS: dict[str, tuple[str, bool]] = {}
_KEPT_WORDS = 1 << 17


def _word(word: str) -> tuple[str, bool]:
    """A word's key and whether it is capitalized; a word longer than any list's entry is none
    of them (a cell of megabytes of letters is one), and is not kept."""
    if len(word) > LONGEST_WORD:
        return "", _is_capitalized(word)
    info = (normalize(word), _is_capitalized(word))
    if len(_WORDS) < _KEPT_WORDS:
        _WORDS[word] = info
    return info


def _names(text: str) -> list[Span]:
    first, last = words.first_names(), words.last_names()
    titles, cues, common = words.NAME_TITLES_IN_TEXT, words.NAME_CUES, words.NOT_NAMES_IN_TEXT
    # the text's words and what lies around them, split in one call: gaps[k] comes before
    # word k, gaps[k + 1] after it; word k starts at at[2k] and ends at at[2k + 1]
    parts = _WORD_SPLIT.split(text)
    tokens, gaps = parts[1::2], parts[0::2]
    if len(tokens) < 2:  # every name is a capitalized word after another word
        return []
    kept = _WORDS.get
    keys, caps = zip(*[kept(word) or _word(word) for word in tokens], strict=True)
    at = list(accumulate(map(len, parts)))
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        if i + 1 == len(tokens) or not caps[i + 1]:
            i += 1  # every name is a capitalized word after this one
            continue
        key = keys[i]
        is_title = key in titles and (gaps[i + 1][:1] == "." or key not in common or caps[i])
        cue = key in cues
        # the capitalized words that follow (at most three: "Mary Wanjiru Kamau")
        j = i + 1
        while j < len(tokens) and j - i <= 3 and caps[j]:
            gap = gaps[j].strip(" ")
            if gap and not (j == i + 1 and is_title and gap == "."):  # "Dr. Njoroge" is one
                break  # other punctuation breaks a name
            j += 1
        run_keys = keys[i + 1 : j]
        if j < len(tokens) and keys[j] in words.NAMED_AFTER:
            run_keys = ()  # "Kenyatta Hospital", "Moi Avenue": places named after people
        # after a title any capitalized word is a name, unless it is a common word no locale
        # has as a name ("Mrs. Call back on...": a sentence that ended with the title)
        known = bool(run_keys) and (run_keys[0] in first or run_keys[0] in last)
        named = bool(run_keys) and (run_keys[0] not in common or known)
        if is_title and named and caps[i] and run_keys[0] not in titles:
            spans.append(Span(PERSON, at[2 * i + 2], at[2 * j - 1], 0.85))
            i = j
            continue
        surname = len(run_keys) > 1 and run_keys[-1] in last
        if cue and known and (run_keys[0] not in common or surname):
            spans.append(Span(PERSON, at[2 * i + 2], at[2 * j - 1], 0.8))
            i = j
            continue
        # a known given name followed by a known family name, neither a common word
        if (
            caps[i]
            and key in first
            and key not in common
            and key not in titles
            and key not in cues
            and not gaps[i + 1].strip(" ")
        ):
            following = keys[i + 1]
            if following in last and following not in common:
                end = 2 * i + 3
                if i + 2 < len(tokens) and caps[i + 2]:
                    third = keys[i + 2]
                    if third in last and third not in common:
                        end = 2 * i + 5
                spans.append(Span(PERSON, at[2 * i], at[end], 0.75))
                i += 2
                continue
        i += 1
    return spans


def _resolve(spans: list[Span]) -> list[Span]:
    """Overlaps resolved: the surer hit wins, then the longer one (Presidio's rule)."""
    if len(spans) < 2:
        return list(spans)
    # the spans kept are disjoint: held by start, their ends rise too, so a span overlaps one
    # of them only if it overlaps the last that starts before it ends (a cell of 100,000
    # place names took minutes against every span kept)
    starts: list[int] = []
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start)):
        at = bisect_left(starts, span.end)
        if at and kept[at - 1].end > span.start:
            continue
        starts.insert(at, span.start)
        kept.insert(at, span)
    return kept


def find_entities(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """Every entity found in ``text`` (of ``entities`` only, if given), in order.

    >>> [(s.entity, "Call Carrie on +1-875-988-3835"[s.start:s.end])
    ...  for s in find_entities("Call Carrie on +1-875-988-3835")]
    [('PERSON', 'Carrie'), ('PHONE', '+1-875-988-3835')]
    """
    if not text:
        return []
    spans = _patterns(text, entities)
    if entities is None or PERSON in entities:
        spans += _names(text)
    return _resolve(spans)


def text_entities() -> tuple[str, ...]:
    """The direct identifiers searched for inside text, in declaration order (``redact``
    replaces the quasi-identifiers of ``QUASI_IN_TEXT`` too)."""
    return tuple(dict.fromkeys([*(s.entity for s in _searchers()), PERSON]))


#: Quasi-identifiers searched for inside text by ``find_quasi``: places from the gazetteers
#: (Kenya's counties and towns, countries, cities) and dates. They do not make a column
#: personal free text (a note naming a branch's town is not a direct identifier), but
#: ``redact`` replaces them: a county generalized in its column must not stay in a note.
LOCATION, DATE = "LOCATION", "DATE"
QUASI_IN_TEXT = (LOCATION, DATE)

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE_CORE = (
    rf"{_DATE.pattern}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+(?:19|20)\d\d"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d\d"
)
_DATE_IN_TEXT = re.compile(rf"(?<![\w/.-])(?:{_DATE_CORE})(?![\w/-])")
#: A run of one to three capitalized words (a place may be "Homa Bay", "Dar es Salaam").
_PLACE_RUN = re.compile(r"\b[A-Z][\w'\u2019-]*(?:\s+(?:es\s+|de\s+|la\s+)?[A-Z][\w'\u2019-]*){0,2}")


def _dates(text: str) -> list[Span]:
    return [Span(DATE, m.start(), m.end(), 0.9) for m in _DATE_IN_TEXT.finditer(text)]


def _places(text: str) -> list[Span]:
    """The longest run of capitalized words the gazetteers know as a place, at each word."""
    spans = []
    for match in _PLACE_RUN.finditer(text):
        run = list(re.finditer(r"\S+", match.group(0)))
        i = 0
        while i < len(run):
            for j in range(len(run), i, -1):
                start, end = match.start() + run[i].start(), match.start() + run[j - 1].end()
                phrase = text[start:end]
                if _is_place(phrase):
                    spans.append(Span(LOCATION, start, end, 0.7))
                    i = j
                    break
            else:
                i += 1
    return spans


def _is_place(phrase: str) -> bool:
    # notes repeat their places: a phrase of a few words is looked up once (a long one, a
    # hostile cell's, is not kept)
    return _is_known_place(phrase) if len(phrase) <= _CACHED_PHRASE else _looked_up(phrase)


_CACHED_PHRASE = 100


def _looked_up(phrase: str) -> bool:
    return normalize_place(phrase) in words.text_places() and normalize(phrase) not in _NOT_PLACES


_is_known_place = lru_cache(maxsize=1 << 16)(_looked_up)


def find_quasi(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """Places and dates in ``text`` (of ``entities`` only, if given), in order: the longest
    run of capitalized words the gazetteers know as a place ("Homa Bay", "Nairobi"), and
    dates written with digits or a month's name.

    >>> text = "Admitted at Homa Bay hospital on 12 March 2024"
    >>> [(s.entity, text[s.start:s.end]) for s in find_quasi(text)]
    [('LOCATION', 'Homa Bay'), ('DATE', '12 March 2024')]
    """
    if not text:
        return []
    spans = []
    if entities is None or DATE in entities:
        spans += _dates(text)
    if entities is None or LOCATION in entities:
        spans += _places(text)
    return _resolve(spans)


def find_all(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """``find_entities`` and ``find_quasi`` together, overlaps resolved: what ``redact``
    replaces."""
    return _resolve([*find_entities(text, entities), *find_quasi(text, entities)])


#: What Python's ``\s`` matches in text (RE2's ``\s`` is ``[\t\n\f\r ]`` only).
_SPACE = r"\t-\r\x1c-\x1f\x85\p{Z}"


def _for_re2(pattern: str) -> str | None:
    r"""``pattern`` as Arrow's RE2 reads it, to pick the texts it may match in (never fewer than
    Python's ``pattern`` matches in): ``\d`` and ``\s`` as Python reads them in text (any
    script's digits, any space), a counted repetition without its upper bound; None for what
    RE2 cannot take the same way (lookarounds, ``\b``, ``\w``, back-references), whose texts
    are all searched."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i : i + 2]
            if escape == r"\d":
                out.append(r"\p{Nd}")
            elif escape == r"\s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            elif escape[1:] in set("bBwWDSAZ") or escape[1:].isdigit():
                return None
            else:
                out.append(escape)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            opening = "[^" if pattern.startswith("[^", i) else "["
            out.append(opening)
            i += len(opening)
            if pattern.startswith("]", i):  # a "]" first in a class is itself
                out.append("]")
                i += 1
            continue
        elif pattern.startswith(("(?<", "(?=", "(?!", "(?P="), i):
            return None
        elif counted := _COUNTED.match(pattern, i):  # x{1,64} as x{1,}: a smaller automaton
            out.append(f"{{{counted.group(1)},}}")
            i = counted.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


_COUNTED = re.compile(r"\{(\d+),\d+\}")


@cache
def _name_starts() -> str:
    """Where a name may start: a capitalized word, or a cue in any case ("call", "Dear"),
    then spaces or a title's full stop, then a capitalized word ("Mr. Otieno", "Grace
    Wanjiru", "call Carrie"; not "KRA PIN"); every rule of ``_names`` needs one. A cue written
    with other letters than ASCII's ("Dèar": its key is "dear") is in a text that is not
    ASCII, all of which are searched."""
    letter, lower = "A-Za-zÀ-ÖØ-öø-ÿ'\u2019-", "a-zß-öø-ÿ"
    # capitalized: a capital, then a lower-case letter; or title-cased in three characters
    # with no lower-case letter ("A", "O'B"; not "ID")
    capital, mark = "A-ZÀ-ÖØ-Þ", "'\u2019-"
    capitalized = (
        f"[{capital}](?:[{letter}]*[{lower}]|(?:[{mark}][{capital}{mark}]?)?(?:[^{letter}]|$))"
    )
    gap = r"(?: +(?:\. *)?|\. *)"
    cues = "|".join(sorted(map(re.escape, words.NAME_CUES)))
    return f"(?:{capitalized.replace('|$', '')}[{letter}]*|(?i:{cues})){gap}{capitalized}"


@cache
def _place_starts() -> str:
    """An ASCII text holds a place only if one of its words (letters only, any case) is the
    first word of a place: ``normalize_place`` keeps a text's runs of letters as its words."""
    first = "|".join(
        sorted({re.escape(place.split()[0]) for place in words.text_places() if place})
    )
    return rf"(?i)(?:^|[^A-Za-z])(?:{first})(?:[^A-Za-z]|$)"


#: Texts searched together: Arrow's kernels pick, per search, the texts it may find anything
#: in, and only those are searched one by one.
CELLS_AT_ONCE = 1 << 16


def _has_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Column:
    """A chunk of texts and where in each of them a search may find something."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.unread: list[int] = []  # texts Arrow cannot hold: searched everywhere
        try:
            self.arrow = pa.array(texts, type=pa.string())
        except (pa.ArrowException, UnicodeEncodeError):  # a lone surrogate has no UTF-8
            self.unread = [i for i, text in enumerate(texts) if not _has_utf8(text)]
            unread = set(self.unread)
            self.arrow = pa.array(
                ["" if i in unread else text for i, text in enumerate(texts)], type=pa.string()
            )
        self._ascii: pa.Array | None = None

    def _is_ascii(self) -> pa.Array:  # computed once per chunk
        if self._ascii is None:
            self._ascii = pc.string_is_ascii(self.arrow)
        return self._ascii

    def starts(self, pattern: str | None, *, ascii_only: bool = False) -> list[tuple[int, int]]:
        """``(text, where)`` for each text ``pattern`` (RE2) matches in, ``where`` the first
        match's offset (0 in a text that is not ASCII: Arrow counts bytes, Python
        characters); every text, from 0, when there is no pattern, and every text Arrow
        cannot hold. With ``ascii_only``, every text that is not ASCII too."""
        if pattern is None:
            return [(i, 0) for i in range(len(self.texts))]
        found = pc.find_substring_regex(self.arrow, pattern)
        other = pc.invert(self._is_ascii())
        if ascii_only:  # a text that is not ASCII is searched whatever the pattern says
            found = pc.if_else(other, 0, found)
        else:
            found = pc.if_else(pc.and_(other, pc.greater_equal(found, 0)), 0, found)
        where = found.to_numpy(zero_copy_only=False).copy()
        where[self.unread] = 0
        hits = np.flatnonzero(where >= 0)
        return list(zip(hits.tolist(), where[hits].tolist(), strict=True))


@cache
def _standing_alone(union: str) -> str | None:
    """A searcher's pattern for RE2, with no letter or digit glued to either end: consumed
    rather than looked around, which RE2 cannot, and the same test of whether a hit exists."""
    core = _for_re2(union)
    return None if core is None else f"(?:^|[^A-Za-z0-9])(?:{core})(?:[^A-Za-z0-9]|$)"


def _chunk_entities(column: _Column, entities: Collection[str] | None) -> list[list[Span]]:
    found: list[list[Span]] = [[] for _ in column.texts]
    texts = column.texts
    for searcher in _wanted(entities):
        for i, where in column.starts(_standing_alone(searcher.recognizer.text_union)):
            found[i] += _searched(searcher, texts[i], where)
    if entities is None or PERSON in entities:
        for i, _ in column.starts(_name_starts(), ascii_only=True):
            found[i] += _names(texts[i])
    return found


def _chunk_quasi(column: _Column, entities: Collection[str] | None) -> list[list[Span]]:
    found: list[list[Span]] = [[] for _ in column.texts]
    texts = column.texts
    if entities is None or DATE in entities:
        for i, _ in column.starts(_for_re2(_DATE_CORE)):
            found[i] += _dates(texts[i])
    if entities is None or LOCATION in entities:
        for i, _ in column.starts(_place_starts(), ascii_only=True):
            found[i] += _places(texts[i])
    return found


def _search_cells(
    texts: Sequence[str], entities: Collection[str] | None, *, quasi: bool
) -> list[list[Span]]:
    with _collector_paused():
        # each distinct text searched once (a column repeats its notes: "no issues", a
        # template's), each cell given its own list
        index: dict[str, int] = {}
        slots = [index.setdefault(text, len(index)) for text in texts]
        distinct = list(index)
        found: list[list[Span]] = []
        for start in range(0, len(distinct), CELLS_AT_ONCE):
            found += _chunk_cells(distinct[start : start + CELLS_AT_ONCE], entities, quasi=quasi)
        return [found[slot][:] for slot in slots]


def _chunk_cells(
    texts: Sequence[str], entities: Collection[str] | None, *, quasi: bool
) -> list[list[Span]]:
    column = _Column(texts)
    found = _chunk_entities(column, entities)
    if quasi:
        places_and_dates = _chunk_quasi(column, entities)
        for i, more in enumerate(places_and_dates):
            if more:
                found[i] = [*_resolve(found[i]), *_resolve(more)]
    return [_resolve(spans) if spans else [] for spans in found]


_PAUSES = 0
_PAUSES_LOCK = threading.Lock()
_RESUME = False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a column is searched, then as it was.

    The search makes a span, a list and a match for every hit, none in a cycle (reference
    counting frees them), and each of the collector's full passes would walk the whole heap
    again: the caller's table, every span found so far. Nested and concurrent searches share
    one pause; a collector the caller turned off stays off."""
    global _PAUSES, _RESUME
    with _PAUSES_LOCK:
        if _PAUSES == 0:
            _RESUME = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _RESUME:
                gc.enable()


def find_entities_cells(
    texts: Sequence[str], entities: Collection[str] | None = None
) -> list[list[Span]]:
    """``find_entities`` of each of ``texts``, the same spans, searched as a column: each
    search runs only on the texts Arrow's RE2 kernel says it may find something in.

    >>> find_entities_cells(["Call Carrie", "no one here"]) == [
    ...     find_entities("Call Carrie"), find_entities("no one here")]
    True
    """
    return _search_cells(texts, entities, quasi=False)


def find_all_cells(
    texts: Sequence[str], entities: Collection[str] | None = None
) -> list[list[Span]]:
    """``find_all`` of each of ``texts``, the same spans, searched as a column (what
    ``Redact`` replaces)."""
    return _search_cells(texts, entities, quasi=True)


#: Capitalized words that some gazetteer lists as a place but a note means otherwise.
_NOT_PLACES = frozenset(
    {
        "reading",
        "mobile",
        "orange",
        "split",
        "nice",
        "bath",
        "deal",
        "hope",
        "march",
        "may",
        "victoria",
        "florence",
        "george",
        "charlotte",
        "grace",
        "union",
        "independence",
        "liberty",
        "university",
        "college",
        "central",
        "north",
        "south",
        "east",
        "west",
        "claim",
        "clinic",
        "hospital",
        "pharmacy",
        "lab",
        "member",
        "client",
        "follow",
    }
)


@dataclass(frozen=True)
class TextFindings:
    """What a column's sampled cells hold: per entity, how many cells contain it and the first
    row (a position in the table, 0 for the first row) where it was seen."""

    cells: int
    counts: dict[str, int]
    first_row: dict[str, int]
    with_any: int  # cells with at least one entity
    confirmed: int  # cells with an entity a checksum, a parse or its form confirms

    def share(self, entity: str) -> float:
        """The share of cells that contain ``entity``."""
        return self.counts.get(entity, 0) / self.cells if self.cells else 0.0


def search_cells(texts: Sequence[str], rows: Sequence[int]) -> TextFindings:
    """Count, per entity, the cells of ``texts`` that contain it; ``rows`` are their positions."""
    counts: dict[str, int] = {}
    first_row: dict[str, int] = {}
    with_any = confirmed = 0
    for spans, row in zip(find_entities_cells(texts), rows, strict=True):
        with_any += bool(spans)
        confirmed += any(span.score >= CONFIRMED for span in spans)
        for entity in {span.entity for span in spans}:
            counts[entity] = counts.get(entity, 0) + 1
            first_row.setdefault(entity, row)
    return TextFindings(len(texts), counts, first_row, with_any, confirmed)
