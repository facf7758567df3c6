"""DP models: each fit is charged to the ledger, exactly; failures and overspends fit nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from veil import dp
from veil.dp import models
from veil.exceptions import BudgetExceededError, ParameterError, PrivacyLeakWarning

X, Y = make_classification(1500, 5, n_informative=3, random_state=0)
BOUNDS = (X.min(axis=0), X.max(axis=0))
NORM = float(np.linalg.norm(X, axis=1).max())


def _gaussian_nb(acc: dp.Accountant, e: float) -> models.GaussianNB:
    return models.GaussianNB(epsilon=e, bounds=BOUNDS, accountant=acc, random_state=0)


def _logistic(acc: dp.Accountant, e: float) -> models.LogisticRegression:
    return models.LogisticRegression(epsilon=e, data_norm=NORM, accountant=acc, random_state=0)


def _forest(acc: dp.Accountant, e: float) -> models.RandomForestClassifier:
    return models.RandomForestClassifier(
        epsilon=e, bounds=BOUNDS, classes=[0, 1], accountant=acc, random_state=0
    )


def _kmeans(acc: dp.Accountant, e: float) -> models.KMeans:
    return models.KMeans(n_clusters=2, epsilon=e, bounds=BOUNDS, accountant=acc, random_state=0)


def _linear(acc: dp.Accountant, e: float) -> models.LinearRegression:
    return models.LinearRegression(
        epsilon=e, bounds_X=BOUNDS, bounds_y=(0, 1), accountant=acc, random_state=0
    )


def _pca(acc: dp.Accountant, e: float) -> models.PCA:
    return models.PCA(
        n_components=2, epsilon=e, data_norm=NORM, bounds=BOUNDS, accountant=acc, random_state=0
    )


FACTORIES = {
    "GaussianNB": _gaussian_nb,
    "LogisticRegression": _logistic,
    "RandomForestClassifier": _forest,
    "KMeans": _kmeans,
    "LinearRegression": _linear,
    "PCA": _pca,
}


@pytest.fixture
def accountant(tmp_path: Path) -> dp.Accountant:
    return dp.Accountant.create(tmp_path / "b.db", dp.Budget(500.0))


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_fit_spends_its_epsilon_once(name: str, accountant: dp.Accountant) -> None:
    model = FACTORIES[name](accountant, 0.7)
    model.fit(X, Y)
    assert model.budget_spent_.epsilon == pytest.approx(0.7)  # diffprivlib's own account
    entries = accountant.entries()
    assert [(e.what.split("(")[0], e.epsilon, e.status) for e in entries] == [
        (f"fit {name}", 0.7, "spent")
    ]
    twin = clone(model)
    assert twin.get_params()["epsilon"] == 0.7
    assert not hasattr(twin, "model_")


def test_overspend_fits_nothing_and_failures_spend_nothing(tmp_path: Path) -> None:
    acc = dp.Accountant.create(tmp_path / "b.db", dp.Budget(1.0))
    with pytest.raises(BudgetExceededError):
        models.GaussianNB(epsilon=2.0, bounds=BOUNDS, accountant=acc).fit(X, Y)
    with pytest.raises(ParameterError, match="low < high"):
        models.GaussianNB(epsilon=0.5, bounds=(1.0, 0.0), accountant=acc).fit(X, Y)
    assert acc.entries() == []
    with pytest.raises(ParameterError, match="accountant must be given"):
        models.GaussianNB(epsilon=0.5, bounds=BOUNDS).fit(X, Y)


def test_missing_bounds_warn_that_they_leak(accountant: dp.Accountant) -> None:
    with pytest.warns(PrivacyLeakWarning, match="feature bounds were inferred"):
        models.GaussianNB(epsilon=1.0, accountant=accountant).fit(X, Y)


def test_accuracy_grows_with_epsilon(accountant: dp.Accountant) -> None:
    """Seeded, averaged over 8 fits: epsilon 10 beats epsilon 0.05 by a clear margin."""
    x_train, x_test, y_train, y_test = train_test_split(X, Y, random_state=1)

    def accuracy(epsilon: float) -> float:
        scores = [
            models.GaussianNB(
                epsilon=epsilon, bounds=BOUNDS, accountant=accountant, random_state=seed
            )
            .fit(x_train, y_train)
            .score(x_test, y_test)
            for seed in range(8)
        ]
        return float(np.mean(scores))

    assert accuracy(10.0) > accuracy(0.05) + 0.1
