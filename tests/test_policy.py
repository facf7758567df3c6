"""The policy file: validation messages, round trip, and anonymize's safety nets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil import anonymize
from veil.exceptions import CheckFailedError, PolicyError, UnknownColumnError
from veil.policy import Policy


def load(text: str) -> Policy:
    return Policy.from_yaml(text, source="p.yaml")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (
            "columns: {Age: {role: quasi}}",
            r"p.yaml: columns.Age.role: Input should be 'identifier', 'quasi_identifier', "
            r"'sensitive' or 'insensitive', got 'quasi'",
        ),
        (
            "columns: {Age: {steps: [{genralize: {bins: 3}}]}}",
            r"columns.Age.steps\[0\]: unknown transform 'genralize' "
            r"\(did you mean 'generalize'\?\)",
        ),
        (
            "columns: {Age: {steps: [{generalize: {bns: 3}}]}}",
            r"columns.Age.steps\[0\]: 'generalize' has no parameter 'bns'; allowed: bins, strategy",
        ),
        (
            "columns: {Age: {steps: [{generalize: {columns: [x]}}]}}",
            r"no parameter 'columns' \(a column step applies to its own column\)",
        ),
        (
            "steps: [{generalize: {bins: 3}}]",
            r"steps\[0\]: a table-level 'generalize' step needs columns",
        ),
        ("colums: {}", r"p.yaml: colums: unknown key 'colums'; allowed: version, description"),
        ("privacy: {k: 0}", r"privacy.k: Input should be greater than or equal to 1, got 0"),
        ("privacy: {k: true}", r"privacy.k: must be a whole number, got True"),
        ("privacy: {kk: 3}", r"privacy.kk: unknown key 'kk'; allowed: models, .*, k, l, l_variant"),
        ("privacy: {l_variant: entropy}", r"privacy.l_variant: describes l-diversity: give l"),
        ("privacy: {l: 2, l_variant: recursive}", r"privacy.c: l_variant recursive needs c"),
        (
            "privacy: {k: 3, models: [{model: k_anonymity, k: 4}]}",
            r"privacy.k: privacy.models already lists a model that k sets",
        ),
        (
            "privacy: {models: [{model: t_closeness, t: 2}]}",
            r"privacy.models.0.t_closeness.t: Input should be less than or equal to 1, got 2",
        ),
        (
            "privacy: {models: [{model: k_anon, k: 2}]}",
            r"privacy.models.0: Input tag 'k_anon' found using 'model' does not match any of the "
            r"expected tags: 'k_anonymity'",
        ),
        ("privacy: {k: 3, models: [k_anonymity]}", r"privacy.models.0: Input should be a valid"),
        ("privacy: {k: 3, models: {k: 4}}", r"privacy.models: must be a list"),
        (
            "privacy: {models: [{model: k_anonymity, k: 2, c: 1}]}",
            r"privacy.models.0.k_anonymity.c: unknown key 'c'; allowed: model, k",
        ),
        ("version: 2", r"version: Input should be 1, got 2"),
        ("columns: {Age: {role: [unclosed", r"p.yaml: line 1, column \d+: not valid YAML"),
        ("- a\n- b", r"must be a YAML mapping"),
    ],
)
def test_invalid_policies_say_where_and_what_is_allowed(text: str, pattern: str) -> None:
    with pytest.raises(PolicyError, match=pattern):
        load(text)


def test_round_trip_through_yaml() -> None:
    text = """
version: 1
random_state: 3
columns:
  Tax_id: {role: identifier, steps: [{pseudonymize: {format: preserve}}]}
  Age: {role: quasi_identifier, steps: [{generalize: {bins: [0, 30, .inf]}}]}
steps:
  - suppress_rows: {rare: 2, columns: [Age]}
privacy: {k: 2}
"""
    policy = load(text)
    again = load(policy.to_yaml())
    assert again == policy
    assert again.fingerprint() == policy.fingerprint()
    assert [s.where for s in policy.planned_steps()] == [
        "columns.Tax_id.steps[0]",
        "columns.Age.steps[0]",
        "steps[0]",
    ]


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no such policy file"):
        Policy.load(tmp_path / "nope.yaml")


def test_policy_column_must_exist(people: pd.DataFrame) -> None:
    with pytest.raises(UnknownColumnError, match=r"'Agee' \(policy columns\) is not in the table"):
        anonymize(people, {"columns": {"Agee": {"role": "quasi_identifier"}}})


def test_identifier_without_treatment_is_refused(people: pd.DataFrame) -> None:
    policy = {
        "columns": {
            "kra_pin": {"role": "identifier"},
            "name": {"role": "identifier", "steps": ["drop"]},
        }
    }
    with pytest.raises(PolicyError, match=r"\['kra_pin'\] would be released as they are"):
        anonymize(people, policy)


def test_step_errors_say_where_in_the_policy(people: pd.DataFrame) -> None:
    policy = {"columns": {"county": {"steps": [{"generalize": {"bins": 3}}]}}}
    with pytest.raises(
        PolicyError,
        match=r"policy columns.county.steps\[0\] \(generalize\): "
        r"column 'county' must be numeric to be binned",
    ):
        anonymize(people, policy)


def test_unsupported_privacy_method_is_refused_not_ignored(people: pd.DataFrame) -> None:
    with pytest.raises(
        PolicyError, match=r"0.3-closeness \(equal distance\) is not supported with method mondrian"
    ):
        anonymize(people, {"privacy": {"k": 2, "t": 0.3, "method": "mondrian"}})


def test_privacy_goals_are_searched_for_and_checked(people: pd.DataFrame) -> None:
    roles = {
        "age": {"role": "quasi_identifier"},
        "gender": {"role": "quasi_identifier"},
        "diagnosis": {"role": "sensitive"},
    }
    release = anonymize(people, {"columns": roles, "unlisted": "drop", "privacy": {"k": 4, "l": 2}})
    cert = release.certificate
    kept = release.data
    counts = kept.groupby(["age", "gender"]).size()
    assert cert.after.k == counts.min() >= 4
    assert kept.groupby(["age", "gender"])["diagnosis"].nunique().min() >= 2
    assert cert.checks == {"k >= 4": True, "l >= 2 (distinct)": True}
    assert cert.search is not None
    assert set(cert.search["levels"]) == {"age", "gender"}
    with pytest.raises(CheckFailedError, match=r"k = 1000 exceeds the number of records \(60\)"):
        anonymize(people, {"columns": roles, "unlisted": "drop", "privacy": {"k": 1000}})


def test_roles_follow_renamed_columns(people: pd.DataFrame) -> None:
    policy = {
        "columns": {
            "gender": {"role": "quasi_identifier"},
            "name": {"role": "identifier", "steps": ["drop"]},
        },
        "steps": [{"rename_columns": {}}],
        "unlisted": "drop",
    }
    release = anonymize(people, policy)
    assert release.certificate.quasi_identifiers == ("c00",)  # name was dropped first
    assert release.certificate.after.k == people["gender"].value_counts().min()


def test_random_state_makes_releases_reproducible(people: pd.DataFrame, key_env: str) -> None:
    policy = {
        "random_state": 5,
        "columns": {"county": {"steps": ["resample"]}, "score": {"steps": [{"noise": {}}]}},
    }
    first = anonymize(people, policy).data
    second = anonymize(people, policy).data
    pd.testing.assert_frame_equal(first, second)
    other = anonymize(people, {**policy, "random_state": 6}).data
    assert not first["score"].equals(other["score"])


def test_key_file_is_relative_to_the_policy(
    tmp_path: Path, people: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    (tmp_path / "k.key").write_text("z" * 40)
    path = tmp_path / "p.yaml"
    path.write_text(
        "columns:\n  kra_pin:\n    role: identifier\n    steps:\n"
        "      - pseudonymize: {key_file: k.key}\n"
    )
    release = anonymize(people, Policy.load(path))
    assert not set(release.data["kra_pin"]) & set(people["kra_pin"])


def test_max_suppression_counts_only_what_the_search_withholds(people: pd.DataFrame) -> None:
    """The policy's own suppress_rows is counted apart from the search's budget (the issue's
    case: a suggested policy with max_suppression: 0.01 failed because of its own step)."""
    policy = {
        "columns": {"county": {"role": "quasi_identifier"}, "gender": {"role": "quasi_identifier"}},
        "unlisted": "drop",
        "steps": [{"suppress_rows": {"where": "age > 70"}}],
    }
    withheld = int((people["age"] > 70).sum())
    assert 0 < withheld < len(people) // 2
    release = anonymize(people, {**policy, "privacy": {"k": 2, "max_suppression": 0.01}})
    cert = release.certificate
    assert cert.rows_suppressed == withheld
    assert cert.search is not None
    assert cert.search["suppressed"] == 0
    assert cert.search["rows_in"] == len(people) - withheld
    assert cert.checks["suppressed by the search <= 1.0%"] is True


def test_a_policy_that_withholds_every_record_says_so() -> None:
    frame = pd.DataFrame({"age": np.arange(100) + 18, "county": ["Nyeri", "Lamu"] * 50})
    policy = {
        "version": 1,
        "columns": {"age": {"role": "quasi_identifier"}, "county": {"role": "quasi_identifier"}},
        "steps": [{"suppress_rows": {"rare": 5, "columns": ["age", "county"]}}],
        "privacy": {"k": 2},
    }
    with pytest.raises(PolicyError, match=r"withhold every record \(steps\[0\] leaves none\)"):
        anonymize(frame, policy)


def test_which_steps_treat_identifiers_is_declared_by_the_transforms() -> None:
    from veil.policy import identifier_treatments
    from veil.transforms import TRANSFORMS

    declared = {name for name, cls in TRANSFORMS.items() if cls.treats_identifiers}
    assert (
        declared
        == set(identifier_treatments())
        == {"drop", "pseudonymize", "mask", "fake", "redact"}
    )
