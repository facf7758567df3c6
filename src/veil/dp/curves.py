"""What epsilon buys: error of a statistic and accuracy of a model against epsilon, measured
by repeating DP releases (each charged to the accountant), and drawn with matplotlib for
people and for the report."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.dp import stats
from veil.dp.budget import Accountant
from veil.io import atomic_open
from veil.plotting import canvas, draw_curve, render


def error_vs_epsilon(
    frame: pd.DataFrame,
    column: str,
    *,
    bounds: tuple[float, float],
    epsilons: Sequence[float],
    accountant: Accountant,
    statistic: str = "mean",
    repeats: int = 20,
) -> pd.DataFrame:
    """Mean absolute error of a DP ``statistic`` (mean, sum, count) at each epsilon.

    Every point repeats the release ``repeats`` times, each charged: draw it on public or
    simulated data of the same shape, not on the data the budget protects. The table holds
    errors only, never the exact answer (a report that shows it would undo the noise)."""
    truth = {"mean": frame[column].mean(), "sum": frame[column].sum(), "count": len(frame)}[
        statistic
    ]
    rows = []
    for epsilon in epsilons:
        answers = []
        bound = None
        for _ in range(repeats):
            if statistic == "count":
                result = stats.count(frame, epsilon=epsilon, accountant=accountant)
            else:
                function = getattr(stats, statistic)
                result = function(
                    frame, column, bounds=bounds, epsilon=epsilon, accountant=accountant
                )
            answers.append(result.value)
            bound = result.error95
        errors = np.abs(np.asarray(answers, dtype=float) - float(truth))
        rows.append(
            {"epsilon": epsilon, "mean_abs_error": float(errors.mean()), "error95_bound": bound}
        )
    return pd.DataFrame(rows)


def accuracy_vs_epsilon(
    make_model: Callable[[float], Any],
    baseline: Any,
    data: tuple[Any, Any, Any, Any],
    *,
    epsilons: Sequence[float],
    repeats: int = 5,
) -> pd.DataFrame:
    """Test accuracy of ``make_model(epsilon)`` (a veil DP model) at each epsilon, averaged over
    ``repeats`` fits, beside the non-private ``baseline``'s."""
    x_train, x_test, y_train, y_test = data
    reference = float(baseline.fit(x_train, y_train).score(x_test, y_test))
    rows = []
    for epsilon in epsilons:
        scores = [
            make_model(epsilon).fit(x_train, y_train).score(x_test, y_test) for _ in range(repeats)
        ]
        rows.append(
            {
                "epsilon": epsilon,
                "accuracy": float(np.mean(scores)),
                "accuracy_sd": float(np.std(scores)),
                "non_private": reference,
            }
        )
    return pd.DataFrame(rows)


def plot_curve(
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    y: str,
    title: str,
    ylabel: str,
    reference: str | None = None,
    log_y: bool = False,
) -> None:
    """A line against epsilon (log axis), with an optional reference line; PNG or SVG by the
    file's extension, written atomically."""
    figure, (axes,) = canvas(6, 3.6)
    draw_curve(axes, table, y=y, ylabel=ylabel, reference=reference)
    if log_y:
        axes.set_yscale("log")
    axes.set_title(title)
    data = render(figure, format=str(path).rsplit(".", 1)[-1].lower())
    with atomic_open(path, "wb") as fh:
        fh.write(data)
