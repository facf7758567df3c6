"""Phone numbers confirmed as phonenumbers confirms them, in a few microseconds each.

``phonenumbers.parse`` then ``is_valid_number`` cost about 40 µs a number: a column of notes
spends most of its search there. For a number written with ASCII digits, spaces and ``()./-``
(and a leading ``+``), what phonenumbers decides depends only on its digits and whether it has
the plus. This module makes that decision on the digits, with phonenumbers' own metadata
(each region's patterns, prefixes and lengths, compiled once) and phonenumbers' own steps in
phonenumbers' order: the plus or the region's international prefix, then the country code,
the region's national prefix, the lengths, the region that owns the number, its number types.

Anything else (letters, an extension, other scripts' digits or spaces, a second plus, a plus
with no known country code, fewer than three digits) is left to phonenumbers itself:
``verdict`` answers ``UNSURE``. ``tests/scan/test_phones.py`` holds the two equal on Faker's
numbers in every locale, on numbers built around every country code and prefix, and on
random digit strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from functools import cache, cached_property
from typing import Any, Final


class Unsure(Enum):
    """``verdict``'s answer when phonenumbers itself must decide."""

    UNSURE = "unsure"


UNSURE: Final = Unsure.UNSURE

# phonenumbers' constants (phonenumberutil: _MIN_LENGTH_FOR_NSN, _MAX_LENGTH_FOR_NSN,
# _MAX_INPUT_STRING_LENGTH, _MAX_LENGTH_COUNTRY_CODE)
_MIN_NSN, _MAX_NSN, _MAX_INPUT, _MAX_CODE = 2, 17, 250, 3
# phonenumbers' ValidationResult, as far as parse and is_possible_number read it
_POSSIBLE, _LOCAL_ONLY, _TOO_SHORT, _INVALID_LENGTH, _TOO_LONG = range(5)

#: What the digits' fast path reads: ASCII digits, a plus, and the separators phonenumbers
#: skips as punctuation (a tab, a letter, another script's digit: phonenumbers decides).
_SHAPE = re.compile(r"[ ()./-]*\+?[0-9 ()./-]*")
_NOT_DIGITS = str.maketrans("", "", " ()./-+")


class _Plan:
    """One region's metadata as the fast path reads it: each pattern compiled when first
    needed (a number from abroad needs its country's general pattern and little else)."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.code: int = metadata.country_code
        self.transform: str | None = metadata.national_prefix_transform_rule
        general = metadata.general_desc
        self.general_lengths: tuple[int, ...] = tuple(general.possible_length)
        self.local_lengths: tuple[int, ...] = tuple(general.possible_length_local_only)
        self.general = _compiled(general.national_number_pattern)
        self.by_length: dict[int, re.Pattern[str] | None] = {}

    @cached_property
    def idd(self) -> re.Pattern[str]:
        return re.compile(self.metadata.international_prefix or "NonMatch")

    @cached_property
    def prefix(self) -> re.Pattern[str] | None:  # national_prefix_for_parsing
        return _compiled(self.metadata.national_prefix_for_parsing)

    @cached_property
    def leading(self) -> re.Pattern[str] | None:
        return _compiled(self.metadata.leading_digits)

    @cached_property
    def types(self) -> tuple[tuple[tuple[int, ...], str], ...]:
        """(lengths, pattern) of each number type, in phonenumbers' ``_number_type_helper``'s
        order; mobile only when its pattern differs from the fixed lines'."""
        metadata = self.metadata
        descs = [
            metadata.premium_rate,
            metadata.toll_free,
            metadata.shared_cost,
            metadata.voip,
            metadata.personal_number,
            metadata.pager,
            metadata.uan,
            metadata.voicemail,
            metadata.fixed_line,
        ]
        if not metadata.same_mobile_and_fixed_line_pattern:
            descs.append(metadata.mobile)
        return tuple(
            (tuple(d.possible_length), d.national_number_pattern)
            for d in descs
            if d is not None and d.national_number_pattern
        )

    def matches_general(self, number: str) -> bool:
        """phonenumbers' ``_match_national_number(number, general_desc, False)``."""
        return self.general is not None and self.general.fullmatch(number) is not None

    def length(self, number: str) -> int:
        """phonenumbers' ``_test_number_length`` for an unknown type."""
        size, lengths = len(number), self.general_lengths
        if size in self.local_lengths:
            return _LOCAL_ONLY
        if lengths[0] == size:
            return _POSSIBLE
        if lengths[0] > size:
            return _TOO_SHORT
        if lengths[-1] < size:
            return _TOO_LONG
        return _POSSIBLE if size in lengths[1:] else _INVALID_LENGTH

    def strip_prefix(self, number: str) -> str:
        """phonenumbers' ``_maybe_strip_national_prefix_carrier_code``, the number only."""
        if not number or self.prefix is None:
            return number
        match = self.prefix.match(number)
        if not match:
            return number
        viable = self.matches_general(number)
        groups = match.groups()
        if not self.transform or groups[len(groups) - 1] is None:
            if viable and not self.matches_general(number[match.end() :]):
                return number
            return number[match.end() :]
        transformed = self.prefix.sub(self.transform, number, count=1)
        if viable and not self.matches_general(transformed):
            return number
        return transformed

    def has_type(self, number: str) -> bool:
        """phonenumbers' ``_number_type_helper(number, metadata) != UNKNOWN``: the general
        description, then any number type, each with its lengths and pattern (one
        alternation per length: it fully matches when one of its branches does)."""
        size = len(number)
        if self.general_lengths and size not in self.general_lengths:
            return False
        if not self.matches_general(number):
            return False
        try:
            types = self.by_length[size]
        except KeyError:
            branches = [p for lengths, p in self.types if not lengths or size in lengths]
            types = self.by_length[size] = _compiled("|".join(f"(?:{b})" for b in branches))
        return types is not None and types.fullmatch(number) is not None


def _compiled(pattern: str | None) -> re.Pattern[str] | None:
    return re.compile(pattern) if pattern else None


_PLANS: dict[int, _Plan] = {}


def _plan(metadata: Any) -> _Plan | None:
    """The plan of one metadata object (phonenumbers keeps one per region and non-geographic
    code, so a region reached by its name and by its country code shares it)."""
    if metadata is None:
        return None
    try:
        return _PLANS[id(metadata)]
    except KeyError:
        plan = _PLANS[id(metadata)] = _Plan(metadata)
        return plan


@cache
def _region(region: str) -> _Plan | None:
    from phonenumbers.phonemetadata import PhoneMetadata

    return _plan(PhoneMetadata.metadata_for_region(region.upper(), None))


@cache
def _for_code(code: int, region: str) -> _Plan | None:
    """phonenumbers' ``metadata_for_region_or_calling_code``."""
    from phonenumbers.phonemetadata import PhoneMetadata

    return _plan(PhoneMetadata.metadata_for_region_or_calling_code(code, region.upper()))


@cache
def _regions() -> dict[int, tuple[str, ...]]:
    from phonenumbers import COUNTRY_CODE_TO_REGION_CODE

    return {code: tuple(regions) for code, regions in COUNTRY_CODE_TO_REGION_CODE.items()}


def _country_code(digits: str) -> tuple[int, str]:
    """phonenumbers' ``_extract_country_code``."""
    if not digits or digits[0] == "0":
        return 0, digits
    known = _regions()
    for size in range(1, min(len(digits), _MAX_CODE) + 1):
        code = int(digits[:size])
        if code in known:
            return code, digits[size:]
    return 0, digits


def _main(code: int) -> _Plan | None:
    return _for_code(code, _regions()[code][0])


def _parse(digits: str, region: str) -> tuple[int, str] | None:
    """phonenumbers' ``parse(text, region)`` of a number written without a plus, whose digits
    are ``digits``: its country code and national number, None where parse raises."""
    home = _region(region)
    if home is None:
        return None
    match = home.idd.match(digits)
    if match and digits[match.end() : match.end() + 1] != "0":  # dialled abroad
        rest = digits[match.end() :]
        if len(rest) <= _MIN_NSN:
            return None  # too short after the international prefix
        code, national = _country_code(rest)
        if code == 0:
            return None  # no country code after it
        return _national(code, national)
    written = str(home.code)
    if digits.startswith(written):  # the region's own country code, without its plus
        rest = home.strip_prefix(digits[len(written) :])
        if (not home.matches_general(digits) and home.matches_general(rest)) or (
            home.length(digits) == _TOO_LONG
        ):
            return _national(home.code, rest)
    return _national(home.code, digits, home)


def _national(code: int, national: str, plan: _Plan | None = None) -> tuple[int, str] | None:
    """The end of phonenumbers' ``parse``: the national prefix stripped where the lengths
    allow it (with the metadata of the code's main region, or the home region's), then the
    national number's own lengths."""
    plan = plan or _main(code)
    if plan is None or len(national) < _MIN_NSN:
        return None
    stripped = plan.strip_prefix(national)
    if plan.length(stripped) not in (_TOO_SHORT, _LOCAL_ONLY, _INVALID_LENGTH):
        national = stripped
    if len(national) > _MAX_NSN:
        return None
    return code, national


def _is_valid(code: int, national: str) -> bool:
    """phonenumbers' ``is_valid_number``: the region the number belongs to, then its types."""
    regions = _regions().get(code)
    if regions is None:
        return False
    owner: str | None = regions[0]
    if len(regions) > 1:
        owner = None
        for region in regions:
            plan = _region(region)
            if plan is None:
                continue
            if plan.leading is not None:
                if plan.leading.match(national):
                    owner = region
                    break
            elif plan.has_type(national):
                owner = region
                break
    if owner is None:
        return False
    plan = _for_code(code, owner)
    if plan is None or (owner != "001" and code != _region_code(owner)):
        return False
    return plan.has_type(national)


def _region_code(region: str) -> int:
    plan = _region(region)
    if plan is None:
        raise ValueError(f"invalid region code {region}")  # as phonenumbers raises
    return plan.code


def _is_possible(code: int, national: str) -> bool:
    """phonenumbers' ``is_possible_number``: the lengths of the country code's main region."""
    plan = _main(code)
    return plan is not None and plan.length(national) in (_POSSIBLE, _LOCAL_ONLY)


def verdict(text: str, regions: tuple[str | None, ...]) -> bool | Unsure | None:
    """What ``phonenumbers`` says of ``text`` tried in ``regions`` in turn (None: the number's
    own plus and country code): True for the first region it is valid in, None if it is only
    possible in one, False otherwise; ``UNSURE`` for a text phonenumbers must read itself."""
    if len(text) > _MAX_INPUT or not _SHAPE.fullmatch(text):
        return UNSURE
    digits = text.translate(_NOT_DIGITS)
    plus = "+" in text
    if len(digits) < 3:
        return UNSURE
    judged: Iterable[tuple[int, str] | None]
    if plus:  # the country code follows the plus, whichever region is tried
        code, national = _country_code(digits)
        if code == 0:
            return UNSURE  # phonenumbers tries again after the plus
        parsed = _national(code, national)
        judged = (parsed,) if regions else ()
    elif None in regions:
        return UNSURE  # no region to read it in
    else:
        judged = (_parse(digits, region) for region in regions if region is not None)
    possible = False
    for number in judged:
        if number is None:
            continue
        if _is_valid(*number):
            return True
        possible = possible or _is_possible(*number)
    return None if possible else False
