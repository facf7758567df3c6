"""check() and the models against from-the-definition computations and published examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.hierarchy import Hierarchy
from veil.privacy import check
from veil.privacy.criteria import TCloseness, hierarchical_emd

ADULT = "tests/data/arx_adult/adult.csv.gz"


def test_arx_average_prosecutor_risk_of_raw_adult() -> None:
    """ARX reports 0.6465751607983555 for adult with all 9 columns as quasi-identifiers."""
    adult = pd.read_csv(ADULT, sep=";", dtype=str)
    assert check(adult, list(adult.columns)).risk.prosecutor_average == 0.6465751607983555


def test_recursive_c_from_the_definition() -> None:
    """r1 / (r_l + ... + r_m) per class with counts sorted descending, the worst class."""
    adult = pd.read_csv(ADULT, sep=";", dtype=str)
    qi, sa, l_goal = ["sex", "race"], "marital-status", 3
    worst = 0.0
    for _, group in adult.groupby(qi):
        counts = sorted(group[sa].value_counts().tolist(), reverse=True)
        worst = max(worst, counts[0] / sum(counts[l_goal - 1 :]))
    assert check(adult, qi, sensitive=sa, l=l_goal).l_recursive_c == pytest.approx(worst)


def test_entropy_l_from_the_definition() -> None:
    frame = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 3, "s": ["x", "y", "z", "x", "x", "y", "z"]})
    # class a: 2/4, 1/4, 1/4 -> exp(H) = 2.83; class b: uniform over 3 -> exp(H) = 3
    h_a = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert check(frame, ["q"], sensitive="s").l_entropy == math.floor(math.exp(h_a))


def test_li_et_al_ordered_emd_example() -> None:
    """Li, Li, Venkatasubramanian (ICDE 2007), salaries 3k..11k: the class {3k, 4k, 5k} is at
    ordered distance 0.375 from the table, the class {6k, 8k, 11k} at 0.167."""
    salary = [3, 4, 5, 6, 7, 8, 9, 10, 11]
    klass = ["a", "a", "a", "b", "c", "b", "c", "c", "b"]
    frame = pd.DataFrame({"q": klass, "salary": [s * 1000 for s in salary]})
    criterion = TCloseness(t=1.0, distance="ordered")
    codes, values = pd.factorize(frame["salary"].astype(str))
    criterion.prepare([str(v) for v in values])
    classes, index = np.unique(frame["q"], return_inverse=True)
    hist = np.zeros((len(classes), len(values)), dtype=np.int64)
    np.add.at(hist, (index, codes), 1)
    distances = dict(zip(classes, criterion.distances(hist), strict=True))
    assert distances["a"] == pytest.approx(0.375)
    assert distances["b"] == pytest.approx(0.1667, abs=1e-4)


def test_flat_hierarchical_emd_is_the_equal_distance() -> None:
    """With a one-level hierarchy every pair of values is at distance 1: EMD = 0.5 * L1."""
    rng = np.random.default_rng(0)
    values = [f"v{i}" for i in range(6)]
    flat = Hierarchy("s", [[v, "*"] for v in values])
    p = rng.dirichlet(np.ones(6), size=20)
    q = rng.dirichlet(np.ones(6))
    expected = 0.5 * np.abs(p - q).sum(axis=1)
    assert np.allclose(hierarchical_emd(p - q, values, flat), expected)


def test_hierarchical_emd_moves_within_a_branch_cost_less() -> None:
    values = ["flu", "cold", "ulcer", "gastritis"]
    tree = Hierarchy(
        "d",
        [
            ["flu", "respiratory", "*"],
            ["cold", "respiratory", "*"],
            ["ulcer", "digestive", "*"],
            ["gastritis", "digestive", "*"],
        ],
    )
    q = np.array([0.25, 0.25, 0.25, 0.25])
    near = np.array([[0.5, 0.0, 0.25, 0.25]])  # mass moved inside "respiratory": 0.25 * 1/2
    far = np.array([[0.5, 0.5, 0.0, 0.0]])  # mass moved across the root: 0.5 * 2/2
    assert hierarchical_emd(near - q, values, tree)[0] == pytest.approx(0.125)
    assert hierarchical_emd(far - q, values, tree)[0] == pytest.approx(0.5)
