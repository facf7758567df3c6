"""Latent releases on adult (../shared/datasets/adult_census, 32,561 rows) and heart disease
(../shared/datasets/heart_disease): utility (the same classifier's ROC-AUC on raw features vs
on the codes, 20% held out) beside what the attacks recover, per setting.

- autoencoder at dims 2, 5, 10 (training time against the target of <= 60 s on 2 cores);
- PCA with every component (a rotation) and with few;
- DP-SGD (Opacus) at epsilon 1, 3, 8 for dim 5: the privacy/utility curve, plotted to
  bench/out/latent_dp_curve.png; the categories' embeddings mapped with t-SNE to
  bench/out/latent_embeddings.png.

The material veil grew from claimed ROC-AUC 0.93 raw vs 0.92 latent on adult, and ~85%
accuracy of a logistic regression on PCA-masked heart disease, without measuring the attacks.

    python bench/bench_latent.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"
OUT = ROOT / "bench" / "out"
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]


def adult() -> pd.DataFrame:
    frame = pd.read_csv(
        SHARED / "adult_census" / "adult.data", header=None, names=COLUMNS, skipinitialspace=True
    )
    return frame.replace("?", None)


def line(label: str, release: object) -> dict[str, float]:
    from veil.learn.latent import LatentRelease

    assert isinstance(release, LatentRelease)
    a, u = release.attacks, release.utility
    rates = a["reidentification"]
    trained = f"{release.training.seconds:5.1f} s" if release.training else "   -   "
    membership = a["membership_advantage"]
    print(
        f"  {label:<26} {trained}  AUC raw {u['raw']:.3f} latent {u['latent']:.3f} "
        f"(gap {u['raw'] - u['latent']:+.3f}; linear model {u['linear']['raw']:.3f} / "
        f"{u['linear']['latent']:.3f})  recovered {a['recovery']:.2f}  "
        f"re-identified white-box {rates['white_box']:.1%} insider {rates['insider']:.1%} "
        f"(marginals {a['reidentification_baseline']:.1%}, unique {a['uniqueness']:.1%})  "
        f"membership {membership:.2f}  {'INVERTIBLE' if release.invertible else 'not inverted'}"
    )
    return {
        "utility_raw": u["raw"],
        "utility_latent": u["latent"],
        "recovery": a["recovery"],
        "reidentification": a["reidentification_rate"],
    }


def mask_latent_whole_process(table: pd.DataFrame) -> None:
    """``veil mask-latent`` of all of adult at dim 5 with income as a whole process (reading,
    training, the attacks, writing; the release is invertible, so written with
    ``--allow-invertible``), beside the same release made in this process above, its
    training time printed there (issue 38's target: 90 s)."""
    from bench_io import whole_process  # bench/

    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "adult.csv", Path(tmp) / "latent.csv"
        table.to_csv(data, index=False)
        command = [sys.executable, "-m", "veil", "mask-latent", str(data), "--dim", "5"]
        wall, cpu = whole_process(
            [*command, "--target", "income", "-o", str(out), "--allow-invertible"]
        )
        if not out.exists():
            raise SystemExit("veil mask-latent wrote nothing")
    print(
        f"  veil mask-latent --dim 5 --target income, whole process: {wall:.1f} s wall, "
        f"{cpu:.1f} s CPU (target 90 s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="dim 5 and PCA only, no DP")
    args = parser.parse_args()
    if not (SHARED / "adult_census" / "adult.data").exists():
        print(f"needs {SHARED}: the datasets beside the clone", file=sys.stderr)
        return 2
    import torch

    from veil.dp import Accountant, Budget
    from veil.io import atomic_open
    from veil.learn.latent import mask_latent
    from veil.learn.latent._figures import dp_curve_figure, embedding_map_figure
    from veil.plotting import render

    torch.set_num_threads(2)
    OUT.mkdir(parents=True, exist_ok=True)
    table = adult()
    print(f"adult: {len(table):,} rows, target income; quasi-identifiers as veil scan reads them")
    keep = None
    reference: dict[str, float] = {}
    for dim in (5,) if args.quick else (2, 5, 10):
        start = time.perf_counter()
        release = mask_latent(table, dim=dim, target="income")
        figures = line(f"autoencoder dim {dim}", release)
        reference = figures if dim == 5 else reference
        print(
            f"{'':30}(whole run {time.perf_counter() - start:.0f} s; {release.training.epochs} "
            f"epochs; target: training <= 60 s)"
        )
        keep = release if dim == 5 else keep
    mask_latent_whole_process(table)
    for dim in ("all", 5) if not args.quick else ("all",):
        line(f"PCA {dim} components", mask_latent(table, dim=dim, method="pca", target="income"))
    if keep is not None:
        path = OUT / "latent_embeddings.png"
        with atomic_open(path, "wb") as handle:
            handle.write(
                render(
                    embedding_map_figure(
                        keep.embeddings,
                        columns=[
                            "education",
                            "marital_status",
                            "relationship",
                            "race",
                            "sex",
                            "workclass",
                        ],
                    )
                )
            )
        print(f"  plot: {path.relative_to(ROOT)}")
    if not args.quick:
        curve = []
        for epsilon in (1.0, 3.0, 8.0):
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ledger = Accountant.create(Path(tmp) / "ledger.db", Budget(epsilon, 1e-4))
                release = mask_latent(
                    table, dim=5, target="income", epsilon=epsilon, accountant=ledger
                )
            figures = line(f"DP-SGD eps {epsilon:g} (spent {release.epsilon:.2f})", release)
            curve.append({"epsilon": epsilon, **figures})
        path = OUT / "latent_dp_curve.png"
        with atomic_open(path, "wb") as handle:
            handle.write(render(dp_curve_figure(pd.DataFrame(curve), without_dp=reference)))
        print(f"  plot: {path.relative_to(ROOT)}")
    heart = pd.read_csv(SHARED / "heart_disease" / "heart.csv", encoding="utf-8-sig")
    print(f"heart disease: {len(heart)} rows, target target")
    for dim in ("all", 2):
        line(f"PCA {dim} components", mask_latent(heart, dim=dim, method="pca", target="target"))
    line("autoencoder dim 2", mask_latent(heart, dim=2, target="target"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
