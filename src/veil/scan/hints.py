"""What a column's name says: English and Swahili words per entity.

Names are split into lower-case tokens (``barua_pepe``, ``EmailAddress``, ``e-mail`` ->
``barua pepe``, ``email address``, ``e mail``); a hint matches when its tokens appear in a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEY = "KEY"  # a unique key: an identifier without a named entity

#: Column-name words of a unique key (an identifier without a named entity); every entity's
#: words are declared with it (``Entity.hints``, in its recognizer's module).
KEY_HINTS: tuple[str, ...] = (
    "id",
    "uuid",
    "guid",
    "customer id",
    "client id",
    "member id",
    "patient id",
    "employee id",
    "employee number",
    "account number",
    "account no",
    "policy number",
    "policy no",
    "record id",
    "user id",
    "customer number",
    "membership number",
    "nhs number",
    "mrn",
    "medical record number",
    "ref",
    "reference",
    "key",
    "identifier",
    "number",
    "no",
    "nummer",
    "nr",
    "versichertennummer",
    "kennung",
    "numero",
    "identifiant",
)

# Words that make "name" (and friends) not a person's name.
NOT_A_PERSON = frozenset(
    {
        "company",
        "product",
        "file",
        "business",
        "brand",
        "item",
        "street",
        "city",
        "county",
        "town",
        "host",
        "domain",
        "bank",
        "branch",
        "school",
        "hospital",
        "facility",
        "dept",
        "department",
        "category",
        "tier",
        "plan",
        "policy",
        "column",
        "table",
        "user",
        "user name",
        "username",
        "place",
        "country",
        "drug",
        "medicine",
        "scheme",
    }
)


# Words that make a name about something other than the person: "JobSatisfaction",
# "Vehicle_Age", "PercentSalaryHike", "MonthlyRate". They stop partial matches only; an exact
# name ("age") always counts.
NOT_ABOUT_THE_PERSON = frozenset(
    {
        "level",
        "satisfaction",
        "involvement",
        "rating",
        "score",
        "count",
        "rate",
        "ratio",
        "percent",
        "pct",
        "hike",
        "increase",
        "change",
        "growth",
        "vehicle",
        "car",
        "product",
        "company",
        "plan",
        "flag",
        "index",
        "rank",
        "average",
        "avg",
        "mean",
        "median",
        "total",
        "sum",
        "limit",
        "premium",
        "target",
        "balance",
        "involved",
        "distance",
        "years",
        "since",
        "last",
        "hours",
        "standard",
        "options",
        "option",
        "stock",
        "training",
        "times",
    }
)


def is_opaque(name: str) -> bool:
    """``c00``, ``col_3``, ``x1``, ``V12``: names that say nothing about the column."""
    words = tokens(name)
    filler = {"col", "column", "field", "var", "feature", "attr", "attribute", "unnamed"}
    return not words or all(w in filler or re.fullmatch(r"[a-z]{0,4}\d+|[a-z]", w) for w in words)


def tokens(name: str) -> list[str]:
    """``"EmailAddress"`` -> ``["email", "address"]``; ``"barua_pepe"`` -> ``["barua", "pepe"]``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [t for t in re.split(r"[^0-9A-Za-z]+", spaced.lower()) if t]


def _hints() -> dict[str, tuple[str, ...]]:
    """Each entity's column-name words, as its recognizers declare them, and a key's."""
    from veil.scan.recognizers import ENTITY_INFO

    return {**{name: e.hints for name, e in ENTITY_INFO.items()}, KEY: KEY_HINTS}


@dataclass(frozen=True)
class NameHint:
    """What a column's name suggests: an entity, how strongly, and the words that said it."""

    entity: str
    score: float
    phrase: str


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def read_name(name: str) -> list[NameHint]:
    """Every entity the column name hints at, strongest first.

    An exact match scores 0.9; a phrase inside a longer name 0.75, more for longer phrases.
    """
    words = tokens(name)
    if not words:
        return []
    joined = "".join(words)
    found: dict[str, NameHint] = {}
    for entity, phrases in _hints().items():
        for phrase in phrases:
            needle = phrase.split()
            if words == needle or joined == phrase.replace(" ", ""):
                score = 0.9
            elif _contains(words, needle) and not (set(words) & NOT_ABOUT_THE_PERSON):
                score = min(0.85, 0.7 + 0.05 * len(needle))
            else:
                continue
            if entity == "PERSON" and (set(words) & NOT_A_PERSON):
                continue
            if entity not in found or found[entity].score < score:
                found[entity] = NameHint(entity, score, phrase)
    return sorted(found.values(), key=lambda h: -h.score)


def names_one_of(name: str, phrases: tuple[str, ...]) -> str | None:
    """The phrase of ``phrases`` that column ``name`` is, or contains as whole words (the
    longest), or None: ``names_one_of("ST_slope", ("slope",))`` -> ``"slope"``."""
    words = tokens(name)
    found = [p for p in phrases if _contains(words, p.split())]
    return max(found, key=len) if found else None
