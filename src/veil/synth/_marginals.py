"""Column by column: each column's distribution fitted on its own, sampled on its own.

- categories (text, booleans, numbers with few values): their frequencies;
- continuous numbers: the best of a stated list of scipy distributions by a stated criterion
  (AIC by default, or the KS statistic), every candidate's fit kept in ``fit_report_``; draws
  kept inside the observed range, integers rounded;
- dates: as continuous days since 1970, written back as dates (at the column's resolution);
- missing values: each column's missing rate kept;
- direct identifiers (the scan's, or those named): never modelled, new values for every row
  (``_identifiers``); free text is left out (resampling it would copy real notes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from veil.exceptions import InputError, ParameterError
from veil.progress import Progress
from veil.schema import DAY_NS, ColumnRole, as_numbers, is_continuous, require_columns
from veil.synth._base import Synthesizer, refuse_held
from veil.synth._identifiers import PATTERNS, PROVIDERS, FreshIdentifiers
from veil.transforms.resample import DEFAULT_CANDIDATES, fit_distributions

#: a number holding at least this share of a continuous column's rows is a point mass
ATOM_SHARE = 0.05
#: continuous fits use a random sample of at most this many values (maximum likelihood on
#: 5,000 values is precise to a few percent, and ten times faster than on 50,000)
FIT_ROWS = 5_000
_EPS = 1e-9


def _ppf(dist: Any, q: np.ndarray, params: tuple[float, ...]) -> np.ndarray:
    """``dist.ppf(q, *params)``. Where scipy has no quantile function for the family
    (``exponnorm``) it finds each quantile by its own root search, one value at a time (1.5 s
    for a table); here all of them are found at once, by bisection on the CDF to scipy's own
    tolerance. The two agree to the CDF's resolution: within 1e-9 of the family's scale in its
    body, within 1e-5 of it in the far tails (below 1e-4 or above 1 - 1e-4), where the CDF is
    flat to its last digit (``tests/synth/test_quantiles.py``)."""
    if type(dist)._ppf is not stats.rv_continuous._ppf:  # a quantile function of its own
        return np.asarray(dist.ppf(q, *params), dtype=float)
    frozen = dist(*params)
    spread = float(frozen.std())
    step = np.full(len(q), spread if np.isfinite(spread) and spread > 0 else 1.0)
    centre = float(frozen.median())
    low = np.full(len(q), centre if np.isfinite(centre) else 0.0) - step
    high = low + 2 * step
    for _ in range(2048):  # widen each bracket until it holds its quantile
        below, above = frozen.cdf(low) > q, frozen.cdf(high) < q
        if not (below.any() or above.any()):
            break
        low, high = low - below * step, high + above * step
        step = np.where(below | above, 2 * step, step)
    for _ in range(2048):
        middle = (low + high) / 2
        short = frozen.cdf(middle) < q
        low, high = np.where(short, middle, low), np.where(short, high, middle)
        if np.all(high - low <= _XTOL + 4 * np.finfo(float).eps * np.abs(middle)):
            break
    return (low + high) / 2


#: scipy's tolerance for the quantiles it finds by a root search (``rv_continuous.xtol``).
_XTOL = 1e-14


@dataclass
class ColumnModel:
    """One column's fitted model."""

    name: str
    kind: str  # "category", "continuous", "date" or "identifier"
    missing: float
    integer: bool = False
    categories: np.ndarray | None = None  # most frequent first
    probabilities: np.ndarray | None = None
    distribution: str | None = None
    params: tuple[float, ...] = ()
    low: float = float("nan")
    high: float = float("nan")
    resolution: str = "s"  # dates: "D", "min" or "s", the finest the real dates use
    fit_report: list[dict[str, Any]] = field(default_factory=list)
    fresh: FreshIdentifiers | None = None
    atoms: np.ndarray = field(default_factory=lambda: np.empty(0))  # point masses
    atom_shares: np.ndarray = field(default_factory=lambda: np.empty(0))
    _table: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """Values at the quantiles ``u`` (0 < u < 1) of this column's distribution."""
        if self.kind == "category":
            assert self.categories is not None
            assert self.probabilities is not None
            edges = np.cumsum(self.probabilities)
            index = np.minimum(np.searchsorted(edges, u, side="right"), len(edges) - 1)
            return self.categories[index]
        grid, quantiles = self._quantile_table()
        values = np.interp(np.clip(u, _EPS, 1 - _EPS), grid, quantiles)
        return np.round(values) if self.integer else values

    def _quantile_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The quantile function on a grid, clipped to the observed range: the fitted family's
        (scipy's ppf has no closed form for most, a root search per value, so sampling
        interpolates in this table) mixed with the point masses."""
        if self._table is None:
            tail = np.logspace(-9, -2, 64)
            grid = np.unique(np.concatenate([tail, np.linspace(0.01, 0.99, 1961), 1 - tail]))
            quantiles = _ppf(getattr(stats, str(self.distribution)), grid, self.params)
            quantiles = np.where(np.isfinite(quantiles), quantiles, np.nan)
            quantiles = pd.Series(quantiles).ffill().bfill().to_numpy()
            quantiles = np.clip(np.maximum.accumulate(quantiles), self.low, self.high)
            if len(self.atoms):  # the mixture: F = sum of atoms below + rest * G
                rest = 1 - self.atom_shares.sum()
                points = np.concatenate([quantiles, self.atoms])
                weights = np.concatenate([rest * np.diff(grid, prepend=0), self.atom_shares])
                order = np.argsort(points, kind="stable")
                points, cumulative = points[order], np.cumsum(weights[order])
                grid, quantiles = cumulative / cumulative[-1], points
            self._table = (grid, quantiles)
        return self._table

    def to_uniform(self, series: pd.Series, rng: np.random.Generator) -> np.ndarray:
        """Each present value's quantile (categories: a uniform draw inside the category's
        interval; numbers: the mid-rank), NaN where missing: the copula's input."""
        u = np.full(len(series), np.nan)
        present = series.notna().to_numpy()
        if self.kind == "category":
            assert self.categories is not None
            assert self.probabilities is not None
            upper = np.cumsum(self.probabilities)
            lower = upper - self.probabilities
            position = pd.Index(self.categories).get_indexer(series[present].to_numpy())
            u[present] = lower[position] + rng.random(present.sum()) * self.probabilities[position]
        else:
            ranks = stats.rankdata(as_numbers(series[present]))
            u[present] = ranks / (len(ranks) + 1)
        return u

    def finish(self, values: np.ndarray, dtype: Any, blank: np.ndarray) -> pd.Series:
        """Sampled values back in the column's type, missing where ``blank``."""
        if self.kind == "date":
            stamps = pd.Series(pd.to_datetime(np.round(values * DAY_NS).astype("int64"), unit="ns"))
            rounded = (
                stamps.dt.floor("D") if self.resolution == "D" else stamps.dt.round(self.resolution)
            )
            return rounded.mask(blank).rename(self.name)
        if self.kind == "category":
            return in_dtype(pd.Series(values, dtype=object).mask(blank), dtype).rename(self.name)
        numbers = pd.Series(values.astype(float)).mask(blank)
        if self.integer:
            numbers = numbers.astype("Int64" if blank.any() else "int64")
        return numbers.rename(self.name)

    def describe(self) -> str:
        """How this column is modelled, in one line."""
        if self.kind == "identifier":
            assert self.fresh is not None
            known = self.fresh.entity in PROVIDERS or self.fresh.entity in PATTERNS
            how = "its form" if known else "the values' shape"
            return f"{self.name}: new identifiers ({self.fresh.entity or 'key'}, from {how})"
        if self.kind == "category":
            assert self.categories is not None
            return f"{self.name}: frequencies of {len(self.categories)} values"
        best = self.fit_report[0]
        return (
            f"{self.name}: {self.distribution} (AIC {best['aic']:.0f}, "
            f"KS {best['ks_statistic']:.3f}){' as days' if self.kind == 'date' else ''}"
            + (
                f" and {len(self.atoms)} point masses ({_shown(self.atoms)})"
                if len(self.atoms)
                else ""
            )
        )


def refuse_copies(series: pd.Series, counts: pd.Series) -> None:
    """A text column of mostly distinct values the scan did not call an identifier, or one
    holding a direct identifier among its values: a model of its categories would hand real
    values back. One line naming the way out."""
    refuse_held(series, "its categories are what synthetic rows are drawn from")
    present = int(counts.sum())
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if not numeric and len(counts) > 0.5 * present and present >= 20:
        raise InputError(
            f"column {series.name!r} has {len(counts):,} distinct values in {present:,} rows "
            "and the scan found no identifier in it: resampling it would copy real values; "
            "name it in identifiers (new values) or leave_out"
        )


def in_dtype(values: pd.Series, dtype: Any) -> pd.Series:
    """Sampled categories back in the real column's dtype when they fit it (with no gaps)."""
    if values.notna().all():
        with contextlib.suppress(TypeError, ValueError):
            return values.astype(dtype)
    return values


def _shown(values: np.ndarray) -> str:
    return ", ".join(f"{v:g}" for v in values)


class Marginals(Synthesizer):
    """Synthetic rows whose columns follow the real columns' distributions, independently.

    ``identifiers``: columns to give new values (default: the scan's identifiers); ``leave_out``
    columns are not synthesized. ``candidates`` and ``criterion`` choose continuous fits.
    """

    method = "marginals"
    #: (identifiers, their entities, columns left out) when the scan has run already (a
    #: mixture's whole-table fit: the scan decided before the fit began); None: scan in ``fit``
    known_roles: tuple[set[str], dict[str, str], dict[str, str]] | None = None

    def __init__(
        self,
        *,
        candidates: Sequence[str] = DEFAULT_CANDIDATES,
        criterion: str = "aic",
        identifiers: Sequence[str] | None = None,
        leave_out: Sequence[str] = (),
        locale: str = "en_KE",
        progress: Callable[[str], None] | None = None,
    ) -> None:
        if criterion not in ("aic", "ks"):
            raise ParameterError(f"criterion must be 'aic' or 'ks', got {criterion!r}")
        self.candidates = tuple(candidates)
        self.criterion = criterion
        self.identifiers = identifiers
        self.leave_out = tuple(leave_out)
        self.locale = locale
        self.progress: Callable[[str], None] = progress or Progress()

    # ---------------------------------------------------------------------------------- fit
    def _fit(self, frame: pd.DataFrame, seed: int | None) -> None:
        """Learn each column's model from ``frame`` (identifiers and free text found by the
        scan unless ``identifiers`` was given); ``seed`` fixes the fitting's random parts."""
        if len(frame) < 2:
            raise InputError(f"synthesis needs at least 2 rows to learn from, got {len(frame)}")
        require_columns(frame, list(self.leave_out), where="leave_out")
        rng = np.random.default_rng(seed)
        known = self.known_roles
        identifiers, entities, left_out = known if known is not None else self._roles(frame)
        self.left_out_: dict[str, str] = left_out
        self.models_: dict[str, ColumnModel] = {}
        self.dtypes_: dict[str, Any] = {}
        for name in frame.columns:
            if name in left_out:
                continue
            self.progress(f"fitting {name}")
            series = frame[name]
            self.dtypes_[name] = series.dtype
            missing = float(series.isna().mean())
            if name in identifiers:
                fresh = FreshIdentifiers.fit(series, entities.get(name))
                self.models_[name] = ColumnModel(name, "identifier", missing, fresh=fresh)
                continue
            if series.notna().sum() == 0:
                raise InputError(f"column {name!r} has no values: leave it out")
            self.models_[name] = self._fit_column(series, missing, rng)
        self.n_rows_ = len(frame)

    def _roles(self, frame: pd.DataFrame) -> tuple[set[str], dict[str, str], dict[str, str]]:
        left_out = dict.fromkeys(self.leave_out, "left out as asked")
        if self.identifiers is not None:
            require_columns(frame, list(self.identifiers), where="identifiers")
            return set(self.identifiers), {}, left_out
        from veil.scan import scan  # the scan decides which columns are direct identifiers

        identifiers, entities = set(), {}
        for found in scan(frame, progress=self.progress).columns:
            if found.name in left_out:
                continue
            if found.free_text:
                left_out[found.name] = "free text: resampling it would copy real notes"
            elif found.role is ColumnRole.IDENTIFIER:
                identifiers.add(found.name)
                if found.entity:
                    entities[found.name] = found.entity
        return identifiers, entities, left_out

    def _fit_column(
        self, series: pd.Series, missing: float, rng: np.random.Generator
    ) -> ColumnModel:
        name = str(series.name)
        present = series.dropna()
        is_date = pd.api.types.is_datetime64_any_dtype(series)
        if is_continuous(present):
            values = as_numbers(present)
            model = ColumnModel(name, "date" if is_date else "continuous", missing)
            model.low, model.high = float(values.min()), float(values.max())
            # values that alone hold a good share of the rows (capital gain 0, 40 hours a week)
            # are point masses; a distribution is fitted to the rest
            shares = pd.Series(values).value_counts(normalize=True)
            atoms = shares[shares >= ATOM_SHARE].head(5)
            model.atoms, model.atom_shares = atoms.index.to_numpy(float), atoms.to_numpy()
            values = values[~np.isin(values, model.atoms)]
            model.fit_report = fit_distributions(
                values, self.candidates, self.criterion, rng, name=name, max_rows=FIT_ROWS
            )
            model.distribution = model.fit_report[0]["distribution"]
            model.params = tuple(model.fit_report[0]["params"])
            model.integer = not is_date and bool(np.all(values == np.round(values)))
            if is_date:
                model.resolution = next(
                    (unit for unit in ("D", "min") if (present.dt.floor(unit) == present).all()),
                    "s",
                )
            return model
        counts = present.value_counts()
        refuse_copies(series, counts)
        return ColumnModel(
            name,
            "category",
            missing,
            categories=counts.index.to_numpy(dtype=object),
            probabilities=(counts / counts.sum()).to_numpy(),
        )

    # ------------------------------------------------------------------------------- sample
    def _check_fitted(self) -> None:
        if not hasattr(self, "models_"):
            raise ParameterError(f"call fit(frame) before sample(): this {self.method} is empty")

    def _sample(self, n: int | None, seed: int | None) -> pd.DataFrame:
        self._check_fitted()
        rows = self.n_rows_ if n is None else int(n)
        if rows < 1:
            raise ParameterError(f"n must be at least 1, got {rows}")
        rng = np.random.default_rng(seed)
        uniforms = self._uniforms(rows, rng)
        return self._assemble(uniforms, rows, rng)

    def _uniforms(self, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {
            name: rng.random(rows) for name, m in self.models_.items() if m.kind != "identifier"
        }

    def _assemble(
        self, uniforms: dict[str, np.ndarray], rows: int, rng: np.random.Generator
    ) -> pd.DataFrame:
        out = {}
        for name, model in self.models_.items():
            blank = rng.random(rows) < model.missing
            if model.kind == "identifier":
                column = self._fresh(model, rows, rng, blank)
            else:
                column = model.finish(model.from_uniform(uniforms[name]), self.dtypes_[name], blank)
            out[name] = column.reset_index(drop=True)
        return pd.DataFrame(out)

    def _fresh(
        self, model: ColumnModel, rows: int, rng: np.random.Generator, blank: np.ndarray
    ) -> pd.Series:
        """New identifiers for ``rows`` rows, missing where ``blank``."""
        assert model.fresh is not None
        return model.fresh.sample(rows, rng, self.locale).mask(blank)

    def describe(self) -> list[str]:
        """One line per column: how it was modelled (for the CLI and the report)."""
        self._check_fitted()
        lines = [m.describe() for m in self.models_.values()]
        return lines + [f"{c}: {why}" for c, why in self.left_out_.items()]
