"""Differentially private statistics. OpenDP draws every bit of noise (floating-point-safe
samplers); veil composes its measurements, charges the accountant, and reports how far to
trust each answer.

Every function follows check -> compute -> spend: the accountant reserves the epsilon first
(refusing with ``BudgetExceededError`` if it cannot be afforded), OpenDP computes, and the
reservation becomes a ledger entry only if the computation succeeded.
Neighbouring datasets differ by adding or removing one record (OpenDP's symmetric distance).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from veil._lazy import is_dask
from veil.dp._mechanisms import (
    FIXED_POINT_BITS,
    DPResult,
    _laplace,
    _laplace_error,
    _noisy_count,
    _numbers,
    _require_numeric,
    _run,
    _scale_for,
    fixed_point_sum,
    opendp,
    ordered,
    present,
)
from veil.dp.budget import NEIGHBOURS, Accountant
from veil.exceptions import AccuracyWarning, ParameterError, PrivacyLeakWarning
from veil.schema import require_columns

__all__ = [
    "FIXED_POINT_BITS",
    "DPResult",
    "count",
    "fixed_point_sum",
    "grouped_count",
    "grouped_mean",
    "histogram",
    "mean",
    "median",
    "opendp",
    "quantile",
    "std",
    "sum",
    "variance",
]


def _values(frame: pd.DataFrame, column: str) -> pd.Series:
    require_columns(frame, [column], where="dp")
    return frame[column]


def _bounds(
    series: pd.Series, bounds: tuple[float, float] | None, name: str
) -> tuple[float, float]:
    if bounds is None:
        warnings.warn(
            f"bounds for {name!r} were not given and are inferred from the data; this leaks "
            "its minimum and maximum, outside the privacy guarantee. Give bounds from domain "
            f"knowledge instead (--bounds {name}=LOW:HIGH; in Python bounds=(low, high))",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        values = pd.to_numeric(series, errors="coerce").dropna()
        bounds = (float(values.min()), float(values.max()))
    return ordered(bounds)


def contributions(
    frame: pd.DataFrame, person: str | None, max_rows: int
) -> tuple[pd.DataFrame, int, str]:
    """Contribution bounding (as OpenDP's privacy unit counts contributions): with a ``person``
    column, keep at most ``max_rows`` rows of each person (their first in the table), so
    that adding or removing one person changes a count by at most ``max_rows``; returns the
    bounded rows, the multiplier of every sensitivity and what epsilon then protects."""
    if person is None:
        if max_rows != 1:
            raise ParameterError("--max-contributions bounds a person's rows: give --person-id")
        return frame, 1, NEIGHBOURS
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ParameterError(f"--max-contributions must be a whole number >= 1, got {max_rows!r}")
    if person not in frame.columns:
        raise ParameterError(f"--person-id {person!r} is not a column of the data")
    # any rule that keeps at most max_rows of each person bounds what they change; the first
    # ones in the table's order need no randomness (and veil.dp draws none outside OpenDP)
    kept = frame[frame.groupby(person, dropna=False).cumcount().to_numpy() < max_rows]
    unit = (
        f"one person ({person}) added or removed, with at most {max_rows} of their rows "
        "(the first in the table; later ones left out)"
    )
    return kept, max_rows, unit


def _no_people(person: str | None) -> None:
    if person is not None:
        raise ParameterError(
            "--person-id bounds each person's rows in memory; on a Dask "
            "DataFrame it is not supported yet"
        )


def _what(statistic: str, person: str | None, bound: int) -> str:
    """The ledger's line: the statistic, and the contribution bound when people were bounded."""
    return statistic if person is None else f"{statistic} per person ({person}, <= {bound} rows)"


# -- the statistics -------------------------------------------------------------------------


def _noisy_sum(
    values: np.ndarray, bounds: tuple[float, float], epsilon: float, rows: int = 1
) -> tuple[float, float]:
    """The clamped sum with OpenDP's integer Laplace noise, and the noise scale, both in the
    values' units (``fixed_point_sum``); ``rows``: how many values one person may hold."""
    total, step, sensitivity = fixed_point_sum(values, bounds)
    measurement, scale = _laplace("scalar", sensitivity * rows, float(epsilon))
    return float(measurement(total)) * step, scale * step


def count(
    frame: pd.DataFrame,
    column: str | None = None,
    *,
    epsilon: float,
    accountant: Accountant | None,
    person: str | None = None,
    max_contributions: int = 1,
) -> DPResult:
    """The number of records (or of non-missing values of ``column``); with ``person``, each
    person counted with at most ``max_contributions`` rows (``contributions``)."""
    if is_dask(frame):  # partition by partition: veil.dp._dask
        from veil.dp import _dask

        _no_people(person)
        return _dask.count(frame, column, epsilon=epsilon, accountant=accountant)
    rows, bound, unit = contributions(frame, person, max_contributions)
    values = len(rows) if column is None else present(_values(rows, column))

    def compute() -> DPResult:
        noisy, scale = _noisy_count(values, epsilon, bound)
        return DPResult(
            f"count({column or ''})",
            max(round(noisy), 0),
            epsilon,
            0.0,
            scale,
            _laplace_error(scale),
            neighbours=unit,
        )

    return _run(accountant, frame, _what(f"count({column or ''})", person, bound), epsilon, compute)


def sum(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
    person: str | None = None,
    max_contributions: int = 1,
) -> DPResult:
    """Noisy sum of ``column`` clamped into ``bounds``, with all of ``epsilon`` (Laplace).

    The sum is computed in fixed point after clamping, so its sensitivity is exact whatever the
    summation order (floating-point sums are not; Casacuberta et al., CCS 2022).

    Parameters are those of ``mean``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> from veil import dp
    >>> ledger = dp.Accountant.create(pathlib.Path(tempfile.mkdtemp()) / "b.db", dp.Budget(1.0))
    >>> claims = pd.DataFrame({"Amount": [1200.0, 800.0, 450.0] * 300})
    >>> answer = dp.stats.sum(claims, "Amount", bounds=(0, 2000), epsilon=1.0, accountant=ledger)
    >>> abs(answer.value - 733_500) < 40 * answer.error95, answer.mechanism
    (True, 'laplace')
    """
    if is_dask(frame):  # partition by partition: veil.dp._dask
        from veil.dp import _dask

        _no_people(person)
        return _dask.sum(frame, column, bounds=bounds, epsilon=epsilon, accountant=accountant)
    rows, bound, unit = contributions(frame, person, max_contributions)
    values = _numbers(_values(rows, column), column)
    lim = _bounds(frame[column], bounds, column)

    def compute() -> DPResult:
        noisy, scale = _noisy_sum(values, lim, epsilon, bound)
        return DPResult(
            f"sum({column})",
            noisy,
            epsilon,
            0.0,
            scale,
            _laplace_error(scale),
            bounds=lim,
            neighbours=unit,
        )

    return _run(accountant, frame, _what(f"sum({column})", person, bound), epsilon, compute)


def mean(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
    person: str | None = None,
    max_contributions: int = 1,
) -> DPResult:
    """Noisy sum over noisy count, each with half of ``epsilon``; clamped into the bounds.

    Parameters
    ----------
    frame : DataFrame
        The data (never modified).
    column : str
        A numeric column; missing values are left out.
    bounds : (low, high)
        Public bounds: values are clamped into them. Inferred from the data (with a
        ``PrivacyLeakWarning``) when not given.
    epsilon : float
        The privacy loss to spend, at least 1e-6.
    accountant : Accountant
        The ledger the cost is charged to, before the data is read.

    Returns
    -------
    DPResult
        The noisy mean, the noise scales, a 95% error bound and the cost.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> from veil import dp
    >>> ledger = dp.Accountant.create(pathlib.Path(tempfile.mkdtemp()) / "b.db", dp.Budget(1.0))
    >>> ages = pd.DataFrame({"Age": [25, 38, 47, 52, 61] * 200})
    >>> answer = dp.stats.mean(ages, "Age", bounds=(18, 100), epsilon=0.5, accountant=ledger)
    >>> 18 <= answer.value <= 100, answer.epsilon, ledger.remaining().epsilon
    (True, 0.5, 0.5)
    """
    if is_dask(frame):  # partition by partition: veil.dp._dask
        from veil.dp import _dask

        _no_people(person)
        return _dask.mean(frame, column, bounds=bounds, epsilon=epsilon, accountant=accountant)
    rows, bound, unit = contributions(frame, person, max_contributions)
    values = _numbers(_values(rows, column), column)
    lim = _bounds(frame[column], bounds, column)

    def compute() -> DPResult:
        total, sum_scale = _noisy_sum(values, lim, epsilon / 2, bound)
        n, count_scale = _noisy_count(values, epsilon / 2, bound)
        n = max(n, 1.0)
        value = min(max(total / n, lim[0]), lim[1])
        # first-order error: the sum's noise over n, plus the count's noise times the mean
        error = (_laplace_error(sum_scale) + abs(value) * _laplace_error(count_scale)) / n
        return DPResult(
            f"mean({column})",
            value,
            epsilon,
            0.0,
            {"sum": sum_scale, "count": count_scale},
            error,
            bounds=lim,
            neighbours=unit,
        )

    return _run(accountant, frame, _what(f"mean({column})", person, bound), epsilon, compute)


def variance(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
    _root: bool = False,
) -> DPResult:
    """From noisy count, sum and sum of squares (a third of ``epsilon`` each); values are
    shifted to the bounds' midpoint first, which keeps the squares small."""
    values = _numbers(_values(frame, column), column)
    lim = _bounds(frame[column], bounds, column)
    name = f"{'std' if _root else 'variance'}({column})"

    def compute() -> DPResult:
        middle = (lim[0] + lim[1]) / 2
        half = (lim[1] - lim[0]) / 2
        centred = np.clip(values, lim[0], lim[1]) - middle
        n, count_scale = _noisy_count(values, epsilon / 3)
        total, sum_scale = _noisy_sum(centred, (-half, half), epsilon / 3)
        squares, square_scale = _noisy_sum(centred * centred, (0.0, half * half), epsilon / 3)
        n = max(n, 2.0)
        value = min(max(squares / n - (total / n) ** 2, 0.0), half * half)
        if _root:
            value = math.sqrt(value)
        scales = {"count": count_scale, "sum": sum_scale, "sum_of_squares": square_scale}
        note = "no error bound: the variance mixes three noisy parts"
        return DPResult(name, value, epsilon, 0.0, scales, None, bounds=lim, notes=[note])

    return _run(accountant, frame, name, epsilon, compute)


def std(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
) -> DPResult:
    """Noisy standard deviation of ``column``: the square root of ``variance`` (same cost and
    parameters as ``mean``).
    """
    return variance(
        frame, column, bounds=bounds, epsilon=epsilon, accountant=accountant, _root=True
    )


#: Bounds from 0 (or more) up to this many times their lower end (at least 1) span orders of
#: magnitude: the candidates are then even in the logarithm.
_LOG_SPAN = 1e4


def _candidates(lim: tuple[float, float], count: int) -> list[float]:
    """The exponential mechanism's candidates: evenly spaced, or evenly spaced in the logarithm
    when the (public) bounds span orders of magnitude, so that a median of 45 within bounds of
    0..1,000,000 is answered to a few percent instead of on a grid of 5,000 (where every
    candidate above the data scores the same and the answer is anywhere among them)."""
    low, high = lim
    if low < 0 < high and max(-low, high) >= _LOG_SPAN and count >= 5:  # both sides of zero
        # each side's share of the candidates follows its orders of magnitude
        weight = np.log1p(-low) / (np.log1p(-low) + np.log1p(high))
        side = min(max(round((count - 1) * weight), 1), count - 2)
        below = (-np.geomspace(max(-low, 1.0), 1.0, side)).tolist() if -low >= 1 else [low]
        above = np.geomspace(1.0, high, count - 1 - len(below)).tolist() if high >= 1 else [high]
        return [*below, 0.0, *above]
    if low >= 0 and high >= _LOG_SPAN * max(low, 1.0) and count >= 3:
        start = max(low, 1.0)
        spaced = np.geomspace(start, high, count - (1 if low < start else 0)).tolist()
        return ([low] if low < start else []) + spaced
    return np.linspace(low, high, count).tolist()


def quantile(
    frame: pd.DataFrame,
    column: str,
    q: float,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
    candidates: int = 200,
) -> DPResult:
    """The exponential mechanism over ``candidates`` values in the bounds, evenly spaced (or
    evenly in the logarithm when the bounds span orders of magnitude), with OpenDP's quantile
    scores and report-noisy-max with Gumbel noise. Warns (``AccuracyWarning``) when the answer
    is at the grid's first or last candidate or its spacing there is over a tenth of the
    answer: the bounds are then far wider than the data (read from the bounds and the answer
    only, never the data)."""
    if not 0 <= q <= 1:
        raise ParameterError(f"q must be in [0, 1], got {q!r}")
    values = _numbers(_values(frame, column), column)
    lim = _bounds(frame[column], bounds, column)
    grid = _candidates(lim, candidates)
    name = f"quantile({column}, {q:g})"

    def compute() -> DPResult:
        dp = opendp()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
        measurement, scale = _scale_for(
            lambda s: (
                space
                >> dp.t.then_quantile_score_candidates(grid, q)
                >> dp.m.then_noisy_max(dp.max_divergence(), scale=s, negate=True)
            ),
            epsilon,
        )
        index = int(measurement(values.tolist()))
        answer = grid[index]
        # the spacing around the answer (the grid is even, or even in the logarithm)
        step = max(grid[min(index + 1, len(grid) - 1)] - grid[max(index - 1, 0)], 0.0) / 2
        notes = [f"resolution {step:g} (candidate spacing at the answer)"]
        # Read from the bounds and the (public) answer only: an answer at the first or last
        # candidate, or a spacing over a tenth of the answer (away from zero, where any spacing
        # is), says the bounds are far wider than the data: the answer is coarser than needed
        if index in (0, len(grid) - 1) or 0 < abs(answer) < 10 * step:
            coarse = (
                f"{name}: the candidate grid's spacing {step:g} is coarse beside the answer "
                f"{answer:g}: the bounds {lim[0]:g}..{lim[1]:g} look far wider than the data; "
                f"give narrower bounds or more candidates (now {candidates})"
            )
            warnings.warn(coarse, AccuracyWarning, stacklevel=4)
            notes.append(coarse)
        return DPResult(
            name,
            answer,
            epsilon,
            0.0,
            scale,
            None,
            mechanism="exponential",
            bounds=lim,
            notes=notes,
        )

    return _run(accountant, frame, name, epsilon, compute)


def median(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
) -> DPResult:
    """Noisy median of ``column``: ``quantile`` at 0.5 (exponential mechanism over ``bounds``)."""
    return quantile(frame, column, 0.5, bounds=bounds, epsilon=epsilon, accountant=accountant)


def _category_counts(
    codes: np.ndarray, n: int, epsilon: float, rows: int = 1
) -> tuple[np.ndarray, float]:
    """Noisy counts of ``codes`` in 0..n-1 (others are not released). Adding or removing one
    record changes one count by one: L1 sensitivity 1 (``rows`` for a person's rows)."""
    valid = codes[(codes >= 0) & (codes < n)]
    counts = np.bincount(valid, minlength=n).astype(np.int64)
    measurement, scale = _laplace("counts", rows, float(epsilon))
    noisy = np.asarray(measurement(counts.tolist()), dtype=float)
    return np.maximum(noisy, 0), scale


def histogram(
    frame: pd.DataFrame,
    column: str,
    *,
    bins: int | Sequence[float] = 10,
    bounds: tuple[float, float] | None = None,
    categories: Sequence[str] | None = None,
    epsilon: float,
    accountant: Accountant | None,
    person: str | None = None,
    max_contributions: int = 1,
) -> DPResult:
    """Counts per bin (numbers) or per category. The bins or ``categories`` are public:
    inferring categories from the data would leak which values occur. With ``person``, each
    person counts with at most ``max_contributions`` rows (``contributions``)."""
    if is_dask(frame):  # partition by partition: veil.dp._dask
        from veil.dp import _dask

        _no_people(person)
        return _dask.histogram(
            frame,
            column,
            bins=bins,
            bounds=bounds,
            categories=categories,
            epsilon=epsilon,
            accountant=accountant,
        )
    rows, bound, unit = contributions(frame, person, max_contributions)
    series = _values(rows, column)
    if categories is None and not pd.api.types.is_numeric_dtype(series):
        raise ParameterError(
            f"histogram of text column {column!r} needs its categories, from public knowledge "
            "(--categories A,B,C; in Python categories=[...]): listing them from the data "
            "would reveal rare values"
        )
    if categories is not None:
        names = [str(c) for c in categories]
        if len(set(names)) < len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise ParameterError(f"categories must be distinct, {twice} appear twice")
        # values outside the public categories get -1 and are not released
        codes = pd.Index(names).get_indexer(pd.Index(series.astype(str))).astype(np.int64)
    else:
        lim = _bounds(series, bounds, column)
        edges = (
            np.linspace(lim[0], lim[1], bins + 1)
            if isinstance(bins, int)
            else np.asarray(bins, float)
        )
        numbers = _numbers(series, column)
        if isinstance(bins, int):  # equal widths: arithmetic instead of a search per value
            where = np.floor((numbers - edges[0]) * (bins / (edges[-1] - edges[0])))
        else:
            where = np.digitize(numbers, edges[1:-1]).astype(float)
        # clamped as floats: +inf belongs in the last bin (cast first, it wrapped to the first)
        position = np.clip(where, 0, len(edges) - 2)
        names = [f"[{edges[i]:g}, {edges[i + 1]:g})" for i in range(len(edges) - 1)]
        codes = position.astype(np.int64)

    def compute() -> DPResult:
        counts, scale = _category_counts(codes, len(names), epsilon, bound)
        value = dict(zip(names, counts.astype(int).tolist(), strict=True))
        return DPResult(
            f"histogram({column})",
            value,
            epsilon,
            0.0,
            scale,
            _laplace_error(scale),
            neighbours=unit,
        )

    return _run(accountant, frame, _what(f"histogram({column})", person, bound), epsilon, compute)


def grouped_count(
    frame: pd.DataFrame,
    by: str,
    *,
    categories: Sequence[str],
    epsilon: float,
    accountant: Accountant | None,
) -> DPResult:
    """Records per group; the groups are public ``categories``."""
    return histogram(frame, by, categories=categories, epsilon=epsilon, accountant=accountant)


def grouped_mean(
    frame: pd.DataFrame,
    column: str,
    by: str,
    *,
    categories: Sequence[str],
    bounds: tuple[float, float] | None = None,
    epsilon: float,
    accountant: Accountant | None,
) -> DPResult:
    """Mean of ``column`` per group. Groups are disjoint, so each group's mean (noisy sum and
    count, half of ``epsilon`` each) costs ``epsilon`` once in total (parallel composition)."""
    require_columns(frame, [column, by], where="dp")
    _require_numeric(frame[column], column)
    lim = _bounds(frame[column], bounds, column)
    name = f"grouped_mean({column} by {by})"

    def compute() -> DPResult:
        answers: dict[str, float] = {}
        scales: dict[str, float] = {}
        keys = frame[by].astype(str)
        for group in categories:
            values = _numbers(frame.loc[keys == str(group), column], column)
            total, sum_scale = _noisy_sum(values, lim, epsilon / 2)
            n, count_scale = _noisy_count(values, epsilon / 2)
            answers[str(group)] = min(max(total / max(n, 1.0), lim[0]), lim[1])
            scales = {"sum": sum_scale, "count": count_scale}
        return DPResult(name, answers, epsilon, 0.0, scales, None, bounds=lim)

    return _run(accountant, frame, name, epsilon, compute)
