"""Models whose weights are one vector, trained locally from the global weights: what FedAvg
averages.

- ``logistic``: scikit-learn's ``SGDClassifier`` with the log loss (logistic regression,
  binary or one-vs-rest), a few epochs of ``partial_fit`` per round from the global weights.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from veil.exceptions import ParameterError

#: the models ``veil fl`` trains
MODELS = ("logistic",)


@dataclass(frozen=True)
class Logistic:
    """Logistic regression as a weight vector ``[coef.ravel(), intercept]``."""

    classes: int
    width: int
    epochs: int = 2
    alpha: float = 1e-4
    learning_rate: float = 0.01

    @property
    def outputs(self) -> int:
        """Rows of the coefficient matrix (one for two classes)."""
        return 1 if self.classes == 2 else self.classes

    @property
    def size(self) -> int:
        """Length of the weight vector."""
        return self.outputs * (self.width + 1)

    def initial(self) -> np.ndarray:
        """Zeros: every party starts from the same model."""
        return np.zeros(self.size)

    def _estimator(self, weights: np.ndarray, seed: int) -> object:
        from sklearn.linear_model import SGDClassifier

        model = SGDClassifier(loss="log_loss", alpha=self.alpha, learning_rate="constant",
                              eta0=self.learning_rate, random_state=seed)  # fmt: skip
        k = self.outputs
        model.coef_ = weights[: k * self.width].reshape(k, self.width).copy()
        model.intercept_ = weights[k * self.width :].copy()
        model.classes_ = np.arange(self.classes)
        return model

    def fit(self, weights: np.ndarray, x: np.ndarray, y: np.ndarray, *, seed: int) -> np.ndarray:
        """Weights after ``epochs`` passes over this party's rows, from ``weights``."""
        model = self._estimator(weights, seed)
        known = y >= 0
        x, y = x[known], y[known]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(self.epochs):
                model.partial_fit(x, y, classes=np.arange(self.classes))  # type: ignore[attr-defined]
        coef, intercept = model.coef_, model.intercept_  # type: ignore[attr-defined]
        return np.concatenate([np.ravel(coef), np.ravel(intercept)])

    def predict(self, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Class codes."""
        k = self.outputs
        scores = x @ weights[: k * self.width].reshape(k, self.width).T + weights[k * self.width :]
        if k == 1:
            return (scores[:, 0] > 0).astype(int)
        return np.argmax(scores, axis=1)

    def correct(self, weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
        """Rows predicted right, and rows with a known class."""
        known = y >= 0
        return int((self.predict(weights, x[known]) == y[known]).sum()), int(known.sum())


def make_model(name: str, *, classes: int, width: int, epochs: int = 2) -> Logistic:
    """The model called ``name``."""
    if name not in MODELS:
        raise ParameterError(f"model must be one of {MODELS}, got {name!r}")
    return Logistic(classes, width, epochs=epochs)
