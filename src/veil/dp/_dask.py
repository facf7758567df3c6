"""DP count, sum, mean and histogram of a Dask DataFrame (``veil[scale]``): each partition's
exact partial aggregate (a count, a fixed-point sum of clamped values, counts per bin) made on
its worker, the partials added exactly on the client, OpenDP's noise drawn once, one ledger
entry: the same mechanisms as ``veil.dp.stats`` on a table in memory."""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.dp import _mechanisms as stats
from veil.dp.budget import Accountant
from veil.exceptions import ParameterError
from veil.io import each_partition
from veil.schema import require_columns

__all__ = ["count", "histogram", "mean", "sum"]


def _dataset(frame: Any) -> str:
    """The ledger's name for a Dask DataFrame: a hash of its task graph's name (its source and
    what was done to it), never of rows (reading them for a name is a pass for nothing)."""
    from dask.base import tokenize

    return hashlib.sha256(tokenize(frame).encode()).hexdigest()[:16]


def _column(frame: Any, column: str) -> None:
    require_columns(pd.DataFrame(columns=list(frame.columns)), [column], where="dp")


def _bounds(bounds: tuple[float, float] | None, column: str) -> tuple[float, float]:
    if bounds is None:
        raise ParameterError(
            f"a DP statistic of {column!r} on a Dask DataFrame needs --bounds "
            "LOW:HIGH from public knowledge (inferring them would read the "
            "data outside the budget)"
        )
    return stats.ordered(bounds)


class _Present:
    def __init__(self, column: str | None) -> None:
        self.column = column

    def __call__(self, part: pd.DataFrame) -> int:
        return len(part) if self.column is None else stats.present(part[self.column])


class _FixedSum:
    def __init__(self, column: str, bounds: tuple[float, float]) -> None:
        self.column, self.bounds = column, bounds

    def __call__(self, part: pd.DataFrame) -> tuple[int, int]:
        values = stats._numbers(part[self.column].dropna(), self.column)
        total, _, _ = stats.fixed_point_sum(values, self.bounds)
        return total, len(values)


def count(
    frame: Any, column: str | None = None, *, epsilon: float, accountant: Accountant | None
) -> stats.DPResult:
    """``veil.dp.stats.count`` of a Dask DataFrame."""
    if column is not None:
        _column(frame, column)

    def compute() -> stats.DPResult:
        n = builtins.sum(each_partition(frame, _Present(column)))
        noisy, scale = stats._noisy_count(int(n), epsilon)
        return stats.DPResult(
            f"count({column or ''})",
            max(round(noisy), 0),
            epsilon,
            0.0,
            scale,
            stats._laplace_error(scale),
        )

    return stats._run(
        accountant, frame, f"count({column or ''})", epsilon, compute, dataset=_dataset(frame)
    )


def _summed(frame: Any, column: str, lim: tuple[float, float]) -> tuple[int, int, float, int]:
    """(fixed-point total, values, step, sensitivity) over every partition, exactly."""
    parts = each_partition(frame, _FixedSum(column, lim))
    total = builtins.sum(t for t, _ in parts)
    values = builtins.sum(n for _, n in parts)
    _, step, sensitivity = stats.fixed_point_sum(np.empty(0), lim)
    if values > stats._MAX_SUMMANDS:
        raise ParameterError(
            f"a DP sum takes at most {stats._MAX_SUMMANDS:,} values, got "
            f"{values:,}; sum parts of the table and add the noisy parts"
        )
    return int(total), int(values), step, sensitivity


def sum(
    frame: Any,
    column: str,
    *,
    bounds: tuple[float, float] | None,
    epsilon: float,
    accountant: Accountant | None,
) -> stats.DPResult:
    """``veil.dp.stats.sum`` of a Dask DataFrame (``bounds`` required)."""
    _column(frame, column)
    lim = _bounds(bounds, column)

    def compute() -> stats.DPResult:
        total, _, step, sensitivity = _summed(frame, column, lim)
        measurement, scale = stats._laplace("scalar", sensitivity, float(epsilon))
        noisy = float(measurement(total)) * step
        return stats.DPResult(
            f"sum({column})",
            noisy,
            epsilon,
            0.0,
            scale * step,
            stats._laplace_error(scale * step),
            bounds=lim,
        )

    return stats._run(
        accountant, frame, f"sum({column})", epsilon, compute, dataset=_dataset(frame)
    )


def mean(
    frame: Any,
    column: str,
    *,
    bounds: tuple[float, float] | None,
    epsilon: float,
    accountant: Accountant | None,
) -> stats.DPResult:
    """``veil.dp.stats.mean`` of a Dask DataFrame: a noisy sum over a noisy count, each with
    half of ``epsilon``."""
    _column(frame, column)
    lim = _bounds(bounds, column)

    def compute() -> stats.DPResult:
        total, values, step, sensitivity = _summed(frame, column, lim)
        measurement, scale = stats._laplace("scalar", sensitivity, float(epsilon / 2))
        noisy_total = float(measurement(total)) * step
        n, count_scale = stats._noisy_count(values, epsilon / 2)
        n = max(n, 1.0)
        value = min(max(noisy_total / n, lim[0]), lim[1])
        error = (
            stats._laplace_error(scale * step) + abs(value) * stats._laplace_error(count_scale)
        ) / n
        return stats.DPResult(
            f"mean({column})",
            value,
            epsilon,
            0.0,
            {"sum": scale * step, "count": count_scale},
            error,
            bounds=lim,
        )

    return stats._run(
        accountant, frame, f"mean({column})", epsilon, compute, dataset=_dataset(frame)
    )


class _Binned:
    def __init__(
        self,
        column: str,
        names: list[str] | None,
        edges: np.ndarray | None,
        equal: int | None = None,
    ) -> None:
        self.column, self.names, self.edges, self.equal = column, names, edges, equal

    def __call__(self, part: pd.DataFrame) -> np.ndarray:
        series = part[self.column].dropna()
        if self.names is not None:
            codes = pd.Index(self.names).get_indexer(pd.Index(series.astype(str)))
            size = len(self.names)
        else:
            assert self.edges is not None
            numbers = stats._numbers(series, self.column)
            if self.equal:  # as veil.dp.stats.histogram bins equal widths
                span = self.edges[-1] - self.edges[0]
                where = np.floor((numbers - self.edges[0]) * (self.equal / span))
            else:
                where = np.digitize(numbers, self.edges[1:-1]).astype(float)
            codes = np.clip(where, 0, len(self.edges) - 2).astype(np.int64)
            size = len(self.edges) - 1
        valid = codes[(codes >= 0) & (codes < size)]
        return np.bincount(valid, minlength=size).astype(np.int64)


def histogram(
    frame: Any,
    column: str,
    *,
    bins: int | Sequence[float] = 10,
    bounds: tuple[float, float] | None = None,
    categories: Sequence[str] | None = None,
    epsilon: float,
    accountant: Accountant | None,
) -> stats.DPResult:
    """``veil.dp.stats.histogram`` of a Dask DataFrame: counts per public bin or category."""
    _column(frame, column)
    edges = None
    if categories is not None:
        names = [str(c) for c in categories]
        if len(set(names)) < len(names):
            raise ParameterError("categories must be distinct")
        binned = _Binned(column, names, None)
    else:
        if not pd.api.types.is_numeric_dtype(frame.dtypes[column]):
            raise ParameterError(
                f"histogram of text column {column!r} needs its categories, "
                "from public knowledge (--categories A,B,C)"
            )
        lim = _bounds(bounds, column)
        edges = (
            np.linspace(lim[0], lim[1], bins + 1)
            if isinstance(bins, int)
            else np.asarray(bins, float)
        )
        names = [f"[{edges[i]:g}, {edges[i + 1]:g})" for i in range(len(edges) - 1)]
        binned = _Binned(column, None, edges, bins if isinstance(bins, int) else None)

    def compute() -> stats.DPResult:
        counts = np.sum(each_partition(frame, binned), axis=0).astype(np.int64)
        measurement, scale = stats._laplace("counts", 1, float(epsilon))
        noisy = np.maximum(np.asarray(measurement(counts.tolist()), dtype=float), 0)
        value = dict(zip(names, noisy.astype(int).tolist(), strict=True))
        return stats.DPResult(
            f"histogram({column})", value, epsilon, 0.0, scale, stats._laplace_error(scale)
        )

    return stats._run(
        accountant, frame, f"histogram({column})", epsilon, compute, dataset=_dataset(frame)
    )
