"""t-closeness with hierarchical distance, measured by `veil check` and `veil verify`, equal to
an independent computation: the earth mover's distance solved as a transport problem (scipy's
linear programming) with Li et al.'s (2007) ground distance, the level of two values' lowest
common ancestor over the hierarchy's height."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli import main
from veil.hierarchy import load_hierarchy
from veil.privacy import check

DATA = Path(__file__).parents[1] / "data" / "arx_adult"
TREE = DATA / "adult_hierarchy_occupation.csv"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(DATA / "adult.csv.gz", sep=";").sample(3_000, random_state=2)


def _emd_by_transport(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    from scipy.optimize import linprog

    m = len(p)
    rows = np.kron(np.eye(m), np.ones(m))  # sum_j f_ij = p_i
    cols = np.kron(np.ones(m), np.eye(m))  # sum_i f_ij = q_j
    solved = linprog(
        ground.ravel(),
        A_eq=np.vstack([rows, cols]),
        b_eq=np.r_[p, q],
        bounds=(0, None),
        method="highs",
    )
    assert solved.success
    return float(solved.fun)


def _oracle(frame: pd.DataFrame, qis: list[str], sensitive: str) -> float:
    table = [row.split(";") for row in TREE.read_text().splitlines() if row]
    leaves = [row[0] for row in table]
    height = len(table[0]) - 1
    ground = np.array(
        [
            [
                next(level for level in range(height + 1) if a[level] == b[level]) / height
                for b in table
            ]
            for a in table
        ]
    )
    overall = frame[sensitive].value_counts(normalize=True).reindex(leaves, fill_value=0)
    worst = 0.0
    for _, group in frame.groupby(qis):
        p = group[sensitive].value_counts(normalize=True).reindex(leaves, fill_value=0)
        worst = max(worst, _emd_by_transport(p.to_numpy(), overall.to_numpy(), ground))
    return worst


def test_check_measures_hierarchical_t_as_the_transport_problem_does(
    adult: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qis = ["sex", "race"]
    expected = _oracle(adult, qis, "occupation")
    tree = load_hierarchy(TREE, name="occupation")
    measured = check(
        adult,
        qis,
        sensitive="occupation",
        t=0.2,
        t_distance="hierarchical",
        hierarchies={"occupation": tree},
    )
    assert measured.t == pytest.approx(expected, abs=1e-9)
    assert measured.t_distance == "hierarchical"
    assert ("t <= 0.2 (hierarchical distance)" in measured.failed) == (expected > 0.2)
    equal = check(adult, qis, sensitive="occupation", t_distance="equal")
    assert equal.t != pytest.approx(expected)  # another distance: another number
    data = tmp_path / "adult.csv"
    adult.to_csv(data, index=False)
    code = main(
        [
            "check",
            str(data),
            "-q",
            ",".join(qis),
            "--sensitive",
            "occupation",
            "--t",
            "0.2",
            "--t-distance",
            "hierarchical",
            "--hierarchies",
            str(DATA),
            "--format",
            "json",
        ]
    )
    body = json.loads(capsys.readouterr().out)
    assert body["t"] == pytest.approx(expected, abs=1e-9)
    assert body["t_distance"] == "hierarchical"
    assert code == (1 if expected > 0.2 else 0)
    assert (
        main(
            [
                "check",
                str(data),
                "-q",
                "sex",
                "--sensitive",
                "occupation",
                "--t-distance",
                "hierarchical",
            ]
        )
        == 2
    )
    assert "needs the sensitive column's hierarchy" in capsys.readouterr().err


def test_verify_measures_it_with_the_hierarchy_the_certificate_keeps(
    adult: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "trees"
    folder.mkdir()
    for name in ("sex", "race", "occupation"):
        shutil.copy(DATA / f"adult_hierarchy_{name}.csv", folder / f"adult_hierarchy_{name}.csv")
    data = tmp_path / "adult.csv"
    adult[["sex", "race", "occupation", "age"]].to_csv(data, sep=";", index=False)
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "columns:\n  sex: {role: quasi_identifier}\n  race: {role: quasi_identifier}\n"
        "  occupation: {role: sensitive}\n  age: {role: insensitive}\n"
        f"privacy:\n  k: 2\n  sensitive: [occupation]\n  hierarchies: {{sex: {folder}/"
        f"adult_hierarchy_sex.csv, race: {folder}/adult_hierarchy_race.csv, occupation: "
        f"{folder}/adult_hierarchy_occupation.csv}}\n"
        "  models:\n    - {model: t_closeness, t: 0.3, distance: hierarchical}\n"
        "  max_suppression: 0.2\n"
    )
    out, cert = tmp_path / "release.csv", tmp_path / "cert.json"
    assert (
        main(
            [
                "anonymize",
                str(data),
                "--policy",
                str(policy),
                "-o",
                str(out),
                "--certificate",
                str(cert),
            ]
        )
        == 0
    ), capsys.readouterr().err
    capsys.readouterr()
    body = json.loads(cert.read_text())
    assert body["sensitive_hierarchy"][0][0] == "Tech-support"
    assert main(["verify", str(out), "--certificate", str(cert), "--format", "json"]) == 0
    claims = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["claims"]}
    claim = claims["t <= 0.3 (hierarchical distance)"]
    assert claim["holds"] is True
    released = pd.read_csv(out, sep=None, engine="python")
    measured = float(claim["detail"].removeprefix("measured "))
    assert measured == pytest.approx(_oracle(released, ["sex", "race"], "occupation"), abs=1e-5)
    assert measured <= 0.3
    body.pop("sensitive_hierarchy")  # a certificate without the tree: not measured, fails
    cert.write_text(json.dumps(body))
    assert main(["verify", str(out), "--certificate", str(cert)]) == 1
    assert "not measured" in capsys.readouterr().out
    assert main(["verify", str(out), "--certificate", str(cert), "--hierarchies", str(folder)]) == 0
