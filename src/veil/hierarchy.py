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
import warnings
from collections.abc import Mapping, Sequence
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
    "date_hierarchy",
    "interval_hierarchy",
    "load_hierarchies",
    "load_hierarchy",
    "masking_hierarchy",
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
        index = {leaf: i for i, leaf in enumerate(self.leaves)}
        texts = values.astype(str).where(values.notna(), "NULL")
        uniques = texts.unique()
        missing = [u for u in uniques if u not in index]
        if missing:
            shown = ", ".join(map(repr, sorted(missing)[:10]))
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise InputError(
                f"hierarchy of {self.name!r} does not cover {len(missing)} value(s) in the data: "
                f"{shown}{more}; add a row for each to the hierarchy"
            )
        codes, uniq = pd.factorize(texts)
        lookup = np.array([index[u] for u in uniq], dtype=np.int64)
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
    """Dates -> month -> year -> decade -> ``*``. Text dates keep their text as the leaf and
    are read as ``read(dates=[name])`` reads them (a value that is no date stops with the fix)."""
    stamps = as_dates(values, name)
    stamp_of = dict(zip(values.astype(str), stamps, strict=True))
    rows = []
    for text in _text(values):
        if text == "NULL":
            rows.append(["NULL"] * 4 + ["*"])
            continue
        stamp = stamp_of[text]
        rows.append([text, f"{stamp:%Y-%m}", f"{stamp:%Y}", f"{stamp.year // 10 * 10}s", "*"])
    return Hierarchy(name, rows)


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


def auto_hierarchy(name: str, values: pd.Series) -> Hierarchy:
    """A sensible hierarchy when none is given: intervals for numbers, month/year/decade for
    dates, right-to-left masking for same-length codes, otherwise value -> ``*``."""
    distinct = values.nunique(dropna=True)
    if pd.api.types.is_datetime64_any_dtype(values) or (
        not pd.api.types.is_numeric_dtype(values)
        and mostly_dates(values.dropna().drop_duplicates().head(500)) is not None
    ):
        return date_hierarchy(name, values)
    if (
        pd.api.types.is_numeric_dtype(values)
        and not pd.api.types.is_bool_dtype(values)
        and distinct > 10
    ):
        return interval_hierarchy(name, values)
    texts = values.dropna().astype(str)
    lengths = texts.str.len().unique()
    if distinct > 10 and len(lengths) == 1 and lengths[0] >= 3:
        return masking_hierarchy(name, values)
    return Hierarchy(name, [[t, "*"] for t in _text(values)])


def hierarchy_from_spec(
    name: str, spec: object, values: pd.Series, *, base: Path | None = None
) -> Hierarchy:
    """A hierarchy from a policy entry: a CSV path, ``{groups: {group: [values]}}``,
    ``{intervals: [5, 10, 20]}``, ``{mask: true}``, ``{dates: true}`` or ``auto``."""
    if isinstance(spec, str) and spec != "auto":
        path = Path(spec)
        return load_hierarchy(
            path if path.is_absolute() or base is None else base / path, name=name
        )
    if spec == "auto" or spec is None:
        return auto_hierarchy(name, values)
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
