"""veil.evaluate's measures: checked against scipy and scikit-learn where they compute the same
thing, and on the two releases whose answer is known (the original itself; an independent
random table)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.spatial.distance import cdist

from veil.cli import main
from veil.evaluate import evaluate_release
from veil.evaluate._measures import associations
from veil.evaluate._prepare import prepare
from veil.exceptions import InputError
from veil.risk.attacks import _wilson
from veil.risk.distance import Encoder, nearest


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    return pd.DataFrame(
        {
            "age": age,
            "income": np.round(rng.lognormal(10, 0.5, n) + 300 * age, -1),
            "county": rng.choice(["Nairobi", "Mombasa", "Kisumu", "Nakuru", "Eldoret"], n),
            "tier": np.where(age > 50, "Gold", rng.choice(["Silver", "Bronze"], n)),
            "joined": pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), "D"),
        }
    )


def test_nearest_is_gower_as_scipy_computes_it() -> None:
    rng = np.random.default_rng(1)
    train = pd.DataFrame(
        {"x": rng.random(300), "y": rng.random(300) * 50, "c": rng.choice(list("abcd"), 300)}
    )
    query = pd.DataFrame(
        {"x": rng.random(120), "y": rng.random(120) * 50, "c": rng.choice(list("abcde"), 120)}
    )
    kinds = {"x": "numeric", "y": "numeric", "c": "categorical"}
    encoder = Encoder(train, kinds)
    ref, q = encoder.encode(train), encoder.encode(query)
    distances, indices = nearest(q, ref)
    # Gower: cityblock over range-scaled numbers (inside the range: no cap) + mismatches, / 3
    numbers = cdist(q.numbers.astype(float), ref.numbers.astype(float), "cityblock")
    mismatches = cdist(q.codes, ref.codes, "hamming") * q.codes.shape[1]
    gower = (numbers + mismatches) / 3
    inside = (
        query["x"].between(train["x"].min(), train["x"].max())
        & query["y"].between(train["y"].min(), train["y"].max())
    ).to_numpy()
    np.testing.assert_allclose(distances[inside], gower.min(axis=1)[inside], atol=1e-5)
    np.testing.assert_allclose(
        gower[np.arange(120), indices][inside], gower.min(axis=1)[inside], atol=1e-5
    )


def test_associations_match_scipy() -> None:
    frame = people(800, 2)
    prepared = prepare(frame, frame, holdout_fraction=0.25)
    matrix = associations(prepared.train, prepared.kinds)
    train = prepared.train
    pearson = abs(stats.pearsonr(train["age"], train["income"]).statistic)
    assert matrix.loc["age", "income"] == pytest.approx(pearson)
    table = pd.crosstab(train["county"], train["tier"]).to_numpy()
    cramer = stats.contingency.association(table, method="cramer")
    assert matrix.loc["county", "tier"] == pytest.approx(cramer)


def test_the_original_itself_is_not_anonymous_and_an_independent_table_is() -> None:
    frame = people(2000, 3)
    train, holdout = frame.iloc[:1600], frame.iloc[1600:]
    same = evaluate_release(train, train.copy(), holdout=holdout, target="tier")
    assert same.privacy["dcr"]["median_to_training"] == 0
    assert same.privacy["exact_copies"] == 1.0
    assert same.privacy["membership_advantage"] > 0.9
    assert same.privacy["dcr"]["share_closer_to_training"] >= 0.95  # ties count half
    assert same.fidelity["detection_auc"] == pytest.approx(0.5, abs=0.05)
    for attack in ("singling_out", "linkability", "inference"):
        assert same.privacy[attack]["risk"] > 0.8, attack
        low, high = same.privacy[attack]["ci"]
        assert low <= same.privacy[attack]["risk"] <= high
    assert max(c["value"] for c in same.fidelity["columns"].values()) == 0
    ks = stats.ks_2samp(train["age"], train["age"]).statistic
    assert same.fidelity["columns"]["age"] == {"statistic": "ks", "value": ks}

    noise = people(1600, 99)  # same schema, drawn independently of the people in train
    other = evaluate_release(train, noise, holdout=holdout, target="tier")
    assert other.privacy["exact_copies"] == 0.0
    assert abs(other.privacy["membership_advantage"]) < 0.1
    dcr = other.privacy["dcr"]
    assert dcr["ideal"] == pytest.approx(0.8)  # 1,600 training rows, 400 holdout rows
    assert dcr["share_closer_to_training"] == pytest.approx(dcr["ideal"], abs=0.06)
    assert other.privacy["singling_out"]["risk"] < 0.2  # the size correction is a model
    assert other.privacy["linkability"]["risk"] < 0.05
    assert other.privacy["inference"]["ci"][0] < 0.05  # within its interval of no risk
    for scores in (other.utility["tstr"], other.utility["trtr"]):  # a model that learns
        assert scores["accuracy"] > 0.6


def test_generalized_release_values_are_read_as_numbers() -> None:
    frame = people(500, 4)
    release = frame.copy()
    release["age"] = pd.cut(frame["age"], [0, 30, 45, 60, 200], right=False).astype(str)
    release.loc[release.index[:5], "age"] = "*"
    release["joined"] = frame["joined"].dt.strftime("%Y-%m")
    prepared = prepare(frame, release)
    assert prepared.release["age"].iloc[5:].between(15, 130).all()
    assert prepared.release["age"].iloc[:5].isna().all()
    assert any("intervals read at their midpoint" in n for n in prepared.notes)
    assert any("start of their period" in n for n in prepared.notes)


def test_empty_and_mistyped_release_columns_are_left_out_saying_why() -> None:
    frame = people(300, 5)
    release = frame.assign(income=np.nan, age=["young", "old"] * 150)
    prepared = prepare(frame, release)
    assert prepared.left_out["income"] == "no values in the release (suppressed)"
    assert prepared.left_out["age"] == "the release holds no numbers here (e.g. 'young')"
    assert "age" not in prepared.columns


def test_bad_input_gets_one_clear_line() -> None:
    frame = people(300, 5)
    with pytest.raises(InputError, match=r"columns the original lacks: \['extra'\]"):
        prepare(frame, frame.assign(extra=1))
    with pytest.raises(InputError, match="too small to say anything: give at least 50"):
        prepare(frame, frame, holdout=frame.head(20))
    with pytest.raises(InputError, match="target 'nope' cannot be predicted"):
        evaluate_release(frame, frame, holdout_fraction=0.3, target="nope")
    with pytest.raises(InputError, match="give a categorical target"):
        evaluate_release(frame, frame, holdout_fraction=0.3, target="income")


@pytest.mark.parametrize(("n", "k"), [(500, 0), (500, 37), (500, 250), (120, 119)])
def test_attack_rates_are_wilson_intervals_as_scipy_computes_them(n: int, k: int) -> None:
    rate, error = _wilson(n, k)
    interval = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert rate - error == pytest.approx(interval.low)
    assert rate + error == pytest.approx(interval.high)


def test_cli_evaluate_keeps_the_json_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = people(1200, 6)
    frame.iloc[:900].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[900:].to_csv(tmp_path / "holdout.csv", index=False)
    code = main(
        [
            "evaluate",
            str(tmp_path / "train.csv"),
            str(tmp_path / "train.csv"),
            "--holdout",
            str(tmp_path / "holdout.csv"),
            "--target",
            "tier",
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["fidelity"]) >= {"columns", "association_difference", "detection_auc"}
    assert set(data["fidelity"]["columns"]["age"]) == {"statistic", "value"}
    assert set(data["utility"]) >= {"target", "tstr", "trtr"}
    assert set(data["utility"]["tstr"]) == {"accuracy", "f1", "roc_auc"}
    privacy = data["privacy"]
    assert set(privacy["dcr"]) >= {
        "share_closer_to_training",
        "median_to_training",
        "median_to_holdout",
    }
    for key in ("exact_copies", "membership_advantage"):
        assert isinstance(privacy[key], float)
    for attack in ("singling_out", "linkability", "inference"):
        assert privacy[attack]["risk"] > 0.8  # the original itself
        assert len(privacy[attack]["ci"]) == 2
    assert isinstance(data["seconds"], float)
    code = main(
        ["evaluate", str(tmp_path / "train.csv"), str(tmp_path / "train.csv"), "--format", "json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert data["privacy"]["dcr"] is None
    assert "holdout" in data["privacy"]["dcr_reason"]
    assert data["utility"] is None
    assert data["utility_reason"]


def test_the_evaluation_report_lights_red_for_the_original_itself(tmp_path: Path) -> None:
    from veil.report.sections.evaluation import build_evaluation_report

    frame = people(1500, 7)
    train, holdout = frame.iloc[:1200], frame.iloc[1200:]
    report = build_evaluation_report(evaluate_release(train, train, holdout=holdout, target="tier"))
    assert [f.status for f in report.facts] == ["bad", "bad", "bad"]
    assert report.verdict == "bad"
    ids = {f.id for f in report.section("evaluation").figures}
    assert {"tstr", "dcr", "association-difference", "overlay-age", "overlay-county"} <= ids
    html = report.to_html()
    assert "singling out risk" in html
    assert "1,200 release rows measured against 1,200 rows" in html
    independent = build_evaluation_report(
        evaluate_release(train, people(1200, 70), holdout=holdout)
    )
    assert "bad" not in [f.status for f in independent.facts[1:]]  # linkability, inference
