"""Runs in Anonymeter's own environment (.venv-anonymeter: it pins numpy < 1.27): the three
attacks of Anonymeter 1.1.0 on tables veil measured, with veil's column choices. Used by the
agreement test (test_anonymeter.py) and by bench/bench_synth.py.

    python anonymeter_runner.py DIR SEED

DIR holds ori.parquet, syn.parquet, control.parquet and plan.json ({"halves": [[...], [...]],
"secret": COL, "n_attacks": N}; optionally "n_targets": M, the linkability and inference
attacks' targets, and "queries": [[[column, op, value], ...], ...], singling-out queries drawn by
veil, which Anonymeter's estimator then counts and corrects as its own). Prints one JSON
line: per attack {"risk", "ci", "attack_rate", "control_rate", "seconds"}.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
import warnings
from functools import reduce
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

if os.environ.get("NUMBA_CACHE_DIR"):
    # Anonymeter's nearest-neighbour kernels are numba functions compiled in every process
    # (about 5 s of a run); with a cache folder given, the same machine code is kept there
    import numba

    _jit = numba.jit
    numba.jit = lambda *args, **kwargs: _jit(*args, **{**kwargs, "cache": True})

from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
from anonymeter.evaluators.singling_out_evaluator import (
    _evaluate_queries_and_return_successful,
    fit_correction_term,
)
from anonymeter.stats.confidence import EvaluationResults, PrivacyRisk


class _Counted:
    """Anonymeter's singling-out estimate on given queries: its counts on the original and the
    control rows, its control-size correction, its EvaluationResults."""

    def __init__(self, results: EvaluationResults) -> None:
        self._results = results

    def risk(self) -> PrivacyRisk:
        return self._results.risk()

    def results(self) -> EvaluationResults:
        return self._results


def _on_queries(ori: pd.DataFrame, control: pd.DataFrame, raw: list, n: int) -> _Counted:
    operators = {"==": operator.eq, ">=": operator.ge, "<=": operator.le}
    queries = [
        reduce(
            operator.and_,
            [
                pl.col(c).is_null() if op == "isnull" else operators[op](pl.col(c), v)
                for c, op, v in query
            ],
        )
        for query in raw
    ]
    ori_pl, control_pl = pl.DataFrame(ori).unique(), pl.DataFrame(control).unique()
    n_success = len(_evaluate_queries_and_return_successful(df=ori_pl, queries=queries))
    n_control = float(len(_evaluate_queries_and_return_successful(df=control_pl, queries=queries)))
    if len(control_pl) != len(ori_pl):
        fitted = fit_correction_term(df=control_pl, queries=queries)
        n_control *= fitted(len(ori_pl)) / fitted(len(control_pl))
    return _Counted(
        EvaluationResults(n_attacks=n, n_success=n_success, n_baseline=0, n_control=n_control)
    )


def main() -> None:
    folder, seed = Path(sys.argv[1]), int(sys.argv[2])
    ori, syn, control = (
        pd.read_parquet(folder / f"{n}.parquet") for n in ("ori", "syn", "control")
    )
    plan = json.loads((folder / "plan.json").read_text())
    n = plan["n_attacks"]
    np.random.seed(seed)  # linkability and inference draw their targets with pandas' sample
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
            n_attacks=plan.get("n_targets", n),
            aux_cols=tuple(plan["halves"]),
            n_neighbors=1,
        ).evaluate(n_jobs=1),
        "inference": lambda: InferenceEvaluator(
            ori=ori,
            syn=syn,
            control=control,
            n_attacks=plan.get("n_targets", n),
            secret=plan["secret"],
            aux_cols=[c for c in ori.columns if c != plan["secret"]],
        ).evaluate(n_jobs=1),
    }
    if "queries" in plan:  # the estimator alone, on the queries veil drew
        evaluators["singling_out"] = lambda: _on_queries(ori, control, plan["queries"], n)
    for name, run in evaluators.items():
        start = time.perf_counter()
        evaluator = run()
        risk, results = evaluator.risk(), evaluator.results()
        out[name] = {
            "risk": risk.value,
            "ci": list(risk.ci),
            "attack_rate": results.attack_rate.value,
            "control_rate": results.control_rate.value,
            "seconds": time.perf_counter() - start,
        }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
