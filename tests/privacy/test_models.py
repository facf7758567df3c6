"""Privacy models as one typed list (veil.privacy.criteria): each model's check on the frequency
table (what the search uses) agrees with its measure of a release (what check and verify use);
a policy, the command line and an older certificate all name them the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.cli import main
from veil.io import content_sha256
from veil.policy import Policy
from veil.privacy import anonymize, verify
from veil.privacy.criteria import MODELS, Criterion, build

#: a parameter strategy per model: a model added to veil.privacy.criteria without one fails below
PARAMETERS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "k_anonymity": st.fixed_dictionaries({"k": st.integers(1, 6)}),
    "distinct_l_diversity": st.fixed_dictionaries({"l": st.integers(1, 4)}),
    "entropy_l_diversity": st.fixed_dictionaries({"l": st.floats(1, 4)}),
    "recursive_cl_diversity": st.fixed_dictionaries(
        {"c": st.floats(0.25, 4), "l": st.integers(1, 4)}
    ),
    "t_closeness": st.fixed_dictionaries(
        {"t": st.floats(0, 1), "distance": st.sampled_from(["equal", "ordered"])}
    ),
}


def test_every_model_has_parameters_to_test_with() -> None:
    assert sorted(PARAMETERS) == sorted(kind.kind() for kind in MODELS)


@st.composite
def models_and_tables(draw: st.DrawFn) -> tuple[Criterion, np.ndarray, np.ndarray]:
    kind = draw(st.sampled_from(MODELS)).kind()
    model = build({"model": kind, **draw(PARAMETERS[kind])})
    classes, values = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    counts = draw(st.lists(st.integers(0, 6), min_size=classes * values, max_size=classes * values))
    hist = np.array(counts, dtype=np.int64).reshape(classes, values)
    hist[:, 0] += hist.sum(axis=1) == 0  # every class has a record
    return model, hist.sum(axis=1), hist


@settings(max_examples=300, deadline=None)
@given(models_and_tables())
def test_a_models_check_and_its_measure_agree(case: tuple[Criterion, Any, Any]) -> None:
    """The search keeps a table whose every class holds; verify measures the release and
    compares with the goal: the two must say the same of every table."""
    model, sizes, hist = case
    model.prepare([str(v) for v in range(hist.shape[1])])
    every_class = bool(model.holds(sizes, hist).all())
    assert model.met(model.measure(sizes, hist)) == every_class


def test_a_policy_lists_models_beside_the_shorthand() -> None:
    policy = Policy.from_yaml(
        "privacy:\n  k: 3\n  models:\n"
        "    - {model: entropy_l_diversity, l: 1.5}\n"
        "    - {model: recursive_cl_diversity, c: 4, l: 2}\n"
    )
    assert policy.privacy is not None
    assert [m.goal for m in policy.privacy.models] == [
        "l >= 1.5 (entropy)",
        "l >= 2 (recursive, c = 4)",
        "k >= 3",
    ]
    # the file written back names every model, and reads as the same policy
    assert Policy.from_yaml(policy.to_yaml()).privacy == policy.privacy


def _people(rows: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "Age": rng.integers(20, 70, rows),
            "Gender": rng.choice(["F", "M"], rows),
            "Diagnosis": rng.choice(["Flu", "Asthma", "Malaria", "Diabetes"], rows),
        }
    )


def _policy(**privacy: Any) -> dict[str, Any]:
    return {
        "columns": {
            "Age": {"role": "quasi_identifier"},
            "Gender": {"role": "quasi_identifier"},
            "Diagnosis": {"role": "sensitive"},
        },
        "privacy": {"hierarchies": {"Age": {"intervals": [10, 20, 60]}}, **privacy},
    }


def test_a_listed_model_is_searched_certified_and_verified() -> None:
    models = [{"model": "k_anonymity", "k": 4}, {"model": "recursive_cl_diversity", "c": 3, "l": 2}]
    release = anonymize(_people(), _policy(models=models))
    cert = release.certificate
    assert cert.checks == {"k >= 4": True, "l >= 2 (recursive, c = 3)": True}
    assert cert.privacy is not None
    assert cert.privacy["models"] == models
    # the release as a reader gets it: its classes meet the recursive model measured afresh
    sizes = release.data.groupby(["Age", "Gender"]).size()
    assert sizes.min() >= 4
    for _, group in release.data.groupby(["Age", "Gender"]):
        counts = sorted(group["Diagnosis"].value_counts(), reverse=True)
        assert counts[0] < 3 * sum(counts[1:])  # r1 < c (r2 + ... + rm) for l = 2
    assert verify(release.data, cert.to_dict()).ok


def test_a_format_3_certificate_is_still_verified() -> None:
    release = anonymize(_people(), _policy(k=3, l=2))
    old = release.certificate.to_dict()
    old["privacy"] = {key: value for key, value in old["privacy"].items() if key != "models"}
    old["privacy"].update({"k": 3, "l": 2, "l_variant": "distinct"})
    old["format"] = 3
    old["release_sha256"] = content_sha256(release.data, version=1)  # its column-major hash
    result = verify(release.data, old)
    assert result.ok
    assert {claim for claim, _, _ in result.claims} >= {"k >= 3", "l >= 2 (distinct)"}
    # a goal the release misses is caught in the old form too
    old["privacy"]["k"] = 10_000
    assert not verify(release.data, old).ok


def test_a_certificate_with_an_unknown_model_is_refused_in_one_line() -> None:
    release = anonymize(_people(), _policy(k=3))
    tampered = release.certificate.to_dict()
    tampered["privacy"]["models"] = [{"model": "z_anonymity", "z": 1}]
    with pytest.raises(Exception, match="privacy goals are not readable.*z_anonymity") as info:
        verify(release.data, tampered)
    assert "\n" not in str(info.value)


def test_the_command_line_takes_any_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key_env: str
) -> None:
    data = tmp_path / "people.csv"
    _people().to_csv(data, index=False)
    entropy = "{model: entropy_l_diversity, l: 3.5}"
    code = main(
        ["check", str(data), "-q", "Age,Gender", "--sensitive", "Diagnosis", "--model", entropy]
    )
    assert code == 1
    assert "l >= 3.5 (entropy)" in capsys.readouterr().err
    # a bad model says which parameter, in one line, before reading anything
    for bad, said in (
        ("{model: entropy_l_diversity, l: 0}", "l: Input should be greater"),
        ("[1, 2]", "give a YAML mapping"),
        ("{model: nope}", "Input tag 'nope'"),
    ):
        assert main(["check", str(data), "-q", "Age", "--model", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert said in err
        assert len(err.splitlines()) == 1
    policy = tmp_path / "p.yaml"
    policy.write_text(json.dumps(_policy(k=2)))
    out, cert = tmp_path / "r.csv", tmp_path / "r.json"
    code = main(
        [
            "anonymize",
            str(data),
            "-p",
            str(policy),
            "-o",
            str(out),
            "--certificate",
            str(cert),
            "-k",
            "5",
            "--model",
            "{model: distinct_l_diversity, l: 2}",
        ]
    )
    assert code == 0, capsys.readouterr().err
    written = json.loads(cert.read_text())
    # -k replaced the policy's k; --model added a model
    assert sorted(written["privacy"]["models"], key=str) == [
        {"model": "distinct_l_diversity", "l": 2},
        {"model": "k_anonymity", "k": 5},
    ]
    assert written["checks"] == {"k >= 5": True, "l >= 2 (distinct)": True}


def test_veil_transforms_lists_every_privacy_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transforms"]) == 0
    printed = capsys.readouterr().out
    for kind in MODELS:
        assert kind.kind() in printed


@pytest.mark.parametrize(
    ("policy", "flags", "expected"),
    [
        ({"l": 2}, {"l_variant": "entropy"}, [{"model": "entropy_l_diversity", "l": 2}]),
        (
            {"models": [{"model": "recursive_cl_diversity", "c": 3, "l": 2}]},
            {"l": 3},
            [{"model": "recursive_cl_diversity", "c": 3.0, "l": 3}],
        ),
        (
            {"models": [{"model": "recursive_cl_diversity", "c": 3, "l": 2}]},
            {"l_variant": "distinct"},
            [{"model": "distinct_l_diversity", "l": 2}],
        ),
        (
            {"k": 5, "t": 0.2},
            {"k": 9},
            [{"model": "t_closeness", "t": 0.2}, {"model": "k_anonymity", "k": 9}],
        ),
    ],
)
def test_a_flag_replaces_the_part_of_a_goal_it_names(policy, flags, expected) -> None:
    """The command line's -k/--l/--l-variant/--c/--t over a policy's goals: the goal of that
    kind is replaced, keeping what the flags leave unsaid."""
    from veil.policy import PrivacySettings
    from veil.privacy.criteria import override

    settings = PrivacySettings.model_validate(policy)
    merged = override(settings.model_dump(exclude_unset=True), flags)
    got = PrivacySettings.model_validate(merged).model_dump(exclude_unset=True)["models"]
    assert got == expected


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    classes=st.integers(1, 12),
    values=st.integers(2, 9),
    distance=st.sampled_from(["equal", "ordered"]),
    in_order=st.booleans(),
)
def test_t_distances_are_the_earth_movers_distance_scipy_computes(
    seed: int, classes: int, values: int, distance: str, in_order: bool
) -> None:
    """Each class's t against the release's distribution, for histograms measured one after
    another and again (a model keeps the distributions of the last ones it measured): equal
    distance is half the L1 distance, ordered distance SciPy's Wasserstein distance over the
    values' ranks divided by their span (Li et al.), which veil sums from each class's cells
    that are not zero. A model that measured other histograms still equals one prepared alike
    that measured none."""
    from scipy.stats import wasserstein_distance

    from veil.privacy.criteria import TCloseness

    rng = np.random.default_rng(seed)
    # numbers, in no order or in order (ordered distance then reads the cells as they come)
    labels = [str(v) for v in (np.arange(values) if in_order else rng.permutation(values)) * 10]
    model = TCloseness(t=0.5, distance=distance)
    model.prepare(labels)
    first, second = (rng.integers(0, 4, (classes, values)) for _ in range(2))
    rank = np.argsort([float(v) for v in labels])
    for hist in (first, second, first):
        released = rng.random(classes) < 0.7
        got = model.distances(hist, released)
        overall = hist[released].sum(axis=0)
        if overall.sum() == 0:
            assert (got == 1).all()
            continue
        q = overall / overall.sum()
        for row, measured in zip(hist, got, strict=True):
            p = row / max(row.sum(), 1)
            if distance == "equal":
                expected = 0.5 * np.abs(p - q).sum()
            elif row.sum() == 0:  # no class to move: what is left of q's mass, as veil counts
                expected = np.abs(np.cumsum(-q[rank])[:-1]).sum() / (values - 1)
            else:
                spots = np.arange(values)
                expected = wasserstein_distance(spots, spots, p[rank], q[rank]) / (values - 1)
            assert measured == pytest.approx(expected, abs=1e-12)
    fresh = TCloseness(t=0.5, distance=distance)
    fresh.prepare(labels)
    assert model == fresh
