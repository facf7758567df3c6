"""Re-identification risk of a table from its quasi-identifiers: uniqueness and the column
combinations that single people out.

Columns are integer-coded once; a combination's classes come from a mixed-radix code and one
``bincount``, so many combinations of a million rows cost well under a second.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil._html import Shown
from veil.frequency import CodedColumns
from veil.risk.population import PopulationRisk, beyond, population_risk


@dataclass(frozen=True)
class RiskSummary(Shown):
    """Uniqueness of the rows on the quasi-identifiers and the column combinations that single
    people out."""

    rows: int
    quasi_identifiers: tuple[str, ...]
    unique_rows: int  # rows alone in their class on all quasi-identifiers
    k: int  # the smallest class
    classes: int
    most_identifying: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    population: PopulationRisk | None = None  # when the table is a sample of a known population

    @property
    def uniqueness(self) -> float:
        """The share of records unique on all the quasi-identifiers together."""
        return self.unique_rows / self.rows if self.rows else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON values."""
        return {
            "rows": self.rows,
            "quasi_identifiers": list(self.quasi_identifiers),
            "unique_rows": self.unique_rows,
            "uniqueness": self.uniqueness,
            "k": self.k,
            "classes": self.classes,
            "most_identifying": [dict(c) for c in self.most_identifying],
            **({"population": self.population.to_dict()} if self.population is not None else {}),
        }


def assess(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    top: int = 5,
    max_size: int = 3,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
) -> RiskSummary:
    """Uniqueness on all ``quasi_identifiers`` and the ``top`` smallest combinations (up to
    ``max_size`` columns) that make the most rows unique; with ``population``,
    ``sampling_fraction`` or a ``weights`` column, the estimates beyond the sample
    (``veil.risk.population``)."""
    qis = list(quasi_identifiers)
    return _measure(
        frame,
        qis,
        None,
        top=top,
        max_size=max_size,
        beyond_it=lambda klass, sizes: beyond(
            frame,
            klass,
            sizes,
            population=population,
            sampling_fraction=sampling_fraction,
            weights=weights,
        ),
    )


def assess_counts(
    counts: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    count: str,
    top: int = 5,
    max_size: int = 3,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weighted: str | None = None,
) -> RiskSummary:
    """``assess`` of the rows ``counts`` stands for: one row per distinct combination of the
    quasi-identifiers with how many rows hold it (the column ``count``) and, with sampling
    weights, their sum (the column ``weighted``)."""
    qis = list(quasi_identifiers)
    weights = counts[count].to_numpy(dtype=np.int64)

    def estimates(klass: np.ndarray, sizes: np.ndarray) -> PopulationRisk | None:
        if population is None and sampling_fraction is None and weighted is None:
            return None
        summed = None
        if weighted is not None:
            summed = np.bincount(
                klass, weights=counts[weighted].to_numpy(dtype=float), minlength=len(sizes)
            )
        return population_risk(
            sizes, population=population, sampling_fraction=sampling_fraction, weights=summed
        )

    return _measure(counts, qis, weights, top=top, max_size=max_size, beyond_it=estimates)


def _measure(
    frame: pd.DataFrame,
    qis: list[str],
    weights: np.ndarray | None,
    *,
    top: int,
    max_size: int,
    beyond_it: Callable[[np.ndarray, np.ndarray], PopulationRisk | None],
) -> RiskSummary:
    """The summary of ``frame``'s rows (each counting ``weights`` records, or one)."""
    rows = len(frame) if weights is None else int(weights.sum())
    if not qis or rows == 0:
        return RiskSummary(rows, tuple(qis), 0, rows, 1 if rows else 0)
    coded = CodedColumns.of(frame, qis)
    klass, sizes = coded.class_sizes(range(len(qis)), weights)
    unique_rows = int((sizes == 1).sum())
    # fewer columns' classes are unions of the classes on all: counted on one row per class,
    # each standing for its class's size (10M rows: 200,000 classes, not 10M rows, per subset)
    rolled, stand_for = coded, weights
    if weights is None:
        one_row = np.empty(len(sizes), dtype=np.int64)
        one_row[klass] = np.arange(len(klass))  # any row of each class: they share its codes
        rolled = CodedColumns(coded.names, [c[one_row] for c in coded.codes], coded.cardinalities)
        stand_for = sizes.astype(float)  # integer sums, exact in floats
    combos: list[dict[str, Any]] = []
    largest = min(max_size if len(qis) <= 12 else 2, len(qis))
    for size in range(1, largest + 1):
        for indices in itertools.combinations(range(len(qis)), size):
            _, combo_sizes = rolled.class_sizes(indices, stand_for)
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
        population=beyond_it(klass, sizes),
    )
