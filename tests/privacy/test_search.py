"""The optimal search: ARX's optima on adult (exact), optimality against brute force, and the
laws a release obeys (it verifies; more generalization never lowers k; suppression stays
within the limit)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import anonymize
from veil.cli import main
from veil.hierarchy import Hierarchy, load_hierarchies
from veil.privacy import verify
from veil.privacy.criteria import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.privacy.lattice import CodedFrequencies, check
from veil.privacy.metrics import make_metric
from veil.privacy.search import search

DATA = Path(__file__).resolve().parents[1] / "data" / "arx_adult"


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    frame = pd.read_csv(DATA / "adult.csv.gz", sep=";", dtype=str)
    return frame, load_hierarchies(DATA, "adult")


def adult_table(adult, sensitive: str | None = None) -> CodedFrequencies:
    frame, hierarchies = adult
    columns = list(frame.columns)
    return CodedFrequencies.build(
        frame, columns, [hierarchies[c] for c in columns], sensitive=sensitive
    )


def test_arx_optimum_entropy_k5_suppression_4(adult) -> None:
    """ARX's own test: adult, all 9 QIs, k=5, 4% suppression, non-uniform entropy."""
    result = search(
        adult_table(adult), [KAnonymity(k=5)], make_metric("entropy"), max_suppression=0.04
    )
    assert list(result.levels) == [1, 0, 1, 1, 3, 2, 2, 0, 1]
    assert result.loss == 255559.85455731067
    assert result.optimal


def test_columns_held_at_one_level_leave_arx_optimum_as_it_is(adult) -> None:
    """Sixty more quasi-identifiers each held at its one level (as binary columns capped below
    their top are when a suggestion keeps 61 one-hot columns) add no choice: the search over
    69 columns finds ARX's optimum of the nine. Before, building the lattice's grid over
    every column stopped with numpy's "at most 32 dimensions" (an internal error of `veil
    scan --suggest-policy` on a table of 61 one-hot columns). The sixty hold one value each,
    so the classes are the nine's."""
    frame, hierarchies = adult
    frame = frame.copy()
    columns, trees = list(frame.columns), [hierarchies[c] for c in frame.columns]
    for i in range(60):
        name = f"flag{i}"
        frame[name] = "0"
        columns.append(name)
        trees.append(Hierarchy.from_mapping(name, {"0": ["*"], "1": ["*"]}).up_to(0))
    table = CodedFrequencies.build(frame, columns, trees)
    assert len(table.heights) == 69
    assert max(table.heights[9:]) == 1
    result = search(table, [KAnonymity(k=5)], make_metric("entropy"), max_suppression=0.04)
    assert list(result.levels) == [1, 0, 1, 1, 3, 2, 2, 0, 1] + [0] * 60
    assert result.loss == pytest.approx(255559.85455731067, rel=1e-12)
    assert result.optimal


def test_arx_optimum_loss_k5_no_suppression(adult) -> None:
    """ARX 3.9.2, default Loss metric, adult k=5, suppression 0."""
    result = search(adult_table(adult), [KAnonymity(k=5)], make_metric("loss"))
    assert list(result.levels) == [0, 4, 1, 1, 3, 2, 2, 1, 0]
    assert result.loss == 0.5731509655590044
    assert result.suppressed == 0


def test_cli_prints_arx_certificate_and_verifies(tmp_path: Path, capsys) -> None:
    data = tmp_path / "adult.csv"
    pd.read_csv(DATA / "adult.csv.gz", sep=";", dtype=str).to_csv(data, sep=";", index=False)
    code = main(
        [
            "anonymize",
            str(data),
            "--hierarchies",
            str(DATA),
            "-k",
            "5",
            "--max-suppression",
            "0",
            "--sep",
            ";",
            "--format",
            "json",
            "-o",
            str(tmp_path / "out.csv"),
            "--certificate",
            str(tmp_path / "cert.json"),
        ]
    )
    assert code == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["levels"] == {
        "sex": 0,
        "age": 4,
        "race": 1,
        "marital-status": 1,
        "education": 3,
        "native-country": 2,
        "workclass": 2,
        "occupation": 1,
        "salary-class": 0,
    }
    assert cert["loss"] == 0.5731509655590044
    assert cert["metric"] == "loss"
    assert cert["suppressed"] == 0
    assert cert["k"] >= 5
    assert (
        main(["verify", str(tmp_path / "out.csv"), "--certificate", str(tmp_path / "cert.json")])
        == 0
    )
    # tamper with the release: verify must notice
    release = pd.read_csv(tmp_path / "out.csv")
    release.loc[0, "age"] = "39"
    release.to_csv(tmp_path / "tampered.csv", index=False)
    assert (
        main(
            ["verify", str(tmp_path / "tampered.csv"), "--certificate", str(tmp_path / "cert.json")]
        )
        == 1
    )


def brute_force(table: CodedFrequencies, criteria, metric_name: str, max_suppression: float):
    """Every node evaluated, no pruning: the reference the search must equal."""
    metric = make_metric(metric_name)
    metric.prepare(table)
    max_outliers = math.floor(max_suppression * table.rows)
    for criterion in criteria:
        criterion.prepare(table.sensitive_values)
    best = None
    for levels in np.ndindex(*table.heights):
        evaluation = check(table.roll_up(table.bottom, levels), criteria, max_outliers)
        if not evaluation.anonymous:
            continue
        loss = metric.loss(evaluation)
        key = (loss, sum(levels))
        if best is None or key < best[0]:
            best = (key, levels)
    return best


def random_problem(draw_seed: int, rows: int) -> tuple[pd.DataFrame, list[Hierarchy]]:
    rng = np.random.default_rng(draw_seed)
    ages = rng.integers(18, 80, rows)
    zips = rng.choice(["10001", "10002", "10011", "10012", "20001", "20002"], rows)
    sex = rng.choice(["F", "M"], rows)
    disease = rng.choice(["flu", "cold", "ulcer", "cancer"], rows)
    frame = pd.DataFrame({"age": ages.astype(str), "zip": zips, "sex": sex, "disease": disease})
    age_h = Hierarchy(
        "age",
        [[str(a), f"{a // 10 * 10}s", "<50" if a < 50 else ">=50", "*"] for a in range(18, 80)],
    )
    zip_h = Hierarchy(
        "zip",
        [
            [z, z[:4] + "*", z[:3] + "**", z[:1] + "****", "*"]
            for z in ["10001", "10002", "10011", "10012", "20001", "20002"]
        ],
    )
    sex_h = Hierarchy("sex", [["F", "*"], ["M", "*"]])
    return frame, [age_h, zip_h, sex_h]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(20, 300),
    k=st.integers(2, 8),
    limit=st.sampled_from([0.0, 0.02, 0.1]),
    metric=st.sampled_from(["loss", "entropy", "precision", "discernibility", "dm_star", "aecs"]),
    diverse=st.booleans(),
)
def test_search_equals_brute_force(seed, rows, k, limit, metric, diverse) -> None:
    frame, hierarchies = random_problem(seed, rows)
    table = CodedFrequencies.build(
        frame, ["age", "zip", "sex"], hierarchies, sensitive="disease" if diverse else None
    )
    criteria = [KAnonymity(k=k)] + ([DistinctLDiversity(l=2)] if diverse else [])
    found = search(table, criteria, make_metric(metric), max_suppression=limit)
    reference = brute_force(table, criteria, metric, limit)
    if reference is None:
        assert found.levels is None
        return
    (loss, total), _levels = reference
    assert found.loss == pytest.approx(loss, rel=1e-12, abs=1e-12)
    assert sum(found.levels) == total
    assert found.suppressed <= math.floor(limit * rows)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(30, 300),
    k=st.integers(2, 6),
    limit=st.sampled_from([0.0, 0.05]),
)
def test_every_release_verifies(seed, rows, k, limit) -> None:
    frame, hierarchies = random_problem(seed, rows)
    given_h = {h.name: h for h in hierarchies}
    release = anonymize(frame, {"privacy": {"k": k, "max_suppression": limit}}, hierarchies=given_h)
    cert = release.certificate
    assert verify(release.data, cert.to_dict()).ok
    assert cert.rows_suppressed <= math.floor(limit * rows)
    kept = release.data
    if len(kept):
        assert kept.groupby(["age", "zip", "sex"]).size().min() >= k


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(10, 200), data=st.data())
def test_more_generalization_never_lowers_k(seed, rows, data) -> None:
    frame, hierarchies = random_problem(seed, rows)
    table = CodedFrequencies.build(frame, ["age", "zip", "sex"], hierarchies)
    low = [data.draw(st.integers(0, h - 1)) for h in table.heights]
    high = [data.draw(st.integers(lv, h - 1)) for lv, h in zip(low, table.heights, strict=True)]
    k_low = table.roll_up(table.bottom, low).sizes.min()
    k_high = table.roll_up(table.bottom, high).sizes.min()
    assert k_high >= k_low


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(10, 200), data=st.data())
def test_rolled_up_histograms_are_the_rows_counted_by_pandas(seed, rows, data) -> None:
    """A class's sensitive histogram after two roll-ups (the second from the first's classes,
    as the search rolls up from a cached node) is its rows' values counted again by pandas on
    the generalized columns."""
    frame, hierarchies = random_problem(seed, rows)
    columns = ["age", "zip", "sex"]
    table = CodedFrequencies.build(frame, columns, hierarchies, sensitive="disease")
    middle = [data.draw(st.integers(0, h - 1)) for h in table.heights]
    top = [data.draw(st.integers(m, h - 1)) for m, h in zip(middle, table.heights, strict=True)]
    groups = table.roll_up(table.roll_up(table.bottom, middle), top)
    assert groups.histograms is not None
    general = pd.DataFrame(
        {
            c: [h.table[h.leaves.index(v)][level] for v in frame[c]]
            for c, h, level in zip(columns, hierarchies, top, strict=True)
        }
    )
    general["disease"] = frame["disease"]
    expected = general.groupby(columns)["disease"].value_counts()
    labels = [
        [
            h.labels[level][h.maps[level][leaf]]
            for h, level, leaf in zip(hierarchies, top, row, strict=True)
        ]
        for row in groups.leaves
    ]
    got = {
        (*label, value): int(count)
        for label, row in zip(labels, groups.histograms, strict=True)
        for value, count in zip(table.sensitive_values, row, strict=True)
        if count
    }
    assert got == {key: int(n) for key, n in expected.items()}
    assert groups.sizes.tolist() == groups.histograms.sum(axis=1).tolist()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(10, 200), data=st.data())
def test_l_and_t_from_a_roll_up_s_cells_are_those_of_the_whole_histograms(seed, rows, data) -> None:
    """The search tells the models the cells its roll-up made (``Groups.cells``): each class's
    number of values, entropy, recursive ratio and its t against the release its suppressions
    leave are those numpy and SciPy compute from the whole histograms (values present, SciPy's
    entropy, the counts sorted, half the L1 distance)."""
    frame, hierarchies = random_problem(seed, rows)
    table = CodedFrequencies.build(frame, ["age", "zip", "sex"], hierarchies, sensitive="disease")
    middle = [data.draw(st.integers(0, h - 1)) for h in table.heights]
    top = [data.draw(st.integers(m, h - 1)) for m, h in zip(middle, table.heights, strict=True)]
    groups = table.roll_up(table.roll_up(table.bottom, middle), top)
    hist = groups.histograms
    assert hist is not None
    released = np.array(data.draw(st.lists(st.booleans(), min_size=len(hist), max_size=len(hist))))
    for l in (1, 2, 3):  # noqa: E741
        diverse = DistinctLDiversity(l=l)
        diverse.knows(hist, groups.cells)
        assert diverse.holds(groups.sizes, hist).tolist() == ((hist > 0).sum(axis=1) >= l).tolist()
    from scipy.stats import entropy

    from veil.privacy import criteria

    spread = entropy(hist, axis=1)  # SciPy's Shannon entropy, natural log
    ranked = -np.sort(-hist, axis=1)
    for l in (1.5, 2, 3):  # noqa: E741
        model = EntropyLDiversity(l=l)
        model.knows(hist, groups.cells)
        expected = spread >= np.log(l) - 1e-9
        assert model.holds(groups.sizes, hist).tolist() == expected.tolist()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(criteria, "_SPARSE", 0)  # the cells sorted, however many there are
        for l, c in ((1, 1.0), (2, 2.0), (2, 0.7), (3, 1.5)):  # noqa: E741
            model = RecursiveCLDiversity(l=l, c=c)
            model.knows(hist, groups.cells)
            tail = ranked[:, l - 1 :].sum(axis=1)
            expected = (tail > 0) & (ranked[:, 0] < c * tail)
            assert model.holds(groups.sizes, hist).tolist() == expected.tolist(), (l, c)
    model = TCloseness(t=0.3)
    model.prepare(table.sensitive_values)
    model.knows(hist, groups.cells)
    got = model.distances(hist, released)
    overall = hist[released].sum(axis=0)
    if overall.sum() == 0:
        assert (got == 1).all()
        return
    p = hist / hist.sum(axis=1, keepdims=True)
    expected = 0.5 * np.abs(p - overall / overall.sum()).sum(axis=1)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(30, 300),
    k=st.integers(2, 6),
    limit=st.sampled_from([0.0, 0.05]),
)
def test_heuristic_returns_valid_nodes_and_its_optimum_claims_hold(seed, rows, k, limit) -> None:
    from veil.privacy.heuristic import heuristic_search

    frame, hierarchies = random_problem(seed, rows)
    table = CodedFrequencies.build(frame, ["age", "zip", "sex"], hierarchies)
    metric = make_metric("loss")
    metric.prepare(table)
    max_outliers = math.floor(limit * rows)
    found = heuristic_search(
        table, [KAnonymity(k=k)], metric, max_outliers=max_outliers, time_limit=0.5
    )
    reference = brute_force(table, [KAnonymity(k=k)], "loss", limit)
    if found.levels is None:
        assert reference is None
        return
    evaluation = check(table.roll_up(table.bottom, found.levels), [KAnonymity(k=k)], max_outliers)
    assert evaluation.anonymous  # whatever it returns is a valid release
    assert found.loss >= reference[0][0] - 1e-12  # never better than the optimum
    if found.optimal:
        assert found.loss == pytest.approx(reference[0][0], abs=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(30, 300),
    k=st.integers(2, 6),
    diverse=st.booleans(),
)
def test_mondrian_releases_meet_k_and_l_and_verify(seed, rows, k, diverse) -> None:
    frame, hierarchies = random_problem(seed, rows)
    privacy = {"k": k, "method": "mondrian"} | ({"l": 2} if diverse else {})
    columns = {"disease": {"role": "sensitive"}} if diverse else {}
    release = anonymize(
        frame,
        {"columns": columns, "privacy": privacy},
        hierarchies={h.name: h for h in hierarchies},
    )
    kept = release.data
    assert kept.groupby(["age", "zip", "sex"]).size().min() >= k
    if diverse:
        assert kept.groupby(["age", "zip", "sex"])["disease"].nunique().min() >= 2
    assert verify(release.data, release.certificate.to_dict()).ok
    assert release.certificate.search["method"] == "mondrian"


def test_mondrian_loses_less_than_full_domain_on_adult(adult) -> None:
    frame, hierarchies = adult
    optimal = anonymize(frame, {"privacy": {"k": 5}}, hierarchies=hierarchies)
    local = anonymize(frame, {"privacy": {"k": 5, "method": "mondrian"}}, hierarchies=hierarchies)
    assert local.certificate.after.k >= 5
    assert local.certificate.search["loss"] < optimal.certificate.search["loss"]


def test_hierarchies_from_the_policy_yaml(people: pd.DataFrame) -> None:
    from veil.policy import Policy

    text = """
columns:
  age: {role: quasi_identifier}
  county: {role: quasi_identifier}
unlisted: drop
privacy:
  k: 3
  max_suppression: 0.1
  hierarchies:
    age: {intervals: [10, 20, 40]}
    county:
      groups: {Coast: [Mombasa], Nyanza: [Kisumu], Inland: [Nairobi, Nakuru], Unknown: [NULL]}
"""
    release = anonymize(people, Policy.from_yaml(text))
    assert release.certificate.after.k >= 3
    levels = release.certificate.search["levels"]
    assert set(levels) == {"age", "county"}
    # every released value is the policy's hierarchy at the chosen level: the groups and the
    # interval widths of the YAML, not an automatic hierarchy
    county_labels = {
        0: {"Mombasa", "Kisumu", "Nairobi", "Nakuru", "NULL"},
        1: {"Coast", "Nyanza", "Inland", "Unknown"},
        2: {"*"},
    }[levels["county"]]
    assert set(release.data["county"]) <= county_labels
    widths = {1: 10, 2: 20, 3: 40}
    if levels["age"] in widths:
        bounds = release.data["age"].str.extract(r"^\[(\d+), (\d+)\)$").astype(int)
        assert ((bounds[1] - bounds[0]) == widths[levels["age"]]).all()
    else:
        assert levels["age"] in (0, 4)  # the value itself, or "*"


def test_the_sensitive_column_is_no_quasi_identifier(adult) -> None:
    """ARX's l-diversity setting on adult: occupation is sensitive although it has a hierarchy
    file; the other eight columns are the quasi-identifiers."""
    frame, hierarchies = adult
    release = anonymize(
        frame,
        {"privacy": {"k": 2, "l": 2, "sensitive": ["occupation"], "max_suppression": 0.04}},
        hierarchies=hierarchies,
    )
    levels = release.certificate.search["levels"]
    assert "occupation" not in levels
    assert len(levels) == 8
    assert set(release.data["occupation"]) <= set(frame["occupation"])  # released as is
    groups = release.data.groupby(list(levels))["occupation"].nunique()
    assert groups.min() >= 2


def test_method_heuristic_in_a_policy_runs_the_heuristic() -> None:
    frame = pd.DataFrame({"age": np.arange(200) % 70 + 18, "county": ["Nyeri", "Lamu"] * 100})
    for method in ("optimal", "heuristic"):
        policy = {
            "version": 1,
            "columns": {
                "age": {"role": "quasi_identifier"},
                "county": {"role": "quasi_identifier"},
            },
            "privacy": {
                "k": 5,
                "method": method,
                "time_limit": 2,
                "hierarchies": {"age": {"intervals": [5, 10, 20]}},
            },
        }
        release = anonymize(frame, policy)
        assert release.certificate.search["method"] == method
