"""Models whose weights are one vector, trained locally from the global weights: what FedAvg
averages.

- ``logistic``: scikit-learn's ``SGDClassifier`` with the log loss (logistic regression,
  binary or one-vs-rest), a few epochs of ``partial_fit`` per round from the global weights;
- ``linear``: the same with the hinge loss (a linear support-vector classifier);
- ``mlp``: a small torch network (one hidden layer of 32 ReLU units, softmax output), SGD
  with momentum on mini-batches; its weights flattened with torch's own
  ``parameters_to_vector`` (``veil[ml]``: torch 2.13.0, CPU build).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.exceptions import MissingExtraError, ParameterError

#: the models ``veil fl`` trains
MODELS = ("logistic", "linear", "mlp")


@dataclass(frozen=True)
class Logistic:
    """Logistic regression as a weight vector ``[coef.ravel(), intercept]``."""

    classes: int
    width: int
    epochs: int = 2
    alpha: float = 1e-4
    learning_rate: float = 0.01
    loss: str = "log_loss"  # or "hinge": a linear SVM

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

        model = SGDClassifier(
            loss=self.loss,
            alpha=self.alpha,
            learning_rate="constant",
            eta0=self.learning_rate,
            random_state=seed,
        )
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


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise MissingExtraError("--model mlp needs torch: pip install 'veil[ml]'") from err
    return torch


@dataclass(frozen=True)
class MLP:
    """One hidden layer of ``hidden`` ReLU units; weights as one vector."""

    classes: int
    width: int
    epochs: int = 1
    hidden: int = 32
    learning_rate: float = 0.05
    batch: int = 64

    def _network(self) -> Any:
        torch = _torch()
        return torch.nn.Sequential(
            torch.nn.Linear(self.width, self.hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(self.hidden, self.classes),
        )

    @property
    def size(self) -> int:
        """Length of the weight vector."""
        return (self.width + 1) * self.hidden + (self.hidden + 1) * self.classes

    def initial(self) -> np.ndarray:
        """torch's default initialization under a fixed seed: every party (and every run)
        starts from the same network (zeros would leave the hidden units all alike)."""
        torch = _torch()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            network = self._network()
        return self._vector(network)

    def _vector(self, network: Any) -> np.ndarray:
        torch = _torch()
        return torch.nn.utils.parameters_to_vector(network.parameters()).detach().double().numpy()

    def _load(self, weights: np.ndarray) -> Any:
        torch = _torch()
        network = self._network().double()
        # a copy: torch's parameters become views of this vector, and training writes them
        vector = torch.tensor(np.asarray(weights, dtype=float), dtype=torch.float64)
        torch.nn.utils.vector_to_parameters(vector, network.parameters())
        return network

    def fit(self, weights: np.ndarray, x: np.ndarray, y: np.ndarray, *, seed: int) -> np.ndarray:
        """Weights after ``epochs`` passes of mini-batch SGD over this party's rows."""
        torch = _torch()
        known = y >= 0
        inputs, labels = torch.from_numpy(x[known]), torch.from_numpy(y[known]).long()
        network = self._load(weights)
        optimizer = torch.optim.SGD(network.parameters(), lr=self.learning_rate, momentum=0.9)
        generator = torch.Generator().manual_seed(seed % 2**63)
        loss = torch.nn.CrossEntropyLoss()
        for _ in range(self.epochs):
            order = torch.randperm(len(labels), generator=generator)
            for start in range(0, len(order), self.batch):
                take = order[start : start + self.batch]
                optimizer.zero_grad()
                loss(network(inputs[take]), labels[take]).backward()
                optimizer.step()
        return self._vector(network)

    def predict(self, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Class codes."""
        torch = _torch()
        with torch.no_grad():
            scores = self._load(weights)(torch.from_numpy(np.asarray(x, float)))
        return scores.argmax(dim=1).numpy()

    def correct(self, weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
        """Rows predicted right, and rows with a known class."""
        known = y >= 0
        return int((self.predict(weights, x[known]) == y[known]).sum()), int(known.sum())


def make_model(name: str, *, classes: int, width: int, epochs: int = 2) -> Logistic | MLP:
    """The model called ``name``."""
    if name not in MODELS:
        raise ParameterError(f"model must be one of {MODELS}, got {name!r}")
    if name == "mlp":
        return MLP(classes, width, epochs=epochs)
    return Logistic(classes, width, epochs=epochs, loss="hinge" if name == "linear" else "log_loss")
