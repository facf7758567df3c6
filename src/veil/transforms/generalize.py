"""Generalization (bins, category maps, date truncation, rounding) and top/bottom coding."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.io._dates import as_dates
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    Real,
    StrOptions,
    numeric_values,
)

_DATE_UNITS = ("decade", "year", "quarter", "month", "week", "day", "hour")


def format_number(x: float) -> str:
    """A bin edge as a label writes it: ``30`` not ``30.0``, six significant digits otherwise."""
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def interval_labels(edges: Sequence[float], *, right: bool) -> list[str]:
    """``[20, 30)`` style labels; open ends read ``< 20`` and ``>= 70``."""
    labels = []
    for lo, hi in itertools.pairwise(edges):
        a, b = format_number(lo), format_number(hi)
        if np.isinf(lo) and not np.isinf(hi):
            labels.append(f"<= {b}" if right else f"< {b}")
        elif np.isinf(hi) and not np.isinf(lo):
            labels.append(f"> {a}" if right else f">= {a}")
        elif right:
            labels.append(f"({a}, {b}]")
        else:
            labels.append(f"[{a}, {b})")
    return labels


def round_edges(edges: Sequence[float] | np.ndarray, width: float) -> list[float]:
    """Edges rounded to a round step (1, 2 or 5 times a power of ten) of at most a tenth of the
    bin width, so that none is a person's exact value (an income quantile) or the minimum or
    maximum; duplicates merged."""
    if width <= 0 or not np.isfinite(width):
        return sorted({float(e) for e in edges})
    power = 10.0 ** np.floor(np.log10(width / 10))
    step = max(m * power for m in (1, 2, 5) if m * power <= width / 10)
    return sorted({float(np.round(np.round(e / step) * step, 10)) for e in edges})


class Generalize(ColumnTransform):
    """Replace values by a coarser version. Exactly one mode:

    - ``bins``: an int (``strategy="width"`` equal-width or ``"quantile"`` equal-frequency),
      a list of edges as in ``pd.cut`` (use ``.inf`` in YAML / ``np.inf`` for open ends), or
      ``"mean"``/``"median"`` for a binary split. Edges computed from the data are rounded
      (a step of 1, 2 or 5 times a power of ten) and the outer bins are open (``< 40``,
      ``>= 70``): labels never print the minimum, the maximum or a value of the data.
      Intervals are ``[lo, hi)`` unless ``right=True``; ``labels`` names them.
    - ``mapping``: ``{value: group}``; unmapped values become ``other``, or raise if it is None.
    - ``date``: truncate dates to ``decade``/``year``/``quarter``/``month``/``week``/``day``/
      ``hour``, written as text (``2013``, ``2013Q4``, ``2013-11``, ``2010s``).
    - ``round_to``: round numbers to the nearest multiple (5 -> 35, 40; 0.1 -> one decimal).

    A value outside the fitted bins raises instead of silently becoming missing.
    """

    def batchwise(self) -> str | None:
        """Bins computed from the column (a count or a rule) need every row; explicit edges do
        not."""
        if self._mode() == "bins" and isinstance(self.bins, str | int):
            return (
                "its bins come from the whole column; give the edges as a list "
                "(bins: [0, 18, 65, 120])"
            )
        return None

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "bins": [
            Interval(Integral, 2, None, closed="left"),
            StrOptions({"mean", "median"}),
            "array-like",
            None,
        ],
        "strategy": [StrOptions({"width", "quantile"})],
        "labels": [list, tuple, None],
        "right": ["boolean"],
        "mapping": [dict, None],
        "other": "no_validation",  # any value: the group of unmapped values
        "date": [StrOptions(set(_DATE_UNITS)), None],
        "round_to": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        bins: int | Sequence[float] | str | None = None,
        strategy: str = "width",
        labels: Sequence[str] | None = None,
        right: bool = False,
        mapping: Mapping[Any, Any] | None = None,
        other: Any = None,
        date: str | None = None,
        round_to: float | None = None,
    ) -> None:
        self.columns = columns
        self.bins = bins
        self.strategy = strategy
        self.labels = labels
        self.right = right
        self.mapping = mapping
        self.other = other
        self.date = date
        self.round_to = round_to

    def _mode(self) -> str:
        given = [
            m
            for m, v in (
                ("bins", self.bins),
                ("mapping", self.mapping),
                ("date", self.date),
                ("round_to", self.round_to),
            )
            if v is not None
        ]
        if len(given) != 1:
            raise ParameterError(
                "Generalize needs exactly one of bins, mapping, date or round_to, "
                f"got {given or 'none'}; e.g. bins=[18, 30, 45, 60, 100]"
            )
        return given[0]

    def _validate(self) -> None:
        self._mode()

    def _fit(self, frame: pd.DataFrame) -> None:
        self.edges_: dict[str, list[float]] = {}
        if self._mode() != "bins":
            return
        for name in self.columns_:
            if not pd.api.types.is_numeric_dtype(frame[name]):
                raise ParameterError(
                    f"column {name!r} must be numeric to be binned, got dtype {frame[name].dtype}; "
                    "use mapping for categories or date for dates"
                )
            self.edges_[name] = self._edges(numeric_values(frame, name), name)
            if self.labels is not None and len(self.labels) != len(self.edges_[name]) - 1:
                raise ParameterError(
                    f"labels must have one name per bin ({len(self.edges_[name]) - 1} for column "
                    f"{name!r}), got {len(self.labels)}"
                )

    def _edges(self, values: np.ndarray, name: str) -> list[float]:
        valid = values[~np.isnan(values)]
        if isinstance(self.bins, str | int) and len(valid) == 0:
            raise ParameterError(f"column {name!r} has no values to compute bins from")
        if isinstance(self.bins, str):
            cut = float(np.mean(valid) if self.bins == "mean" else np.median(valid))
            return [-np.inf, *round_edges([cut], float(np.ptp(valid)) / 2), np.inf]
        if isinstance(self.bins, int):
            if self.strategy == "quantile":
                inner = np.quantile(valid, np.linspace(0, 1, self.bins + 1))[1:-1]
            else:
                inner = np.linspace(valid.min(), valid.max(), self.bins + 1)[1:-1]
            # Edges computed from the data are rounded and both ends left open: "[23817, ...)"
            # would print the minimum, a quantile edge is somebody's value.
            return [-np.inf, *round_edges(inner, float(np.ptp(valid)) / self.bins), np.inf]
        edges_list = [float(e) for e in self.bins or []]
        if len(edges_list) < 2 or any(b <= a for a, b in itertools.pairwise(edges_list)):
            raise ParameterError(
                f"bins must be increasing edges (at least 2), got {list(self.bins or [])!r}"
            )
        return edges_list

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        mode = self._mode()
        for name in self.columns_:
            series = frame[name]
            if mode == "bins":
                frame[name] = self._bin(series, name)
            elif mode == "mapping":
                frame[name] = self._map(series, name)
            elif mode == "date":
                frame[name] = truncate_dates(series, self.date or "year", name=name)
            else:
                step = float(self.round_to or 1)
                values = np.round(np.round(numeric_values(frame, name) / step) * step, 10)
                if pd.api.types.is_integer_dtype(series) and step.is_integer():
                    frame[name] = pd.Series(values, index=series.index).astype(series.dtype)
                else:
                    frame[name] = pd.Series(values, index=series.index)
        return frame

    def _bin(self, series: pd.Series, name: str) -> pd.Series:
        edges = self.edges_[name]
        labels = (
            list(self.labels)
            if self.labels is not None
            else interval_labels(edges, right=self.right)
        )
        values = numeric_values(series.to_frame(), name)
        binned = pd.cut(values, bins=edges, labels=labels, right=self.right, include_lowest=True)
        outside = pd.isna(binned) & ~np.isnan(values)
        if outside.any():
            bad = sorted(set(values[outside].tolist()))[:5]
            raise ParameterError(
                f"column {name!r} has values outside the bins {edges}: {bad}; widen the bins "
                "or make the ends open with -.inf / .inf"
            )
        return pd.Series(np.asarray(binned, dtype=object).tolist(), index=series.index).where(
            ~np.isnan(values)
        )

    def _map(self, series: pd.Series, name: str) -> pd.Series:
        mapping = dict(self.mapping or {})
        mapped = series.map(mapping)
        missing = mapped.isna() & series.notna()
        if missing.any():
            if self.other is None:
                unmapped = sorted(map(str, series[missing].unique()))[:10]
                raise ParameterError(
                    f"column {name!r} has values the mapping does not cover: {unmapped}; "
                    "add them to mapping or set other (e.g. other: Other)"
                )
            mapped = mapped.where(~missing, self.other)
        return mapped

    def describe(self) -> str:
        """The columns and how they were generalized (bins, mapped categories, date level or
        rounding)."""
        mode = self._mode()
        detail = {
            "bins": f"bins={self.bins}",
            "mapping": f"{len(self.mapping or {})} categories mapped",
            "date": f"date to {self.date}",
            "round_to": f"round to {self.round_to}",
        }[mode]
        return f"Generalize({', '.join(self.columns_)}; {detail})"


def truncate_dates(series: pd.Series, unit: str, *, name: str) -> pd.Series:
    """Dates as text at the precision of ``unit``; missing stays missing."""
    series = as_dates(series, name)  # text dates read as `--dates` would; else the fix
    dt = series.dt
    if unit == "decade":
        out = (dt.year // 10 * 10).astype("Int64").astype(str) + "s"
    elif unit == "year":
        out = dt.year.astype("Int64").astype(str)
    elif unit == "quarter":
        out = dt.year.astype("Int64").astype(str) + "Q" + dt.quarter.astype("Int64").astype(str)
    else:
        fmt = {"month": "%Y-%m", "week": "%G-W%V", "day": "%Y-%m-%d", "hour": "%Y-%m-%d %H:00"}[
            unit
        ]
        out = dt.strftime(fmt)
    return out.where(series.notna())


class TopBottomCode(ColumnTransform):
    """Cap values above ``top`` and below ``bottom`` (fixed values, or ``top_quantile``/
    ``bottom_quantile`` in [0, 1] learned at fit): the few extreme salaries that identify their
    earners become the cap (e.g. 190,000 and 37,000)."""

    def batchwise(self) -> str | None:
        """Quantile thresholds need every row; thresholds given as values do not."""
        if self.top_quantile is not None or self.bottom_quantile is not None:
            return "its quantiles come from the whole column; give top and bottom as values"
        return None

    numeric_only = True

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "top": [Real, None],
        "bottom": [Real, None],
        "top_quantile": [Interval(Real, 0, 1, closed="both"), None],
        "bottom_quantile": [Interval(Real, 0, 1, closed="both"), None],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        top: float | None = None,
        bottom: float | None = None,
        top_quantile: float | None = None,
        bottom_quantile: float | None = None,
    ) -> None:
        self.columns = columns
        self.top = top
        self.bottom = bottom
        self.top_quantile = top_quantile
        self.bottom_quantile = bottom_quantile

    def _validate(self) -> None:
        if self.top is not None and self.top_quantile is not None:
            raise ParameterError("give top or top_quantile, not both")
        if self.bottom is not None and self.bottom_quantile is not None:
            raise ParameterError("give bottom or bottom_quantile, not both")
        if all(v is None for v in (self.top, self.bottom, self.top_quantile, self.bottom_quantile)):
            raise ParameterError(
                "TopBottomCode needs top, bottom, top_quantile or bottom_quantile, got none; "
                "e.g. top_quantile=0.99"
            )

    def _fit(self, frame: pd.DataFrame) -> None:
        self.thresholds_: dict[str, tuple[float | None, float | None]] = {}
        for name in self.columns_:
            values = numeric_values(frame, name)
            values = values[~np.isnan(values)]
            integer = pd.api.types.is_integer_dtype(frame[name])
            method: Literal["nearest", "linear"] = "nearest" if integer else "linear"
            low = self.bottom
            high = self.top
            if self.bottom_quantile is not None and len(values):
                low = float(np.quantile(values, self.bottom_quantile, method=method))
            if self.top_quantile is not None and len(values):
                high = float(np.quantile(values, self.top_quantile, method=method))
            if low is not None and high is not None and low > high:
                raise ParameterError(
                    f"column {name!r}: bottom ({low}) must not exceed top ({high})"
                )
            self.thresholds_[name] = (low, high)

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        for name in self.columns_:
            low, high = self.thresholds_[name]
            series = frame[name]
            clipped = series.clip(lower=low, upper=high)
            integral = all(v is None or float(v).is_integer() for v in (low, high))
            if pd.api.types.is_integer_dtype(series) and integral:
                clipped = clipped.astype(series.dtype)
            frame[name] = clipped
        return frame

    def describe(self) -> str:
        """Each column's range after coding."""
        caps = "; ".join(
            f"{c} to [{format_number(lo) if lo is not None else '-'}, "
            f"{format_number(hi) if hi is not None else '-'}]"
            for c, (lo, hi) in self.thresholds_.items()
        )
        return f"TopBottomCode({caps})"
