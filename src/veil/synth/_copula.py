"""A Gaussian copula over the fitted marginals: the columns' dependence kept, on scipy alone
(SDV's ``copulas`` package is under the Business Source License).

Fit: each column's values become normal scores (numbers by their mid-ranks, categories by a
uniform draw inside their frequency interval, as SDV's frequency encoding does), and the
copula is the correlation matrix of those scores (a missing value scores 0, the mean). Sample:
correlated standard normals, through the normal CDF, through each column's fitted quantile
function (``Marginals``); missing values at each column's rate, independently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from veil.exceptions import ParameterError
from veil.schema import require_columns
from veil.synth._marginals import Marginals, in_dtype

#: a value of ``condition_on`` needs this many rows for a copula of its own
MIN_GROUP = 200


class GaussianCopula(Marginals):
    """Synthetic rows whose columns follow the real marginals and whose dependence follows the
    real rank correlations (``correlation_``, over ``copula_columns_``).

    ``condition_on``: categorical columns (the target a model will predict, and what it depends
    on most); then one copula per combination of their values with at least ``MIN_GROUP`` rows
    (marginals and correlations learnt from those rows alone), the rarer combinations from one
    copula of the whole table, rows in the real proportions. Finer conditioning keeps more of
    the dependence, and copies more of the real groups: measure it (``veil evaluate``). A
    single copula blurs how the other columns depend on a category; this keeps it.
    """

    method = "copula"

    def __init__(self, *, condition_on: str | Sequence[str] | None = None, **options: Any
                 ) -> None:  # fmt: skip
        super().__init__(**options)
        self.condition_on = condition_on

    def fit(self, frame: pd.DataFrame, *, seed: int | None = 0) -> GaussianCopula:
        """Fit the marginals, then the correlation of the columns' normal scores (per value of
        ``condition_on`` when given)."""
        if self.condition_on is not None:
            return self._fit_conditional(frame, seed)
        super().fit(frame, seed=seed)
        rng = np.random.default_rng(seed)
        self.copula_columns_ = [n for n, m in self.models_.items() if m.kind != "identifier"]
        self.progress("fitting the copula (rank correlations)")
        scores = np.zeros((len(frame), len(self.copula_columns_)))
        for j, name in enumerate(self.copula_columns_):
            u = self.models_[name].to_uniform(frame[name], rng)
            scores[:, j] = np.where(np.isnan(u), 0.0, stats.norm.ppf(u))
        self.correlation_ = _nearest_correlation(scores)
        return self

    def _fit_conditional(self, frame: pd.DataFrame, seed: int | None) -> GaussianCopula:
        names = self._conditions()
        require_columns(frame, names, where="condition_on")
        whole = GaussianCopula(**self._options()).fit(frame, seed=seed)  # roles, identifiers
        for name in names:
            if whole.models_[name].kind != "category":
                kind = whole.models_[name].kind
                raise ParameterError(
                    f"condition_on must name categorical columns; {name!r} is {kind}"
                )
        modelled = [n for n, m in whole.models_.items() if m.kind != "identifier"]
        options = {**self._options(), "identifiers": [], "progress": self.progress}
        self.parts_: dict[Any, GaussianCopula] = {}
        keys = (
            frame[names[0]].reset_index(drop=True)
            if len(names) == 1
            else pd.Series(list(zip(*(frame[n].to_numpy() for n in names), strict=True)))
        )
        shares = keys.value_counts(normalize=True, dropna=False)
        codes, values = pd.factorize(keys, use_na_sentinel=False)
        for code, value in enumerate(values):
            rows = frame.loc[codes == code, modelled]
            if len(rows) >= MIN_GROUP:
                self.progress(f"fitting the copula of {value}")
                self.parts_[value] = GaussianCopula(**options).fit(rows, seed=seed)
        self.shares_ = shares
        self.whole_ = whole
        self.models_, self.dtypes_, self.left_out_ = whole.models_, whole.dtypes_, whole.left_out_
        self.copula_columns_, self.correlation_ = whole.copula_columns_, whole.correlation_
        self.n_rows_ = len(frame)
        return self

    def _conditions(self) -> list[str]:
        on = self.condition_on
        return [on] if isinstance(on, str) else [str(c) for c in (on or ())]

    def _options(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "criterion": self.criterion,
                "identifiers": self.identifiers, "leave_out": self.leave_out,
                "locale": self.locale}  # fmt: skip

    def sample(self, n: int | None = None, *, seed: int | None = None) -> pd.DataFrame:
        """``n`` synthetic rows (default: as many as fitted); same seed, same rows."""
        if self.condition_on is None or not hasattr(self, "parts_"):
            return super().sample(n, seed=seed)
        rows = self.n_rows_ if n is None else int(n)
        if rows < 1:
            raise ParameterError(f"n must be at least 1, got {rows}")
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(rows, self.shares_.to_numpy())
        pieces = []
        for (value, _), count in zip(self.shares_.items(), counts, strict=True):
            if count == 0:
                continue
            part = self.parts_.get(value)
            seed_part = int(rng.integers(2**31))
            if part is not None:
                piece = part.sample(count, seed=seed_part)
            else:  # a rare combination: the whole table's copula, with its values set
                piece = self.whole_.sample(count, seed=seed_part)[part_columns(self)]
                names = self._conditions()
                components = cast(tuple[Any, ...], value) if len(names) > 1 else (value,)
                for name, component in zip(names, components, strict=True):
                    piece[name] = np.full(count, component, dtype=object)
            pieces.append(piece)
        body = pd.concat(pieces, ignore_index=True).iloc[rng.permutation(rows)]
        body = body.reset_index(drop=True)
        out = {}
        for column, model in self.models_.items():
            if model.kind == "identifier":  # new keys for every row, once, across the parts
                out[column] = self._fresh(model, rows, rng, rng.random(rows) < model.missing)
            elif model.kind == "category":
                out[column] = in_dtype(body[column], self.dtypes_[column])
            else:
                out[column] = body[column]
        return pd.DataFrame(out)

    def describe(self) -> list[str]:
        """One line per column: how it was modelled (for the CLI and the report)."""
        lines = super().describe()
        if self.condition_on is not None and hasattr(self, "parts_"):
            lines.append(
                f"one copula per value of {', '.join(self._conditions())}: "
                f"{len(self.parts_)} of {len(self.shares_)} values (the rest: the whole table's)"
            )
        return lines

    def _uniforms(self, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if not self.copula_columns_:
            return {}
        factor = np.linalg.cholesky(self.correlation_)
        normals = rng.standard_normal((rows, len(self.copula_columns_))) @ factor.T
        u = stats.norm.cdf(normals)
        return {name: u[:, j] for j, name in enumerate(self.copula_columns_)}


def part_columns(model: GaussianCopula) -> list[str]:
    return [n for n, m in model.models_.items() if m.kind != "identifier"]


def _nearest_correlation(scores: np.ndarray) -> np.ndarray:
    """The correlation matrix of ``scores``, made positive definite (eigenvalues at least
    1e-6, unit diagonal) so it has a Cholesky factor."""
    if scores.shape[1] == 1:
        return np.ones((1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.corrcoef(scores, rowvar=False)
    matrix = np.nan_to_num(matrix, nan=0.0)  # a constant column correlates with nothing
    np.fill_diagonal(matrix, 1.0)
    values, vectors = np.linalg.eigh(matrix)
    matrix = (vectors * np.maximum(values, 1e-6)) @ vectors.T
    scale = np.sqrt(np.diag(matrix))
    return matrix / np.outer(scale, scale)
