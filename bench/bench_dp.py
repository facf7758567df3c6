"""Differential privacy: speed against plain numpy and diffprivlib's tools on 10M rows (target:
veil <= 3x numpy), and accuracy against epsilon for DP models on the heart-disease data, with
plots. Everything measured in this run.

    make bench-dp      (or: python bench/bench_dp.py [--rows 10000000] [--plots DIR])
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from bench_io import best_of  # the same timing rule in every benchmark (run from bench/)
from diffprivlib import BudgetAccountant, tools
from sklearn.linear_model import LogisticRegression as PlainLogistic
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB as PlainGaussianNB
from sklearn.preprocessing import StandardScaler

from veil import dp
from veil.dp import models
from veil.dp.curves import accuracy_vs_epsilon, error_vs_epsilon, plot_curve

HEART = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "datasets"
    / "heart_disease"
    / "heart.csv"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--plots", default=None, help="folder for the PNG plots")
    args = parser.parse_args()
    rng = np.random.default_rng(0)  # data generation only; DP noise comes from OpenDP
    ages = rng.integers(18, 90, args.rows).astype(float)
    frame = pd.DataFrame({"Age": ages, "Tier": rng.choice(["A", "B", "C"], args.rows)})
    with tempfile.TemporaryDirectory() as tmp:
        acc = dp.Accountant.create(Path(tmp) / "b.db", dp.Budget(1e6))
        print(f"{args.rows:,} rows            veil      numpy   ratio   diffprivlib")
        rows = [
            (
                "mean(Age)",
                lambda: dp.mean(frame, "Age", bounds=(18, 90), epsilon=1.0, accountant=acc),
                lambda: float(np.mean(np.clip(ages, 18, 90))),
                lambda: tools.mean(
                    ages, epsilon=1.0, bounds=(18, 90), accountant=BudgetAccountant()
                ),
            ),
            (
                "count(Age)",
                lambda: dp.count(frame, "Age", epsilon=1.0, accountant=acc),
                lambda: int(np.count_nonzero(~np.isnan(ages))),
                lambda: tools.count_nonzero(ages, epsilon=1.0, accountant=BudgetAccountant()),
            ),
            (
                "histogram(Age, 10)",
                lambda: dp.histogram(
                    frame, "Age", bins=10, bounds=(18, 90), epsilon=1.0, accountant=acc
                ),
                lambda: np.histogram(ages, bins=10, range=(18, 90)),
                lambda: tools.histogram(
                    ages, epsilon=1.0, bins=10, range=(18, 90), accountant=BudgetAccountant()
                ),
            ),
        ]
        for name, ours, plain, theirs in rows:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_ours, t_plain, t_theirs = best_of(ours), best_of(plain), best_of(theirs)
            print(
                f"  {name:<20}{t_ours:>7.3f}s {t_plain:>8.3f}s {t_ours / t_plain:>6.1f}x "
                f"{t_theirs:>10.3f}s"
            )

        plots = Path(args.plots) if args.plots else Path(tmp)
        plots.mkdir(parents=True, exist_ok=True)
        sample = frame.sample(5000, random_state=0)
        error = error_vs_epsilon(
            sample,
            "Age",
            bounds=(18, 90),
            accountant=acc,
            epsilons=[0.01, 0.05, 0.1, 0.5, 1, 5],
            repeats=20,
        )
        print("\nDP mean of Age on 5,000 rows: mean absolute error by epsilon")
        for row in error.itertuples():
            print(
                f"  epsilon {row.epsilon:>5g}: {row.mean_abs_error:.3f} years "
                f"(95% bound {row.error95_bound:.3f})"
            )
        plot_curve(
            error,
            plots / "dp_error_vs_epsilon.png",
            y="mean_abs_error",
            title="DP mean of Age: error against epsilon",
            ylabel="mean absolute error",
            log_y=True,
        )

        if HEART.exists():
            heart = pd.read_csv(HEART, encoding="utf-8-sig")
            X = StandardScaler().fit_transform(heart.drop(columns="target").to_numpy(float))
            y = heart["target"].to_numpy()
            data = tuple(train_test_split(X, y, test_size=0.3, random_state=0))
            bounds = (np.full(X.shape[1], -3.0), np.full(X.shape[1], 3.0))
            epsilons = [0.05, 0.1, 0.5, 1, 2, 5, 10]
            print(
                f"\nheart disease ({len(heart)} patients): test accuracy by epsilon "
                "(mean of 10 fits)"
            )
            for name, make, plain in [
                (
                    "GaussianNB",
                    lambda e: models.GaussianNB(epsilon=e, bounds=bounds, accountant=acc),
                    PlainGaussianNB(),
                ),
                (
                    "LogisticRegression",
                    lambda e: models.LogisticRegression(epsilon=e, data_norm=5.0, accountant=acc),
                    PlainLogistic(max_iter=1000),
                ),
            ]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    table = accuracy_vs_epsilon(make, plain, data, epsilons=epsilons, repeats=10)
                cells = ", ".join(f"{r.epsilon:g}: {r.accuracy:.3f}" for r in table.itertuples())
                print(f"  {name:<19} non-private {table['non_private'].iloc[0]:.3f} | {cells}")
                plot_curve(
                    table,
                    plots / f"dp_accuracy_{name}.png",
                    y="accuracy",
                    title=f"{name} on heart disease",
                    ylabel="test accuracy",
                    reference="non_private",
                )
        else:
            print(f"\n(heart disease data not found at {HEART}: accuracy curves skipped)")
        print(f"\nplots in {plots}" if args.plots else "")


if __name__ == "__main__":
    main()
