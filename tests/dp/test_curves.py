"""Error and accuracy against epsilon, and their plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB as PlainGaussianNB

from veil import dp
from veil.dp import models
from veil.dp.curves import accuracy_vs_epsilon, error_vs_epsilon, plot_curve


def test_error_shrinks_with_epsilon_and_plots(tmp_path: Path) -> None:
    acc = dp.Accountant.create(tmp_path / "b.db", dp.Budget(1e4))
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"Age": rng.integers(18, 90, 400)})
    table = error_vs_epsilon(
        frame, "Age", bounds=(18, 90), epsilons=[0.05, 0.5, 5.0], accountant=acc, repeats=30
    )
    errors = table["mean_abs_error"].tolist()
    assert errors[0] > errors[1] > errors[2]  # more epsilon, less error
    path = tmp_path / "error.svg"
    plot_curve(table, path, y="mean_abs_error", title="DP mean of Age", ylabel="error", log_y=True)
    assert path.read_text().startswith("<?xml")


def test_accuracy_curve_against_the_non_private_model(tmp_path: Path) -> None:
    acc = dp.Accountant.create(tmp_path / "b.db", dp.Budget(1e4))
    X, y = make_classification(1200, 5, n_informative=3, random_state=0)
    data = train_test_split(X, y, random_state=0)
    bounds = (X.min(axis=0), X.max(axis=0))
    table = accuracy_vs_epsilon(
        lambda e: models.GaussianNB(epsilon=e, bounds=bounds, accountant=acc),
        PlainGaussianNB(),
        tuple(data),
        epsilons=[0.01, 10.0],
        repeats=6,
    )
    assert table["accuracy"].iloc[1] > table["accuracy"].iloc[0]
    assert table["accuracy"].iloc[1] <= table["non_private"].iloc[0] + 0.05
    path = tmp_path / "accuracy.png"
    plot_curve(
        table, path, y="accuracy", title="GaussianNB", ylabel="accuracy", reference="non_private"
    )
    assert path.read_bytes()[:4] == b"\x89PNG"
