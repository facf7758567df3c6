"""Hierarchies built from what the scan knows of values: places up through the gazetteers
(county -> former province -> country), marital statuses to partnered or not, levels of
education in their order; anything else by ``veil.hierarchy.auto_hierarchy`` (dates, numbers,
coded and rare categories). The search and ``veil hierarchy`` build every automatic hierarchy
here, as ARX's hierarchy wizard does, so that each has middle levels to stop at."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from veil.hierarchy import (
    OTHER,
    Hierarchy,
    _counts,
    _distinct_levels,
    _text,
    auto_hierarchy,
    ordered_hierarchy,
    two_groups,
)
from veil.scan.recognizers import vocabulary
from veil.scan.recognizers.countries import place_levels
from veil.scan.recognizers.normalize import normalize

__all__ = ["EDUCATION_ORDER", "PARTNERED", "build_hierarchy"]

#: A hierarchy from values applies when this share of the distinct values is known.
KNOWN = 0.8

#: Marital statuses that live with a partner; the rest are "Not partnered".
PARTNERED = frozenset(
    {
        "married",
        "registered partnership",
        "domestic partnership",
        "civil partnership",
        "partnered",
        "cohabiting",
        "de facto",
        "living together",
        "married-civ-spouse",
        "married-spouse-absent",
        "married-af-spouse",
        "ameoa",
        "ameolewa",
    }
)

#: Levels of education, lowest first, as surveys and registers write them (normalized):
#: UCI adult's, the US CPS's, Kenya's KCPE/KCSE, degrees.
EDUCATION_ORDER = (
    "none",
    "no schooling",
    "preschool",
    "1st-4th",
    "5th-6th",
    "primary",
    "kcpe",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "< hs grad",
    "less than high school",
    "12th",
    "secondary",
    "kcse",
    "hs-grad",
    "hs grad",
    "high school",
    "highschool",
    "ged",
    "some-college",
    "some college",
    "certificate",
    "diploma",
    "assoc-voc",
    "assoc-acdm",
    "associate",
    "college",
    "undergraduate",
    "degree",
    "bachelor",
    "bachelors",
    "college grad",
    "prof-school",
    "postgraduate",
    "master",
    "masters",
    "advanced degree",
    "doctorate",
    "phd",
)
_EDUCATION_RANK = {level: i for i, level in enumerate(EDUCATION_ORDER)}


def _known_share(texts: list[str], known: Callable[[str], bool]) -> float:
    return sum(1 for t in texts if known(t)) / len(texts) if texts else 0.0


def _places(
    name: str, values: pd.Series, texts: list[str], weights: np.ndarray | None
) -> Hierarchy | None:
    levels = {t: place_levels(t) for t in texts if t != "NULL"}
    present = [t for t in texts if t != "NULL"]
    if len(present) < 2 or _known_share(present, lambda t: levels[t] is not None) < KNOWN:
        return None
    rows = []
    for text in texts:
        found = levels.get(text)
        region = "NULL" if text == "NULL" else found[0] if found is not None else OTHER
        rows.append([text, region])
    two_groups(rows, _counts(values, weights))  # regions holding half the rows, and Other
    for row, text in zip(rows, texts, strict=True):
        found = levels.get(text)
        row += ["NULL" if text == "NULL" else found[1] if found else OTHER, "*"]
    return Hierarchy(name, _distinct_levels(rows))


def _marital(name: str, texts: list[str]) -> Hierarchy | None:
    present = [t for t in texts if t != "NULL"]
    words = vocabulary.MARITAL_STATUS
    if len(present) < 3 or _known_share(present, lambda t: normalize(t) in words) < KNOWN:
        return None
    rows = [
        [
            t,
            "NULL"
            if t == "NULL"
            else "Partnered"
            if normalize(t) in PARTNERED
            else "Not partnered",
            "*",
        ]
        for t in texts
    ]
    return Hierarchy(name, rows)


def _education(name: str, values: pd.Series, texts: list[str]) -> Hierarchy | None:
    present = [t for t in texts if t != "NULL"]
    if len(present) < 3:
        return None
    ranked = [t for t in present if normalize(t) in _EDUCATION_RANK]
    if len(ranked) < 3 or len(ranked) / len(present) < KNOWN:
        return None
    order = sorted(ranked, key=lambda t: _EDUCATION_RANK[normalize(t)])
    return ordered_hierarchy(name, values, order)


def build_hierarchy(
    name: str, values: pd.Series, *, weights: np.ndarray | None = None
) -> Hierarchy:
    """The hierarchy of a quasi-identifier with no hierarchy given: places, marital statuses
    and education levels by what veil knows of them, anything else by ``auto_hierarchy``.
    ``weights``: each value stands for that many rows (the counts of a table read in batches).

    >>> import pandas as pd
    >>> from veil.scan.hierarchies import build_hierarchy
    >>> counties = pd.Series(["Nyeri", "Kiambu", "Kisumu", "Siaya", "Mombasa"])
    >>> build_hierarchy("county", counties).table[0]
    ['Kiambu', 'Central', 'Central / Nyanza', '*']
    """
    if not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_datetime64_any_dtype(
        values
    ):
        texts = _text(values)
        for found in (
            _places(name, values, texts, weights),
            _marital(name, texts),
            _education(name, values, texts),
        ):
            if found is not None:
                return found
    return auto_hierarchy(name, values, weights=weights)
