"""Microaggregation: records grouped in clusters of at least k, values replaced by the mean."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    StrOptions,
    numeric_values,
)


def mdav_groups(points: np.ndarray, k: int) -> np.ndarray:
    """Group labels by MDAV (Domingo-Ferrer & Mateo-Sanz 2002): every group has k..2k-1 rows.

    O(n^2 / k) distance computations: fine for tens of thousands of rows; use
    ``method="sorted"`` beyond that.
    """
    n = len(points)
    labels = np.full(n, -1, dtype=np.int64)
    remaining = np.arange(n)
    group = 0

    def take_nearest(anchor: np.ndarray, pool: np.ndarray) -> np.ndarray:
        dist = ((points[pool] - anchor) ** 2).sum(axis=1)
        return pool[np.argpartition(dist, k - 1)[:k]]

    def farthest(anchor: np.ndarray, pool: np.ndarray) -> np.ndarray:
        return points[pool[np.argmax(((points[pool] - anchor) ** 2).sum(axis=1))]]

    while len(remaining) >= 3 * k:
        centroid = points[remaining].mean(axis=0)
        r = farthest(centroid, remaining)
        s = farthest(r, remaining)
        for anchor in (r, s):
            members = take_nearest(anchor, remaining)
            labels[members] = group
            group += 1
            remaining = np.setdiff1d(remaining, members, assume_unique=True)
    if len(remaining) >= 2 * k:
        centroid = points[remaining].mean(axis=0)
        members = take_nearest(farthest(centroid, remaining), remaining)
        labels[members] = group
        group += 1
        remaining = np.setdiff1d(remaining, members, assume_unique=True)
    labels[remaining] = group
    return labels


def sorted_groups(points: np.ndarray, k: int) -> np.ndarray:
    """Group labels from consecutive runs of k along the first principal axis (O(n log n))."""
    n = len(points)
    if points.shape[1] == 1:
        key = points[:, 0]
    else:
        centred = points - points.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        key = centred @ vt[0]
    order = np.argsort(key, kind="stable")
    n_groups = max(n // k, 1)
    # the last group absorbs the remainder, so every group has k..2k-1 members
    ranks = np.minimum(np.arange(n) // k, n_groups - 1)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = ranks
    return labels


class Microaggregate(ColumnTransform):
    """Replace numeric ``columns`` by the mean of their group of at least ``k`` similar records.

    ``method="mdav"`` clusters on all ``columns`` together (standardized); ``"sorted"`` cuts
    runs of k along the first principal axis, faster on large tables. Means are floats.

    A row with a missing value is grouped with the rows missing the same columns, on the
    columns it has (an Age-97 outlier without an Income still gets the mean Age of k people);
    when fewer than k rows share its pattern, its present values are suppressed (set missing).
    ``describe`` says how many were.
    """

    _needs_every_row = "it groups rows of the whole table; generalize with bins instead"

    numeric_only = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "k": [Interval(Integral, 2, None, closed="left")],
        "method": [StrOptions({"mdav", "sorted"})],
    }

    def __init__(self, columns: Columns = None, *, k: int = 3, method: str = "mdav") -> None:
        self.columns = columns
        self.k = k
        self.method = method

    def _group_means(self, points: np.ndarray) -> np.ndarray:
        """Every row replaced by the mean of its group (groups of k..2k-1 similar rows)."""
        scale = points.std(axis=0)
        scaled = (points - points.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
        labels = (mdav_groups if self.method == "mdav" else sorted_groups)(scaled, self.k)
        counts = np.bincount(labels)
        out = np.empty_like(points)
        for j in range(points.shape[1]):
            out[:, j] = (np.bincount(labels, weights=points[:, j]) / counts)[labels]
        return out

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        values = np.column_stack([numeric_values(frame, c) for c in self.columns_])
        present = ~np.isnan(values)
        with_values = int(present.any(axis=1).sum())
        if with_values < self.k:
            raise ParameterError(
                f"k must be at most the number of rows with a value ({with_values}), got k={self.k}"
            )
        result = values.copy()
        self.aggregated_partial_ = 0  # rows with a gap, aggregated on the columns they have
        self.suppressed_ = 0  # values set missing: too few rows shared their pattern
        patterns, which = np.unique(present, axis=0, return_inverse=True)
        for p, pattern in enumerate(patterns):
            if not pattern.any():
                continue  # nothing present: nothing to hide
            rows = np.flatnonzero(which.ravel() == p)
            cols = np.flatnonzero(pattern)
            if len(rows) < self.k:
                result[np.ix_(rows, cols)] = np.nan
                self.suppressed_ += len(rows) * len(cols)
                continue
            result[np.ix_(rows, cols)] = self._group_means(values[np.ix_(rows, cols)])
            if not pattern.all():
                self.aggregated_partial_ += len(rows)
        for j, name in enumerate(self.columns_):
            frame[name] = pd.Series(result[:, j], index=frame.index)
        return frame

    def describe(self) -> str:
        """The columns, k, and the groups aggregated partially or suppressed."""
        notes = ""
        partial, suppressed = (
            getattr(self, "aggregated_partial_", 0),
            getattr(self, "suppressed_", 0),
        )
        if partial:
            notes += f"; {partial:,} rows with a gap aggregated on the values they have"
        if suppressed:
            notes += f"; {suppressed:,} values suppressed (fewer than k rows like them)"
        return f"Microaggregate({', '.join(self.columns_)}; k={self.k}, {self.method}{notes})"
