"""veil's three attacks against Anonymeter itself (an external oracle): the same training,
control and release rows, veil's column choices, on three public tables. Anonymeter 1.1.0 pins
numpy < 1.27, so it lives in `.venv-anonymeter` (made by `make test`) and runs in its own
process.

Each table is split into training rows and fewer control rows (as the audit did: the control's
size correction then matters), and the release is the training rows with 30% of each column's
cells swapped between rows: a release that leaks, so that every figure is well above nothing.
Each of veil's risks must lie inside Anonymeter's 95% interval and Anonymeter's inside
veil's. Singling out: Anonymeter's estimator (its counts, its control-size correction, its
intervals) on the 500 queries veil drew, so that the two differ by the estimate, not by which
queries chance drew (two independent draws of 500 fall outside each other's intervals about one
time in six). Linkability and inference: each tool's own attack on every control row and as
many training rows (Anonymeter samples those itself)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.evaluate._prepare import prepare
from veil.risk import attacks
from veil.risk.attacks import inference, linkability, singling_out

ROOT = Path(__file__).resolve().parents[2]
ANONYMETER = ROOT / ".venv-anonymeter" / "bin" / "python"
RUNNER = Path(__file__).with_name("anonymeter_runner.py")
DATA = ROOT / "tests" / "data"
SEED = 0
SWAP = 0.1  # the share of each column's cells swapped between rows

# table, training rows, control rows, the secret of the inference attack
TABLES = [
    ("arx_adult/adult.csv.gz", 5000, 2000, "occupation"),
    ("surveys/HealthInsurance.csv.gz", 5000, 2000, "education"),
    ("surveys/DoctorVisits.csv.gz", 3000, 1500, "income"),
]


def _load(name: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / name, sep=";" if "adult" in name else ",")
    return frame.drop(columns=[c for c in ("rownames",) if c in frame.columns])


def _leaky(train: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    release = train.copy()
    for column in release.columns:
        swap = np.flatnonzero(rng.random(len(release)) < SWAP)
        release.iloc[swap, release.columns.get_loc(column)] = release[column].to_numpy()[
            rng.permutation(swap)
        ]
    return release


def _readable(release: Any, prepared: Any, queries: list) -> list:
    """veil's queries with each category's code written as the category, for Anonymeter."""
    rows = prepared.release.drop_duplicates().reset_index(drop=True)  # as veil's _Table
    named = {
        c: dict(zip(release.columns[c].tolist(), rows[c].tolist(), strict=True))
        for c in prepared.columns
        if prepared.kinds[c] == "categorical"
    }
    return [
        [[c, op, named[c][int(v)] if c in named and op == "==" else v] for c, op, v in query]
        for query in queries
    ]


@pytest.fixture(scope="module", params=TABLES, ids=[t[0].split("/")[-1] for t in TABLES])
def measured(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    if not ANONYMETER.exists():
        pytest.fail(f"{ANONYMETER} is missing: run `make test`, which builds the Anonymeter oracle")
    name, n_train, n_control, secret = request.param
    table = _load(name)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(table))
    train = table.iloc[order[:n_train]]
    control = table.iloc[order[n_train : n_train + n_control]]
    prepared = prepare(train, _leaky(train, rng), holdout=control, seed=SEED)
    assert secret in prepared.columns
    drawn: list = []

    def capture(release: Any, *args: Any) -> list:
        queries = draw(release, *args)
        # the bit-set counts agree with counting each query over the release's rows
        assert all(release.count(q) == 1 for q in queries)
        assert len(set(queries)) == len(queries) == 500
        drawn.append(_readable(release, prepared, queries))
        return queries

    with pytest.MonkeyPatch.context() as patch:
        draw = attacks._singling_queries
        patch.setattr(attacks, "_singling_queries", capture)
        so = singling_out(prepared, SEED)
    ours = {
        "singling_out": so,
        "linkability": linkability(prepared, SEED, n_control),
        "inference": inference(prepared, secret, SEED, n_control),
    }
    folder = tmp_path_factory.mktemp("anonymeter")
    for part, frame in (
        ("ori", prepared.train),
        ("syn", prepared.release),
        ("control", prepared.holdout),
    ):
        frame.to_parquet(folder / f"{part}.parquet")
    plan = {
        "halves": ours["linkability"].detail["halves"],
        "secret": secret,
        "n_attacks": 500,
        "n_targets": n_control,
        "queries": drawn[0],
    }
    (folder / "plan.json").write_text(json.dumps(plan))
    done = subprocess.run(
        [str(ANONYMETER), str(RUNNER), str(folder), str(SEED)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.splitlines()[-1])
    return {k: v.to_dict() for k, v in ours.items()}, theirs


@pytest.mark.parametrize("attack", ["singling_out", "linkability", "inference"])
def test_veil_and_anonymeter_each_fall_inside_the_others_interval(
    measured: tuple[dict[str, Any], dict[str, Any]], attack: str
) -> None:
    ours, theirs = measured[0][attack], measured[1][attack]
    shown = (
        f"veil {ours['risk']:.3f} {ours['ci']} vs anonymeter {theirs['risk']:.3f} {theirs['ci']}"
    )
    print(attack, shown)
    assert theirs["ci"][0] <= ours["risk"] <= theirs["ci"][1], shown
    assert ours["ci"][0] <= theirs["risk"] <= ours["ci"][1], shown
    if attack != "linkability":  # a leaky release: the comparison is not of two zeros
        assert ours["risk"] > 0.1, shown
