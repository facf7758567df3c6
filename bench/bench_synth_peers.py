"""Synthesizers side by side on two tables: veil's default copula (`veil synth --target`), its
TVAE, and DP AIM and MST at epsilon 1 and 5, against SDV 2.0's GaussianCopula, TVAE and CTGAN
with their defaults (SDV is BUSL-licensed: it runs only here, in its own environment
.venv-sdv, through bench/sdv_runner.py). Every release is made from the same training rows
and measured by the same evaluation (veil's `evaluate_release` against the same holdout):
TSTR accuracy, F1 and ROC-AUC beside TRTR, detection AUC, the share of rows closer to a
training row than to a holdout row (DCR; the training rows' share is ideal), and the
singling-out, linkability and inference risks; each release's fit + sample wall and CPU
seconds (SDV's measured in its own process).

Tables: adult (../shared/datasets/adult_census; target income) and the Kaggle health-insurance
cross-sell sample (../shared/datasets/health_insurance_cross_sell; target Response, 12% yes;
its id column dropped). Each: --train training rows and --holdout holdout rows drawn at random.

    make bench-synth       (or: python bench/bench_synth_peers.py [--tables adult,insurance]
                            [--train 10000] [--sdv-python .venv-sdv/bin/python])
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from bench_synth import load as load_adult
from bench_synth import private as dp_synthesis

from veil.api import synthesize
from veil.evaluate import evaluate_release
from veil.synth import TVAE

ROOT = Path(__file__).resolve().parents[1]
INSURANCE = (
    ROOT.parent
    / "shared"
    / "datasets"
    / "health_insurance_cross_sell"
    / "train_subset_30pct_original_encoding.csv"
)
TARGETS = {"adult": "income", "insurance": "Response"}
SDV_METHODS = ("gaussian_copula", "tvae", "ctgan")


def load(name: str) -> pd.DataFrame:
    """The table called ``name``, its target a category."""
    if name == "adult":
        return load_adult()
    frame = pd.read_csv(INSURANCE).drop(columns="id")
    frame["Response"] = frame["Response"].map({0: "no", 1: "yes"})
    return frame


def private(train: pd.DataFrame, method: str, epsilon: float, target: str) -> pd.DataFrame:
    """DP synthesis at ``epsilon``, every numeric column's bounds from the rows."""
    numeric = [c for c in train if pd.api.types.is_numeric_dtype(train[c])]
    return dp_synthesis(train, method, epsilon, 1, target=target, numeric=numeric)


def sdv(python: str, train: pd.DataFrame, seed: int) -> dict[str, tuple[pd.DataFrame, list[float]]]:
    """SDV's three synthesizers fitted in their own environment: rows and (wall, CPU) s."""
    if not Path(python).exists():
        print(f"  SDV not run: no {python} (make bench-synth builds it)")
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        train.to_csv(Path(tmp) / "train.csv", index=False)
        runner = Path(__file__).parent / "sdv_runner.py"
        done = subprocess.run(
            [python, str(runner), tmp, str(seed), *SDV_METHODS],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"SDV runner failed:\n{done.stderr[-2000:]}")
        seconds = json.loads(done.stdout.splitlines()[-1])
        return {m: (pd.read_csv(Path(tmp) / f"sdv_{m}.csv"), seconds[m]) for m in SDV_METHODS}


def row(name: str, measured: Any, seconds: tuple[float, float]) -> str:
    """One release's figures, in the header's order."""
    utility, fidelity, privacy = measured.utility, measured.fidelity, measured.privacy
    tstr = utility["tstr"]
    risks = [privacy[a]["risk"] for a in ("singling_out", "linkability", "inference")]
    return (
        f"{name:<24}{tstr['accuracy']:>6.3f}{tstr['f1']:>7.3f}{tstr['roc_auc']:>8.3f}"
        f"{fidelity['detection_auc']:>8.3f}{privacy['dcr']['share_closer_to_training']:>7.3f}"
        + "".join(f"{r:>7.3f}" for r in risks)
        + f"{seconds[0]:>9.1f}{seconds[1]:>8.1f}"
    )


def compare(name: str, args: argparse.Namespace) -> None:
    """Every release of table ``name`` measured against the same holdout, printed."""
    table, target = load(name), TARGETS[name]
    order = np.random.default_rng(args.seed).permutation(len(table))
    train = table.iloc[order[: args.train]].reset_index(drop=True)
    holdout = table.iloc[order[args.train : args.train + args.holdout]].reset_index(drop=True)
    print(
        f"\n{name}: {len(train):,} training rows, {len(holdout):,} holdout rows, target "
        f"{target} (TSTR: trained on the release, tested on the holdout)"
    )
    releases: dict[str, Callable[[], pd.DataFrame]] = {
        f"veil synth --target {target}"[:24]: lambda: (
            synthesize(train, target=target, random_state=1).data
        ),
        "veil TVAE": lambda: TVAE().fit(train, random_state=1).sample(len(train), random_state=1),
        "veil AIM eps=1": lambda: private(train, "aim", 1.0, target),
        "veil AIM eps=5": lambda: private(train, "aim", 5.0, target),
        "veil MST eps=1": lambda: private(train, "mst", 1.0, target),
        "veil MST eps=5": lambda: private(train, "mst", 5.0, target),
    }
    made: dict[str, tuple[pd.DataFrame, tuple[float, float]]] = {}
    for label, make in releases.items():
        wall, cpu = time.perf_counter(), time.process_time()
        rows = make()
        made[label] = (rows, (time.perf_counter() - wall, time.process_time() - cpu))
    for method, (rows, seconds) in sdv(args.sdv_python, train, args.seed).items():
        made[f"SDV {method}"] = (rows, (seconds[0], seconds[1]))
    print(
        f"{'release':<24}{'acc':>6}{'F1':>7}{'ROC':>8}{'detect':>8}{'DCR':>7}"
        f"{'single':>7}{'link':>7}{'infer':>7}{'wall s':>9}{'CPU s':>8}"
    )
    trtr = None
    for label, (rows, seconds) in made.items():
        measured = evaluate_release(
            train, rows[list(train.columns)], holdout=holdout, target=target, random_state=args.seed
        )
        trtr = measured.utility["trtr"]
        print(row(label, measured, seconds), flush=True)
    assert trtr is not None
    print(
        f"{'TRTR (real rows)':<24}{trtr['accuracy']:>6.3f}{trtr['f1']:>7.3f}{trtr['roc_auc']:>8.3f}"
    )
    if name == "adult":
        print(f"{'TabDDPM (paper)':<24}{'':>6}{0.795:>7.3f}   (its real rows: 0.815; not run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="adult,insurance")
    parser.add_argument("--train", type=int, default=10_000)
    parser.add_argument("--holdout", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sdv-python", default=str(ROOT / ".venv-sdv" / "bin" / "python"))
    args = parser.parse_args()
    for name in args.tables.split(","):
        compare(name.strip(), args)


if __name__ == "__main__":
    main()
