"""Risk beyond the sample, against computations that share no code with veil's: Zayatz's
estimate by hand from binomial coefficients, Pitman's parameters by maximizing its likelihood
directly (veil solves the score equations), sdcMicro's individual risk by its closed forms,
and Dankar's rule by which model it picks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli import main
from veil.exceptions import ParameterError
from veil.privacy import check
from veil.risk.population import (
    histogram,
    individual_risk,
    pitman,
    pitman_parameters,
    population_risk,
    zayatz,
)

ADULT = Path(__file__).parents[1] / "data" / "arx_adult" / "adult.csv.gz"
QIS = ["sex", "age", "race", "marital-status"]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, sep=";")


def test_zayatz_by_hand() -> None:
    """Two sample uniques and a pair, 4 records drawn from 40 people."""

    def one_drawn(class_size: int) -> float:  # hypergeometric P(X = 1), from the definition
        return class_size * math.comb(40 - class_size, 3) / math.comb(40, 4)

    total = 2 / 3 * one_drawn(1) + 1 / 3 * one_drawn(2)
    expected = 2 * (2 / 3 * one_drawn(1) / total) / (4 / 40)
    assert zayatz({1: 2, 2: 1}, 40, 4) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(10.4, abs=0.05)  # and the hand sum, rounded


def _log_likelihood(t: float, a: float, sizes: np.ndarray) -> float:
    """Pitman's sampling formula, summed term by term (Hoshino 2001, eq. 3)."""
    u, n = len(sizes), int(sizes.sum())
    value = float(np.sum(np.log(t + a * np.arange(1, u))) - np.sum(np.log(t + np.arange(1, n))))
    for size in sizes[sizes > 1]:
        value += float(np.sum(np.log(np.arange(1, size) - a)))
    return value


def test_pitman_is_the_maximum_of_its_likelihood(adult: pd.DataFrame) -> None:
    from scipy.optimize import minimize

    sizes = adult.groupby(QIS).size().to_numpy()
    t, a = pitman_parameters(histogram(sizes)) or (np.nan, np.nan)
    direct = minimize(
        lambda x: -_log_likelihood(x[0], x[1], sizes),
        x0=[100.0, 0.5],
        method="Nelder-Mead",
        bounds=[(1e-6, 1e6), (1e-6, 1 - 1e-6)],
        options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 20_000},
    )
    assert t == pytest.approx(direct.x[0], rel=1e-4)
    assert a == pytest.approx(direct.x[1], rel=1e-4)
    population = len(adult) / 0.1
    expected = math.exp(
        math.lgamma(direct.x[0] + 1)
        - math.lgamma(direct.x[0] + direct.x[1])
        + direct.x[1] * math.log(population)
    )
    assert pitman(histogram(sizes), population) == pytest.approx(expected, rel=1e-2)


def test_sdcmicro_individual_risk_by_its_closed_forms() -> None:
    p = 0.1
    odds = p / (1 - p)
    expected = [odds * math.log(1 / p), odds - odds**2 * math.log(1 / p), p / (3 - (1 - p)), 0.5]
    got = individual_risk(np.array([1, 2, 3, 2]), np.array([10.0, 20.0, 30.0, 2.0]))
    assert got == pytest.approx(expected, rel=1e-12)
    assert expected[0] == pytest.approx(0.2558, abs=1e-4)  # sdcMicro's figure for a sample unique


def test_dankar_picks_pitman_for_small_samples_and_the_smaller_else(adult: pd.DataFrame) -> None:
    sizes = adult.groupby(QIS).size().to_numpy()
    small = population_risk(sizes, sampling_fraction=0.05)
    assert small.dankar_model == "pitman"
    assert small.uniques["dankar"] == small.uniques["pitman"]
    large = population_risk(sizes, sampling_fraction=0.5)
    candidates = [v for m, v in large.uniques.items() if m in ("zayatz", "snb") and v is not None]
    assert large.uniques["dankar"] == min(candidates)
    # a smaller share sampled: more of the sample uniques are unique in the population too
    assert small.uniques["dankar"] / small.population < large.uniques["dankar"] / large.population
    census = population_risk(sizes, sampling_fraction=1.0)
    assert census.uniques["dankar"] == census.sample_uniques
    assert census.journalist_max == 1.0  # a census: a sample unique is certain


def test_check_prints_them_under_risk(
    adult: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "adult.csv"
    adult.assign(weight=10.0).to_csv(data, index=False)
    assert (
        main(
            [
                "check",
                str(data),
                "-q",
                ",".join(QIS),
                "--sampling-fraction",
                "0.1",
                "--format",
                "json",
            ]
        )
        == 0
    )
    risk = json.loads(capsys.readouterr().out)["risk"]
    assert {"prosecutor_average", "prosecutor_max", "marketer_average", "sample_uniques"} <= set(
        risk
    )
    assert set(risk["population_uniqueness"]) == {"pitman", "zayatz", "snb", "dankar"}
    assert risk["population"] == pytest.approx(len(adult) * 10)
    assert 0 <= risk["sample_uniques"] <= 1  # today's key keeps its meaning (a share)
    assert risk["sample_unique_records"] == round(risk["sample_uniques"] * len(adult))
    assert risk["journalist_average"] < risk["prosecutor_average"]  # the population hides people
    weighted = check(adult.assign(weight=10.0), QIS, weights="weight")
    assert weighted.population is not None
    assert weighted.population.journalist_average == pytest.approx(risk["journalist_average"])
    with pytest.raises(ParameterError, match="smaller than the 30,162 records"):
        check(adult, QIS, population=1_000)
    with pytest.raises(ParameterError, match="sampling weight of at least 1"):
        check(adult.assign(weight=0.5), QIS, weights="weight")


def test_scan_and_the_report_show_them_too(
    adult: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from veil import anonymize
    from veil.report import build_report

    sample = adult.head(3_000)
    data = tmp_path / "adult.csv"
    sample.to_csv(data, index=False)
    assert main(["scan", str(data), "--population", "300000", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["risk"]
    assert found["population"]["population"] == 300_000
    assert found["population"]["dankar_model"] == "pitman"  # 1% sampled
    from veil.scan import scan

    direct = scan(sample, population=300_000).risk
    assert direct.population is not None
    assert found["population"]["population_uniques"]["dankar"] == pytest.approx(
        direct.population.uniques["dankar"]
    )
    policy = {"columns": {c: {"role": "quasi_identifier"} for c in QIS}}
    release = anonymize(sample, policy)
    section = next(
        s
        for s in build_report(release, original=sample, sampling={"population": 300_000}).sections
        if s.id == "scan"
    )
    assert any("Population uniques estimated" in line for line in section.text)
