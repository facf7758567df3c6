"""Runs in Anonymeter's own environment (.venv-anonymeter: it pins numpy < 1.27): the three
attacks of Anonymeter 1.1.0 on tables veil measured, with veil's column choices.

    python anonymeter_runner.py DIR SEED

DIR holds ori.parquet, syn.parquet, control.parquet and plan.json ({"halves": [[...], [...]],
"secret": COL, "n_attacks": N}). Prints one JSON line: per attack {"risk", "ci", "seconds"}.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator


def main() -> None:
    folder, seed = Path(sys.argv[1]), int(sys.argv[2])
    ori, syn, control = (
        pd.read_parquet(folder / f"{n}.parquet") for n in ("ori", "syn", "control")
    )
    plan = json.loads((folder / "plan.json").read_text())
    n = plan["n_attacks"]
    out = {}
    warnings.simplefilter("ignore")
    evaluators = {
        "singling_out": lambda: SinglingOutEvaluator(
            ori=ori, syn=syn, control=control, n_attacks=n, n_cols=3, seed=seed
        ).evaluate(mode="multivariate"),
        "linkability": lambda: LinkabilityEvaluator(
            ori=ori,
            syn=syn,
            control=control,
            n_attacks=n,
            aux_cols=tuple(plan["halves"]),
            n_neighbors=1,
        ).evaluate(n_jobs=1),
        "inference": lambda: InferenceEvaluator(
            ori=ori,
            syn=syn,
            control=control,
            n_attacks=n,
            secret=plan["secret"],
            aux_cols=[c for c in ori.columns if c != plan["secret"]],
        ).evaluate(n_jobs=1),
    }
    for name, run in evaluators.items():
        start = time.perf_counter()
        risk = run().risk()
        out[name] = {"risk": risk.value, "ci": list(risk.ci),
                     "seconds": time.perf_counter() - start}  # fmt: skip
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
