"""Resampling: new values drawn from a column's observed or fitted distribution.

The release keeps each column's distribution but breaks the link between a person's row and
their real value. (Not differential privacy: the distribution itself is learned exactly.)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    StrOptions,
    numeric_values,
    rng_from,
)

DEFAULT_CANDIDATES = ("norm", "lognorm", "gamma", "exponnorm", "weibull_min", "expon", "uniform")
_MAX_FIT_ROWS = 20_000


class Resample(ColumnTransform):
    """Replace each value by a draw from the column's observed frequencies (missing included)."""

    _needs_every_row = "its distribution is fitted on the whole column"

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "random_state": ["random_state"],
    }

    def __init__(self, columns: Columns = None, *, random_state: Any = None) -> None:
        self.columns = columns
        self.random_state = random_state

    def _fit(self, frame: pd.DataFrame) -> None:
        self.frequencies_: dict[str, pd.Series] = {
            name: frame[name].value_counts(normalize=True, dropna=False) for name in self.columns_
        }

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        for name in self.columns_:
            freq = self.frequencies_[name]
            picks = rng.choice(len(freq), size=len(frame), p=freq.to_numpy(dtype=float))
            out = pd.Series(freq.index.to_numpy()[picks], index=frame.index, name=name)
            frame[name] = out if out.isna().any() else out.astype(frame[name].dtype)
        return frame


def fit_distributions(
    values: np.ndarray,
    candidates: Sequence[str],
    criterion: str,
    rng: np.random.Generator,
    *,
    name: str,
    max_rows: int = _MAX_FIT_ROWS,
) -> list[dict[str, Any]]:
    """Every candidate (scipy.stats names) fitted to ``values`` (finite; a sample of at most
    ``max_rows``), best first by ``criterion`` (``"ks"`` statistic or ``"aic"``): each
    with its parameters, KS statistic and p-value, and AIC."""
    from scipy import stats  # only a step that fits distributions loads SciPy

    sample = values if len(values) <= max_rows else rng.choice(values, max_rows, replace=False)
    report: list[dict[str, Any]] = []
    for candidate in candidates:
        dist = getattr(stats, candidate)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                params = tuple(float(p) for p in dist.fit(sample))
                ks = stats.kstest(sample, candidate, args=params)
                loglik = float(np.sum(dist.logpdf(sample, *params)))
        except (ValueError, RuntimeError, FloatingPointError):
            continue
        if not np.isfinite(ks.statistic) or not np.isfinite(loglik):
            continue
        report.append(
            {
                "distribution": candidate,
                "params": params,
                "ks_statistic": float(ks.statistic),
                "ks_pvalue": float(ks.pvalue),
                "aic": 2 * len(params) - 2 * loglik,
            }
        )
    if not report:
        raise ParameterError(
            f"none of the candidates {list(candidates)} could be fitted to column {name!r}; "
            "try others (e.g. 'norm')"
        )
    report.sort(key=lambda r: r["ks_statistic" if criterion == "ks" else "aic"])
    return report


class ResampleContinuous(ColumnTransform):
    """Fit each of ``candidates`` (scipy.stats names) to a numeric column, keep the best by
    ``criterion`` (``"ks"``: Kolmogorov-Smirnov statistic, ``"aic"``), and replace values by
    draws from it. ``fit_report_`` holds every candidate's parameters, KS statistic and p-value,
    and AIC, so the choice can be checked. Integer columns get rounded draws; ``clip`` keeps
    draws inside the observed range.

    The KS p-value is optimistic because parameters were estimated from the same data; compare
    statistics, not p-values, across candidates.
    """

    _needs_every_row = "its distribution is fitted on the whole column"

    numeric_only = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "candidates": [list, tuple],
        "criterion": [StrOptions({"ks", "aic"})],
        "clip": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        candidates: Sequence[str] = DEFAULT_CANDIDATES,
        criterion: str = "ks",
        clip: bool = True,
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.candidates = candidates
        self.criterion = criterion
        self.clip = clip
        self.random_state = random_state

    def _validate(self) -> None:
        from scipy import stats

        unknown = [
            c
            for c in self.candidates
            if not isinstance(getattr(stats, c, None), stats.rv_continuous)
        ]
        if unknown or not self.candidates:
            raise ParameterError(
                f"candidates must name continuous scipy.stats distributions, got unknown "
                f"{unknown or 'empty list'}; e.g. {list(DEFAULT_CANDIDATES)}"
            )

    def _fit(self, frame: pd.DataFrame) -> None:
        rng = rng_from(self.random_state)
        self.fit_report_: dict[str, list[dict[str, Any]]] = {}
        self.best_: dict[str, str] = {}
        self._params: dict[str, tuple[float, ...]] = {}
        self.range_: dict[str, tuple[float, float]] = {}
        for name in self.columns_:
            values = numeric_values(frame, name)
            values = values[~np.isnan(values)]
            if len(values) < 8:
                raise ParameterError(
                    f"column {name!r} needs at least 8 values to fit a distribution, "
                    f"got {len(values)}"
                )
            self.range_[name] = (float(values.min()), float(values.max()))
            report = fit_distributions(values, self.candidates, self.criterion, rng, name=name)
            self.fit_report_[name] = report
            self.best_[name] = report[0]["distribution"]
            self._params[name] = report[0]["params"]

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        from scipy import stats

        rng = rng_from(self.random_state)
        for name in self.columns_:
            series = frame[name]
            dist = getattr(stats, self.best_[name])
            draws = dist.rvs(*self._params[name], size=len(series), random_state=rng)
            if self.clip:
                draws = np.clip(draws, *self.range_[name])
            draws = np.where(series.isna().to_numpy(), np.nan, draws)
            if pd.api.types.is_integer_dtype(series):
                frame[name] = pd.Series(np.round(draws), index=series.index).astype(series.dtype)
            else:
                frame[name] = pd.Series(draws, index=series.index)
        return frame

    def describe(self) -> str:
        """Each column's fitted distribution and its Kolmogorov-Smirnov statistic."""
        chosen = ", ".join(
            f"{c}~{self.best_[c]} (KS {self.fit_report_[c][0]['ks_statistic']:.3f})"
            for c in self.columns_
        )
        return f"ResampleContinuous({chosen})"
