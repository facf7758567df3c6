"""Differentially private models: diffprivlib's estimators, each fit charged to veil's ledger.

Every fit is check -> compute -> spend: the ledger reserves ``epsilon`` first, diffprivlib
fits with a private accountant of its own (never its hidden global default), and
``budget_spent_`` records what that accountant saw. Feature bounds (or the data norm) are
parameters; left out, they are inferred from the data with a ``PrivacyLeakWarning``, because
the inference itself leaks, as diffprivlib says too.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from veil.dp.budget import Accountant, Budget, dataset_id
from veil.exceptions import MissingExtraError, ParameterError, PrivacyLeakWarning

__all__ = [
    "PCA",
    "GaussianNB",
    "KMeans",
    "LinearRegression",
    "LogisticRegression",
    "RandomForestClassifier",
]


def _diffprivlib() -> Any:
    try:
        import diffprivlib
    except ImportError as err:
        raise MissingExtraError("DP models need diffprivlib: pip install 'veil[dp]'") from err
    return diffprivlib


def _leak(what: str) -> None:
    warnings.warn(
        f"{what} inferred from the training data: this leaks outside the privacy guarantee; "
        "pass it from domain knowledge instead",
        PrivacyLeakWarning,
        stacklevel=4,
    )


class _DPEstimator(BaseEstimator):
    """Shared fit/predict; subclasses name their diffprivlib class and their parameters."""

    _dp_name: ClassVar[str]
    epsilon: float
    accountant: Accountant | None

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        raise NotImplementedError

    def fit(self, X: Any, y: Any = None) -> _DPEstimator:
        if self.accountant is None:
            raise ParameterError(
                "accountant must be given: every DP fit is charged to a budget "
                "(veil.dp.Accountant.create(path, Budget(epsilon=3)))"
            )
        features = np.asarray(X, dtype=float)
        target = None if y is None else np.asarray(y)
        params = self._dp_params(features, target)
        library = _diffprivlib()
        what = f"fit {type(self).__name__}(epsilon={self.epsilon:g})"
        data = pd.DataFrame(features)
        with self.accountant.spend(self.epsilon, 0.0, what=what, dataset=dataset_id(data)):
            local = library.BudgetAccountant()
            model = getattr(library.models, self._dp_name)(**params, accountant=local)
            with warnings.catch_warnings():
                # bounds were given or already warned about by veil, in veil's words
                warnings.filterwarnings("ignore", category=library.utils.PrivacyLeakWarning)
                model.fit(features) if target is None else model.fit(features, target)
        spent_epsilon, spent_delta = local.total()
        self.budget_spent_ = Budget(float(spent_epsilon), float(spent_delta))
        self.model_ = model
        for attribute in (
            "classes_",
            "n_features_in_",
            "coef_",
            "intercept_",
            "cluster_centers_",
            "components_",
            "explained_variance_ratio_",
        ):
            if hasattr(model, attribute):
                setattr(self, attribute, getattr(model, attribute))
        return self

    def predict(self, X: Any) -> np.ndarray:
        return self.model_.predict(np.asarray(X, dtype=float))

    def score(self, X: Any, y: Any) -> float:
        return float(self.model_.score(np.asarray(X, dtype=float), np.asarray(y)))


def _feature_bounds(bounds: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if bounds is None:
        _leak("feature bounds were")
        return X.min(axis=0), X.max(axis=0)
    low, high = (np.broadcast_to(np.asarray(b, dtype=float), (X.shape[1],)) for b in bounds)
    if np.any(low >= high):
        raise ParameterError("bounds must be (low, high) with low < high for every feature")
    return low, high


def _data_norm(norm: float | None, X: np.ndarray) -> float:
    if norm is None:
        _leak("the data norm was")
        return float(np.linalg.norm(X, axis=1).max())
    return float(norm)


class GaussianNB(_DPEstimator):
    """diffprivlib's Gaussian naive Bayes, its epsilon charged to the ledger when fitted."""

    _dp_name = "GaussianNB"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        priors: Any = None,
        var_smoothing: float = 1e-9,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.epsilon, self.bounds, self.priors = epsilon, bounds, priors
        self.var_smoothing, self.random_state, self.accountant = (
            var_smoothing,
            random_state,
            accountant,
        )

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "bounds": _feature_bounds(self.bounds, X),
            "priors": self.priors,
            "var_smoothing": self.var_smoothing,
            "random_state": self.random_state,
        }

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of ``X`` (the model's noisy parameters; no further privacy cost)."""
        return self.model_.predict_proba(np.asarray(X, dtype=float))


class LogisticRegression(_DPEstimator):
    """diffprivlib's logistic regression (objective perturbation), its epsilon charged to the
    ledger when fitted."""

    _dp_name = "LogisticRegression"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        data_norm: float | None = None,
        C: float = 1.0,
        fit_intercept: bool = True,
        max_iter: int = 100,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.epsilon, self.data_norm, self.C = epsilon, data_norm, C
        self.fit_intercept, self.max_iter = fit_intercept, max_iter
        self.random_state, self.accountant = random_state, accountant

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "data_norm": _data_norm(self.data_norm, X),
            "C": self.C,
            "fit_intercept": self.fit_intercept,
            "max_iter": self.max_iter,
            "random_state": self.random_state,
        }

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of ``X`` (the model's noisy parameters; no further privacy cost)."""
        return self.model_.predict_proba(np.asarray(X, dtype=float))


class RandomForestClassifier(_DPEstimator):
    """diffprivlib's random forest, its epsilon charged to the ledger when fitted."""

    _dp_name = "RandomForestClassifier"

    def __init__(
        self,
        *,
        n_estimators: int = 10,
        epsilon: float = 1.0,
        bounds: Any = None,
        classes: Any = None,
        max_depth: int = 5,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.n_estimators, self.epsilon, self.bounds, self.classes = (
            n_estimators,
            epsilon,
            bounds,
            classes,
        )
        self.max_depth, self.random_state, self.accountant = max_depth, random_state, accountant

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        classes = self.classes
        if classes is None and y is not None:
            _leak("the classes were")
            classes = np.unique(y)
        return {
            "n_estimators": self.n_estimators,
            "epsilon": self.epsilon,
            "bounds": _feature_bounds(self.bounds, X),
            "classes": classes,
            "max_depth": self.max_depth,
            "random_state": self.random_state,
        }

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of ``X`` (the model's noisy parameters; no further privacy cost)."""
        return self.model_.predict_proba(np.asarray(X, dtype=float))


class KMeans(_DPEstimator):
    """diffprivlib's k-means, its epsilon charged to the ledger when fitted."""

    _dp_name = "KMeans"

    def __init__(
        self,
        *,
        n_clusters: int = 8,
        epsilon: float = 1.0,
        bounds: Any = None,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.n_clusters, self.epsilon, self.bounds = n_clusters, epsilon, bounds
        self.random_state, self.accountant = random_state, accountant

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        return {
            "n_clusters": self.n_clusters,
            "epsilon": self.epsilon,
            "bounds": _feature_bounds(self.bounds, X),
            "random_state": self.random_state,
        }


class LinearRegression(_DPEstimator):
    """diffprivlib's linear regression, its epsilon charged to the ledger when fitted."""

    _dp_name = "LinearRegression"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds_X: Any = None,
        bounds_y: Any = None,
        fit_intercept: bool = True,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.epsilon, self.bounds_X, self.bounds_y = epsilon, bounds_X, bounds_y
        self.fit_intercept, self.random_state, self.accountant = (
            fit_intercept,
            random_state,
            accountant,
        )

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        bounds_y = self.bounds_y
        if bounds_y is None and y is not None:
            _leak("the target bounds were")
            bounds_y = (float(np.min(y)), float(np.max(y)))
        return {
            "epsilon": self.epsilon,
            "bounds_X": _feature_bounds(self.bounds_X, X),
            "bounds_y": bounds_y,
            "fit_intercept": self.fit_intercept,
            "random_state": self.random_state,
        }


class PCA(_DPEstimator):
    """diffprivlib's principal component analysis, its epsilon charged to the ledger when fitted."""

    _dp_name = "PCA"

    def __init__(
        self,
        *,
        n_components: int | None = None,
        epsilon: float = 1.0,
        data_norm: float | None = None,
        bounds: Any = None,
        random_state: Any = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.n_components, self.epsilon, self.data_norm = n_components, epsilon, data_norm
        self.bounds, self.random_state, self.accountant = bounds, random_state, accountant

    def _dp_params(self, X: np.ndarray, y: np.ndarray | None) -> dict[str, Any]:
        return {
            "n_components": self.n_components,
            "epsilon": self.epsilon,
            "data_norm": _data_norm(self.data_norm, X),
            "bounds": _feature_bounds(self.bounds, X),
            "random_state": self.random_state,
        }

    def transform(self, X: Any) -> np.ndarray:
        """``X`` projected on the DP principal components (no further privacy cost)."""
        return self.model_.transform(np.asarray(X, dtype=float))
