"""Generalization hierarchies: value -> its generalizations, level by level.

A hierarchy is a table with one row per leaf value: ``value; level 1; ...; top`` — ARX's CSV
format (``;``-separated, no header). Inside, it is integer arrays: ``maps[level][leaf]`` is the
code of the leaf's generalization at that level, so generalizing a coded column is one gather.
"""

from __future__ import annotations

import csv
import io
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from veil.exceptions import InputError, ParameterError

__all__ = ["Hierarchy", "load_hierarchies", "load_hierarchy"]


@dataclass
class Hierarchy:
    """One column's hierarchy. ``table[i][l]`` is leaf ``i`` generalized to level ``l``."""

    name: str
    table: list[list[str]]
    _maps: np.ndarray | None = field(default=None, repr=False)
    _labels: list[list[str]] | None = field(default=None, repr=False)

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
                f"{dupes[:3]}); the first row of each is used",
                stacklevel=2,
            )
            self.table = list(seen.values())

    @property
    def height(self) -> int:
        """Number of levels, 0 (the value itself) included."""
        return len(self.table[0])

    @property
    def leaves(self) -> list[str]:
        return [row[0] for row in self.table]

    @property
    def domain_size(self) -> int:
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

    def shares(self) -> np.ndarray:
        """``shares[level, leaf]``: the fraction of the domain the leaf's generalization covers."""
        out = np.empty((self.height, self.domain_size))
        for level in range(self.height):
            counts = np.bincount(self.maps[level])
            out[level] = counts[self.maps[level]] / self.domain_size
        return out

    def to_csv(self) -> str:
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=";", lineterminator="\n").writerows(self.table)
        return buffer.getvalue()

    @classmethod
    def from_mapping(cls, name: str, mapping: Mapping[str, Sequence[str]]) -> Hierarchy:
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
