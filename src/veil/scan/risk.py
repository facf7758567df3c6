"""Re-identification risk of a table from its quasi-identifiers: uniqueness and the column
combinations that single people out.

Columns are integer-coded once; a combination's classes come from a mixed-radix code and one
``bincount``, so many combinations of a million rows cost well under a second.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.schema import require_columns

_MAX_DENSE = 50_000_000  # largest code space counted with bincount; beyond, np.unique


@dataclass
class CodedColumns:
    """Columns as integer codes 0..cardinality-1 (missing values are a code of their own)."""

    names: list[str]
    codes: list[np.ndarray]
    cardinalities: list[int]

    @classmethod
    def of(cls, frame: pd.DataFrame, columns: Sequence[str]) -> CodedColumns:
        require_columns(frame, columns, where="quasi_identifiers")
        codes, cards = [], []
        for name in columns:
            values, uniques = pd.factorize(frame[name], use_na_sentinel=False)
            codes.append(values.astype(np.int64))
            cards.append(max(len(uniques), 1))
        return cls(list(columns), codes, cards)

    def combined(self, indices: Sequence[int]) -> tuple[np.ndarray, int]:
        """One code per row for the combination of the columns at ``indices``."""
        n = len(self.codes[0]) if self.codes else 0
        key = np.zeros(n, dtype=np.int64)
        space = 1
        for i in indices:
            if space * self.cardinalities[i] > 2**62:  # re-code to keep the radix small
                key, uniques = pd.factorize(key)
                space = len(uniques)
            key = key * self.cardinalities[i] + self.codes[i]
            space *= self.cardinalities[i]
        return key, space

    def class_sizes(self, indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(class index per row, size per class) for the combination at ``indices``."""
        key, space = self.combined(indices)
        if space <= _MAX_DENSE:
            counts = np.bincount(key, minlength=space)
            present = np.flatnonzero(counts)
            remap = np.empty(space, dtype=np.int64)
            remap[present] = np.arange(len(present))
            return remap[key], counts[present]
        _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
        return inverse.reshape(-1), counts


def class_sizes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Equivalence classes of ``frame`` over ``columns``: (class per row, size per class)."""
    if not len(columns):
        n = len(frame)
        return np.zeros(n, dtype=np.int64), np.array([n] if n else [], dtype=np.int64)
    coded = CodedColumns.of(frame, columns)
    return coded.class_sizes(range(len(columns)))


@dataclass(frozen=True)
class RiskSummary:
    rows: int
    quasi_identifiers: tuple[str, ...]
    unique_rows: int  # rows alone in their class on all quasi-identifiers
    k: int  # the smallest class
    classes: int
    most_identifying: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def uniqueness(self) -> float:
        return self.unique_rows / self.rows if self.rows else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "quasi_identifiers": list(self.quasi_identifiers),
            "unique_rows": self.unique_rows,
            "uniqueness": self.uniqueness,
            "k": self.k,
            "classes": self.classes,
            "most_identifying": [dict(c) for c in self.most_identifying],
        }


def assess(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], *, top: int = 5, max_size: int = 3
) -> RiskSummary:
    """Uniqueness on all ``quasi_identifiers`` and the ``top`` smallest combinations (up to
    ``max_size`` columns) that make the most rows unique."""
    rows = len(frame)
    qis = list(quasi_identifiers)
    if not qis or rows == 0:
        return RiskSummary(rows, tuple(qis), 0, rows, 1 if rows else 0)
    coded = CodedColumns.of(frame, qis)
    _, sizes = coded.class_sizes(range(len(qis)))
    unique_rows = int((sizes == 1).sum())
    combos: list[dict[str, Any]] = []
    largest = min(max_size if len(qis) <= 12 else 2, len(qis))
    for size in range(1, largest + 1):
        for indices in itertools.combinations(range(len(qis)), size):
            _, combo_sizes = coded.class_sizes(indices)
            uniques = int((combo_sizes == 1).sum())
            combos.append(
                {
                    "columns": [qis[i] for i in indices],
                    "unique_rows": uniques,
                    "uniqueness": uniques / rows,
                    "k": int(combo_sizes.min()),
                }
            )
    combos.sort(key=lambda c: (-c["unique_rows"], len(c["columns"])))
    return RiskSummary(
        rows=rows,
        quasi_identifiers=tuple(qis),
        unique_rows=unique_rows,
        k=int(sizes.min()),
        classes=len(sizes),
        most_identifying=tuple(combos[:top]),
    )
