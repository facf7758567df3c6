"""Generalization hierarchies: value -> its generalizations, level by level.

A hierarchy is a table with one row per leaf value: ``value; level 1; ...; top`` — ARX's CSV
format (``;``-separated, no header). Inside, it is integer arrays: ``maps[level][leaf]`` is the
code of the leaf's generalization at that level, so generalizing a coded column is one gather.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from veil.exceptions import InputError, ParameterError
from veil.io._dates import as_dates, mostly_dates

__all__ = [
    "Hierarchy",
    "auto_hierarchy",
    "category_hierarchy",
    "coded_order",
    "date_hierarchy",
    "frequency_hierarchy",
    "interval_hierarchy",
    "load_hierarchies",
    "load_hierarchy",
    "masking_hierarchy",
    "numeric_hierarchy",
    "ordered_hierarchy",
    "two_groups",
]


@dataclass
class Hierarchy:
    """One column's hierarchy. ``table[i][l]`` is leaf ``i`` generalized to level ``l``."""

    name: str
    table: list[list[str]]
    _maps: np.ndarray | None = field(default=None, repr=False)
    _labels: list[list[str]] | None = field(default=None, repr=False)
    # every row as the file lists it, duplicates included: ARX's Loss measures domain shares
    # on those (a value listed twice counts twice), and so does veil's, to report ARX's loss
    _listed: list[list[str]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.table:
            raise InputError(f"hierarchy of {self.name!r} is empty; it needs one row per value")
        widths = {len(row) for row in self.table}
        if len(widths) != 1:
            raise InputError(
                f"hierarchy of {self.name!r} has rows of different widths {sorted(widths)}; "
                "every row needs the value and one entry per level"
            )
        seen: dict[str, list[str]] = {}
        for row in self.table:
            seen.setdefault(row[0], row)
        if len(seen) != len(self.table):
            # some published hierarchies (ARX's adult_full age) list a value twice; the first
            # row wins, as a lookup table would have it, and the user is told
            dupes = sorted(v for v in seen if sum(r[0] == v for r in self.table) > 1)
            warnings.warn(
                f"hierarchy of {self.name!r} lists {len(dupes)} value(s) twice (e.g. "
                f"{dupes[:3]}); the first row of each generalizes it (the Loss metric counts "
                "every listed row, as ARX does)",
                stacklevel=2,
            )
            self._listed = [list(row) for row in self.table]
            self.table = list(seen.values())

    @property
    def height(self) -> int:
        """Number of levels, 0 (the value itself) included."""
        return len(self.table[0])

    @property
    def leaves(self) -> list[str]:
        """The most specific values (level 0), in code order."""
        return [row[0] for row in self.table]

    @property
    def domain_size(self) -> int:
        """How many distinct values each level has, most specific first."""
        return len(self.table)

    def _build(self) -> None:
        maps = np.empty((self.height, self.domain_size), dtype=np.int64)
        labels = []
        for level in range(self.height):
            codes, uniques = pd.factorize(pd.Series([row[level] for row in self.table]))
            maps[level] = codes
            labels.append([str(u) for u in uniques])
        self._maps, self._labels = maps, labels

    @property
    def maps(self) -> np.ndarray:
        """``maps[level, leaf]``: the code of the leaf's generalization at ``level``."""
        if self._maps is None:
            self._build()
        assert self._maps is not None
        return self._maps

    @property
    def labels(self) -> list[list[str]]:
        """``labels[level][code]``: the text of a generalized value."""
        if self._labels is None:
            self._build()
        assert self._labels is not None
        return self._labels

    def encode(self, values: pd.Series) -> np.ndarray:
        """The leaf index of every value; raises listing the values the hierarchy misses."""
        from veil.io._content import known_codes

        index = {leaf: i for i, leaf in enumerate(self.leaves)}
        # each distinct value written as text once (as ``values.astype(str)`` writes it), a
        # missing value as "NULL"; then every row's leaf through its value's code. A text
        # column's codes the pass before made (or its Parquet dictionary) are taken as they
        # are: they may list a text no row holds, which is then not asked of the hierarchy
        known = known_codes(values, last=True)
        if known is not None:
            codes, listed = known
            texts = [str(t) for t in listed]
            held = np.bincount(codes[codes >= 0], minlength=len(texts)) > 0
        else:
            codes, distinct = pd.factorize(values, use_na_sentinel=True)
            texts = [str(t) for t in pd.Index(distinct, dtype=values.dtype).astype(str)]
            held = np.ones(len(texts), dtype=bool)
        if (codes < 0).any():
            codes = np.where(codes < 0, len(texts), codes)
            texts.append("NULL")
            held = np.append(held, True)
        missing = list(
            dict.fromkeys(
                u for u, h in zip(texts, held.tolist(), strict=True) if h and u not in index
            )
        )
        if missing:
            shown = ", ".join(map(repr, sorted(missing)[:10]))
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise InputError(
                f"hierarchy of {self.name!r} does not cover {len(missing)} value(s) in the data: "
                f"{shown}{more}; add a row for each to the hierarchy"
            )
        lookup = np.array([index.get(u, -1) for u in texts], dtype=np.int64)
        return lookup[codes]

    @property
    def listed(self) -> int:
        """How many rows the hierarchy lists, a value listed twice counted twice (ARX's domain
        size for its Loss metric); ``domain_size`` without duplicates otherwise."""
        return len(self._listed) if self._listed is not None else self.domain_size

    def shares(self) -> np.ndarray:
        """``shares[level, leaf]``: the fraction of the listed rows the leaf's generalization
        covers (ARX's materialized domain share)."""
        out = np.empty((self.height, self.domain_size))
        if self._listed is None:
            for level in range(self.height):
                counts = np.bincount(self.maps[level])
                out[level] = counts[self.maps[level]] / self.domain_size
            return out
        for level in range(self.height):
            counted: dict[str, int] = {}
            for row in self._listed:
                counted[row[level]] = counted.get(row[level], 0) + 1
            out[level] = [counted[row[level]] / len(self._listed) for row in self.table]
        return out

    def up_to(self, level: int) -> Hierarchy:
        """The hierarchy with no level above ``level`` (ARX's maximum generalization level of
        an attribute): the search then never generalizes further."""
        if level >= self.height - 1:
            return self
        return Hierarchy(self.name, [row[: level + 1] for row in self.table])

    def to_csv(self) -> str:
        """The hierarchy as ARX's CSV (one row per leaf, one column per level, ``;``-separated)."""
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=";", lineterminator="\n").writerows(self.table)
        return buffer.getvalue()

    @classmethod
    def from_mapping(cls, name: str, mapping: Mapping[str, Sequence[str]]) -> Hierarchy:
        """A hierarchy from ``{leaf: [level 1, level 2, ...]}``, most specific level first.

        >>> from veil.hierarchy import Hierarchy
        >>> h = Hierarchy.from_mapping("county", {"Nyeri": ["Central"], "Kisumu": ["Nyanza"]})
        >>> h.height, h.labels[1]
        (2, ['Central', 'Nyanza'])
        """
        return cls(name, [[str(k), *map(str, v)] for k, v in mapping.items()])


def load_hierarchy(path: str | os.PathLike[str], *, name: str | None = None) -> Hierarchy:
    """Read an ARX-format hierarchy CSV (``;``-separated, no header)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError as err:
        raise InputError(f"{p}: no such hierarchy file") from err
    except UnicodeDecodeError as err:
        raise InputError(f"{p}: hierarchy files must be UTF-8 text ({err})") from err
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=";") if row]
    return Hierarchy(name or p.stem, rows)


def load_hierarchies(
    directory: str | os.PathLike[str], stem: str, *, columns: Sequence[str] | None = None
) -> dict[str, Hierarchy]:
    """Hierarchies named ``<stem>_hierarchy_<column>.csv`` in ``directory`` (ARX's convention)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ParameterError(f"hierarchies must be a folder, got {str(folder)!r}")
    prefix = f"{stem}_hierarchy_"
    found = {}
    for path in sorted(folder.glob(f"{prefix}*.csv")):
        column = path.stem[len(prefix) :]
        if columns is None or column in columns:
            found[column] = load_hierarchy(path, name=column)
    if not found:
        raise InputError(
            f"{folder}: no hierarchy files named {prefix}<column>.csv; name them after the data "
            f"file's stem {stem!r}"
        )
    return found


def load_hierarchy_dir(directory: str | os.PathLike[str]) -> dict[str, Hierarchy]:
    """Every hierarchy in a folder: ``<stem>_hierarchy_<column>.csv`` (ARX) or ``<column>.csv``."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ParameterError(f"hierarchies must be a folder, got {str(folder)!r}")
    found = {}
    for path in sorted(folder.glob("*.csv")):
        column = path.stem.split("_hierarchy_", 1)[1] if "_hierarchy_" in path.stem else path.stem
        found[column] = load_hierarchy(path, name=column)
    return found


# -- builders ------------------------------------------------------------------------------


def _text(values: pd.Series) -> list[str]:
    """Distinct values as the text ``Hierarchy.encode`` compares them by."""
    texts = values.dropna().astype(str).unique().tolist()
    if values.isna().any():
        texts.append("NULL")
    return sorted(texts, key=_natural)


def _natural(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def interval_hierarchy(
    name: str, values: pd.Series, widths: Sequence[float] | None = None
) -> Hierarchy:
    """Numbers -> nested intervals ``[lo, hi)`` of growing ``widths`` -> ``*``.

    Without ``widths``, the first is a round number near a twentieth of the range and each
    next one doubles it, until one interval covers everything.
    """
    numbers = pd.to_numeric(values.dropna(), errors="coerce")
    if numbers.isna().any():
        raise ParameterError(f"column {name!r} must be numeric for an interval hierarchy")
    lo, hi = float(numbers.min()), float(numbers.max())
    if widths is None:
        span = max(hi - lo, 1.0)
        base = 10 ** math.floor(math.log10(span / 20)) if span >= 20 else 1.0
        width = next(m * base for m in (1, 2, 5, 10) if m * base >= span / 20)
        widths = []
        while not widths or widths[-1] * 2 <= span * 2:
            widths.append(width)
            if math.floor(lo / width) == math.floor(hi / width):
                break
            width *= 2
    for a, b in itertools.pairwise(widths):
        if b % a:
            raise ParameterError(
                f"widths must nest (each a multiple of the previous), got {list(widths)}"
            )
    rows = []
    for text in _text(values):
        if text == "NULL":
            rows.append([text] + ["NULL"] * len(widths) + ["*"])
            continue
        x = float(text)
        row = [text]
        for w in widths:
            start = math.floor(x / w) * w
            row.append(f"[{_fmt(start)}, {_fmt(start + w)})")
        rows.append([*row, "*"])
    return Hierarchy(name, rows)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def date_hierarchy(name: str, values: pd.Series) -> Hierarchy:
    """Dates -> day -> month -> quarter -> year -> 5 years -> decade -> before or from a
    decade -> ``*`` (the day only for timestamps: a date is its own day). Text dates keep
    their text as the leaf and are read as ``read(dates=[name])`` reads them (a value that is
    no date stops with the fix)."""
    stamps = as_dates(values, name)
    stamp_of = dict(zip(values.astype(str), stamps, strict=True))
    timed = bool((stamps.dropna() != stamps.dropna().dt.normalize()).any())
    rows = []
    for text in _text(values):
        if text == "NULL":
            rows.append(["NULL"] * (7 if timed else 6))
            continue
        stamp = stamp_of[text]
        year = stamp.year
        day = [f"{stamp:%Y-%m-%d}"] if timed else []
        rows.append(
            [
                text,
                *day,
                f"{stamp:%Y-%m}",
                f"{year}-Q{(stamp.month - 1) // 3 + 1}",
                f"{year}",
                f"{year // 5 * 5}-{year // 5 * 5 + 4}",
                f"{year // 10 * 10}s",
            ]
        )
    # two halves before *: before and from the decade nearest the median (a decade lies on
    # one side), so the search can keep a date with just two values
    years = stamps.dropna().dt.year
    split = int(round(float(years.median()) / 10) * 10) if len(years) else 0
    for row, text in zip(rows, _text(values), strict=True):
        stamp = stamp_of.get(text)
        if text == "NULL" or stamp is None or pd.isna(stamp):
            row += ["NULL", "*"]
        else:
            row += [f"before {split}" if stamp.year < split else f"{split} or later", "*"]
    return Hierarchy(name, _distinct_levels(rows))


def masking_hierarchy(name: str, values: pd.Series, *, char: str = "*") -> Hierarchy:
    """Codes -> the same with 1, 2, ... trailing characters masked (postcodes, IDs) -> ``*``."""
    texts = _text(values)
    width = max(len(t) for t in texts)
    rows = []
    for text in texts:
        padded = text.ljust(width)
        row = [text] + [padded[: width - i] + char * i for i in range(1, width)]
        rows.append([*row, "*"])
    return Hierarchy(name, rows)


def category_hierarchy(
    name: str, values: pd.Series, groups: Mapping[str, Sequence[str]]
) -> Hierarchy:
    """Categories -> their group (``{group: [values]}``) -> ``*``; values in no group are listed."""
    # a missing value is "NULL", as encode() calls it (YAML reads a bare NULL as null)
    group_of = {
        "NULL" if v is None else str(v): str(g) for g, members in groups.items() for v in members
    }
    texts = _text(values)
    missing = [t for t in texts if t not in group_of]
    if missing:
        raise InputError(f"the groups for {name!r} do not cover {missing[:10]}; add them")
    return Hierarchy(name, [[t, group_of[t], "*"] for t in texts])


def _counts(values: pd.Series, weights: np.ndarray | None) -> pd.Series:
    """How many rows hold each distinct text (``weights``: each value stands for that many)."""
    texts = values.astype(str).where(values.notna(), "NULL")
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
    return pd.Series(w, index=texts.to_numpy()).groupby(level=0).sum()


def _nice(x: float) -> float:
    """The round width (1, 2 or 5 times a power of ten) at or above ``x``."""
    base = 10.0 ** math.floor(math.log10(x))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= x * (1 - 1e-9))


def _weighted_quantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    order = np.argsort(x, kind="stable")
    cumulative = np.cumsum(w[order])
    return float(x[order][min(np.searchsorted(cumulative, q * cumulative[-1]), len(x) - 1)])


#: The share of the rows at each tail that numbers' hierarchies top- and bottom-code.
TAIL = 0.01


def numeric_hierarchy(
    name: str, values: pd.Series, *, weights: np.ndarray | None = None, tail: float = TAIL
) -> Hierarchy:
    """Numbers -> aligned intervals of round widths in several levels (each width 2 or 5 times
    the one before, so every interval lies in one of the next level), the rarest ``tail`` of
    the rows at each end top- and bottom-coded at every level (``< 20``, ``>= 75``) -> ``*``.
    As ARX's interval wizard builds them: age 37 -> [35, 40) -> [30, 40) -> [0, 50) -> *.
    ``weights``: each value stands for that many rows (a table read in batches)."""
    counts = _counts(values, weights)
    present = counts.drop("NULL", errors="ignore")
    numbers = pd.to_numeric(pd.Series(present.index), errors="coerce").to_numpy(dtype=float)
    if np.isnan(numbers).any():
        raise ParameterError(f"column {name!r} must be numeric for an interval hierarchy")
    if not len(numbers):
        return Hierarchy(name, [[t, "*"] for t in counts.index])
    w = present.to_numpy(dtype=float)
    integral = bool(np.all(numbers == np.round(numbers)))
    low, high = _weighted_quantile(numbers, w, tail), _weighted_quantile(numbers, w, 1 - tail)
    if high <= low:
        low, high = float(numbers.min()), float(numbers.max())
    span = max(high - low, 1.0 if integral else abs(high) * 1e-6 or 1.0)
    width = max(_nice(span / 20), 1.0) if integral else _nice(span / 20)
    digits = max(0, -math.floor(math.log10(width)) + 1)
    bottom = round(math.floor(low / width + 1e-9) * width, digits)
    top = round(math.floor(high / width + 1e-9) * width + width, digits)
    widths = [width]
    while math.floor(bottom / widths[-1] + 1e-9) != math.floor((top - width / 2) / widths[-1]):
        mantissa = round(widths[-1] / 10 ** math.floor(math.log10(widths[-1]) + 1e-9))
        widths.append(widths[-1] * (5 if mantissa == 2 else 2))
    if len(widths) > 1:
        widths.pop()  # one interval holding every value but the tails: as good as *
    # the last level before *: two halves at a multiple of the widest width near the median
    # (ARX's [0, 50), [50, 100)), so the search can keep a number with just two values
    # (at a multiple of the widest width that splits the rows between a fifth and four
    # fifths, else of the width that splits them most evenly; no level wider than it stays)
    median, total = _weighted_quantile(numbers, w, 0.5), float(w.sum())
    candidates = []
    for j in range(len(widths) - 1, -1, -1):
        cut = round(round(median / widths[j]) * widths[j], digits)
        if bottom < cut < top:
            share = float(w[numbers < cut].sum()) / total
            candidates.append(
                (not 0.2 <= share <= 0.8, abs(share - 0.5) if share else 1.0, -j, cut)
            )
    halves = bool(candidates)
    middle = 0.0
    if halves:
        first = min(candidates, key=lambda c: (c[0], c[1] if c[0] else 0.0, c[2]))
        middle, widths = first[3], widths[: -first[2] + 1]

    def label(x: float, w: float) -> str:
        if x < bottom:
            return f"< {_fmt(bottom)}"
        if x >= top:
            return f">= {_fmt(top)}"
        if integral and w == 1:
            return _fmt(x)
        start = round(math.floor(x / w + 1e-9) * w, digits)
        return f"[{_fmt(max(start, bottom))}, {_fmt(min(round(start + w, digits), top))})"

    rows = []
    for text in _text(values):
        if text == "NULL":
            rows.append(["NULL"] * (len(widths) + 1 + halves) + ["*"])
            continue
        x = float(text)
        half = [f"< {_fmt(middle)}" if x < middle else f">= {_fmt(middle)}"] if halves else []
        rows.append([text, *(label(x, w) for w in widths), *half, "*"])
    return Hierarchy(name, _distinct_levels(rows))


def _distinct_levels(rows: list[list[str]]) -> list[list[str]]:
    """``rows`` without the levels (after the leaf, before the top) that group the values as
    the level before does, or put them all in one group: a level that generalizes nothing, or
    is ``*`` under another name, only lengthens the search."""
    if not rows:
        return rows
    keep = [0]
    last = len(rows[0]) - 1
    for level in range(1, len(rows[0])):
        groups: dict[str, set[str]] = {row[keep[-1]]: set() for row in rows}
        for row in rows:
            groups[row[keep[-1]]].add(row[level])
        distinct = len({row[level] for row in rows})
        if level == last or 1 < distinct < len(groups):
            keep.append(level)
    return [[row[i] for i in keep] for row in rows]


def _label_of(members: Sequence[str], most: int = 3) -> str:
    shown = " / ".join(members[:most])
    return shown + (" / …" if len(members) > most else "")


def two_groups(rows: list[list[str]], counts: pd.Series) -> None:
    """Add to each row a level of two groups before its top: the most common groups of its
    last level that hold half the rows (named by the first of them: ``Nairobi / Central /
    …``) and ``Other``. Nested, since it merges whole groups of the level before; it lets the
    search keep a column with just two values rather than none."""
    held: dict[str, float] = {}
    for row in rows:
        held[row[-1]] = held.get(row[-1], 0.0) + float(counts.get(row[0], 0.0))
    total = sum(held.values())
    common: list[str] = []
    running = 0.0
    for group, rows_held in sorted(held.items(), key=lambda item: (-item[1], item[0])):
        if running >= total / 2:
            break
        if group not in {OTHER, "NULL"}:
            common.append(group)
            running += rows_held
    name, members = _label_of(common), set(common)
    for row in rows:
        row.append(row[-1] if row[-1] == "NULL" else name if row[-1] in members else OTHER)


def ordered_hierarchy(name: str, values: pd.Series, order: Sequence[str]) -> Hierarchy:
    """Ordered categories (education levels, ``1. < HS Grad``, ``2. HS Grad``...) merged in
    order: runs of 2, then 4, 8... neighbours (``1. < HS Grad to 2. HS Grad``) -> ``*``.
    ``order``: the values, lowest first; a value it does not list ("other") stays a group of
    its own until ``*``."""
    texts = _text(values)
    rank = {str(v): i for i, v in enumerate(order)}
    ordered = sorted((t for t in texts if t in rank), key=rank.__getitem__)
    position = {t: i for i, t in enumerate(ordered)}
    levels, size = [], 2
    while size < len(ordered):
        levels.append(size)
        size *= 2

    def run(text: str, size: int) -> str:
        if text not in position:
            return text
        start = position[text] // size * size
        members = ordered[start : start + size]
        return members[0] if len(members) == 1 else f"{members[0]} to {members[-1]}"

    rows = [[t, *(run(t, s) for s in levels), "*"] for t in texts]
    return Hierarchy(name, _distinct_levels(rows))


#: The shares of the rows that the most common categories keep, level by level (the rest
#: join ``Other``).
COVERAGE = (0.99, 0.95, 0.8)
OTHER = "Other"


def frequency_hierarchy(
    name: str,
    values: pd.Series,
    *,
    weights: np.ndarray | None = None,
    coverage: Sequence[float] = COVERAGE,
) -> Hierarchy:
    """Categories -> the most common ones that hold 99%, 95%, then 80% of the rows, the rest
    in ``Other`` (nested: each keeps a prefix of the same ranking), then two groups (those
    holding half the rows, and ``Other``) -> ``*``. A value that already says "other" is in
    that group from the first level."""
    counts = _counts(values, weights)
    texts = _text(values)
    ranked = sorted(texts, key=lambda t: (-float(counts.get(t, 0.0)), t))
    total = float(counts.sum()) or 1.0
    cumulative = np.cumsum([float(counts.get(t, 0.0)) for t in ranked]) / total
    rank_of = {t: i for i, t in enumerate(ranked)}
    rows = []
    for text in texts:
        rank = rank_of[text]
        before = cumulative[rank - 1] if rank else 0.0
        already = text.strip().casefold() in {"other", "others", "other/unknown"}
        rows.append([text, *(OTHER if already or before >= c else text for c in coverage)])
    two_groups(rows, counts)
    for row in rows:
        row.append("*")
    return Hierarchy(name, _distinct_levels(rows))


#: A category's code before its label, which orders it (R's ``1. < HS Grad``, ``(2) Male``).
_CODED_LABEL = re.compile(r"^\s*\(?(\d{1,2})[.)]\s+\S")


def coded_order(values: pd.Series) -> list[str] | None:
    """The distinct values in the order of the codes written before them (``1. Never
    Married``, ``2. Married``...), or None unless every value has one."""
    texts = [t for t in _text(values) if t != "NULL"]
    codes = [_CODED_LABEL.match(t) for t in texts]
    if len(texts) < 3 or not all(codes):
        return None
    return [
        t
        for _, t in sorted(
            (int(m.group(1)), t) for m, t in zip(codes, texts, strict=True) if m is not None
        )
    ]


def auto_hierarchy(name: str, values: pd.Series, *, weights: np.ndarray | None = None) -> Hierarchy:
    """A hierarchy with middle levels when none is given, from the values alone: dates by day,
    month, quarter, year, 5 years, decade; numbers by nested round intervals with their tails
    coded; coded categories (``1. ...``, ``2. ...``) merged in their order; same-length codes
    masked right to left; other categories by frequency (rare ones into ``Other``); then
    ``*``. ``veil.scan.hierarchies`` adds what the scan knows (places, marital status,
    education levels)."""
    distinct = values.nunique(dropna=True)
    if pd.api.types.is_datetime64_any_dtype(values) or (
        not pd.api.types.is_numeric_dtype(values)
        and mostly_dates(values.dropna().drop_duplicates().head(500)) is not None
    ):
        return date_hierarchy(name, values)
    if (
        pd.api.types.is_numeric_dtype(values)
        and not pd.api.types.is_bool_dtype(values)
        and distinct > 2
    ):
        return numeric_hierarchy(name, values, weights=weights)
    order = coded_order(values)
    if order is not None:
        return ordered_hierarchy(name, values, order)
    texts = values.dropna().astype(str)
    lengths = texts.str.len().unique()
    if distinct > 10 and len(lengths) == 1 and lengths[0] >= 3 and texts.str.isalnum().all():
        return masking_hierarchy(name, values)
    return frequency_hierarchy(name, values, weights=weights)


def hierarchy_from_spec(
    name: str,
    spec: object,
    values: pd.Series,
    *,
    base: Path | None = None,
    auto: Callable[[str, pd.Series], Hierarchy] = auto_hierarchy,
) -> Hierarchy:
    """A hierarchy from a policy entry: a CSV path, ``{groups: {group: [values]}}``,
    ``{intervals: [5, 10, 20]}``, ``{mask: true}``, ``{dates: true}`` or ``auto`` (built by
    ``auto``: the release passes the builder that knows places and levels of education)."""
    if isinstance(spec, str) and spec != "auto":
        path = Path(spec)
        return load_hierarchy(
            path if path.is_absolute() or base is None else base / path, name=name
        )
    if spec == "auto" or spec is None:
        return auto(name, values)
    if isinstance(spec, Mapping) and len(spec) == 1:
        ((kind, argument),) = spec.items()
        if kind == "groups" and isinstance(argument, Mapping):
            return category_hierarchy(name, values, argument)
        if kind == "intervals":
            widths = None if argument in (True, "auto") else [float(w) for w in argument]
            return interval_hierarchy(name, values, widths)
        if kind == "mask" and argument:
            return masking_hierarchy(name, values)
        if kind == "dates" and argument:
            return date_hierarchy(name, values)
    raise ParameterError(
        f"the hierarchy for {name!r} must be a CSV path, auto, or one of {{groups: ...}}, "
        f"{{intervals: [...]}}, {{mask: true}}, {{dates: true}}, got {spec!r}"
    )
