"""A Gaussian copula over the fitted marginals: the columns' dependence kept, on scipy alone
(SDV's ``copulas`` package is under the Business Source License).

Fit: each column's values become normal scores (numbers by their mid-ranks, categories by a
uniform draw inside their frequency interval, as SDV's frequency encoding does), and the
copula is the correlation matrix of those scores (a missing value scores 0, the mean). Sample:
correlated standard normals, through the normal CDF, through each column's fitted quantile
function (``Marginals``); missing values at each column's rate, independently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from veil.synth._marginals import Marginals


class GaussianCopula(Marginals):
    """Synthetic rows whose columns follow the real marginals and whose dependence follows the
    real rank correlations (``correlation_``, over ``copula_columns_``)."""

    method = "copula"

    def fit(self, frame: pd.DataFrame, *, seed: int | None = 0) -> GaussianCopula:
        """Fit the marginals, then the correlation of the columns' normal scores."""
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

    def _uniforms(self, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if not self.copula_columns_:
            return {}
        factor = np.linalg.cholesky(self.correlation_)
        normals = rng.standard_normal((rows, len(self.copula_columns_))) @ factor.T
        u = stats.norm.cdf(normals)
        return {name: u[:, j] for j, name in enumerate(self.copula_columns_)}


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
