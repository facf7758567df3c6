"""Suggested policies: valid, applicable, and never releasing an identifier as it was."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.scan.faker_tables import make_table
from veil import anonymize
from veil.privacy.criteria import KAnonymity
from veil.privacy.suggest import suggest_policy, suggest_policy_yaml
from veil.scan import scan
from veil.scan.hierarchies import build_hierarchy


@pytest.mark.parametrize("locale", ["en_KE", "en_US", "en_GB"])
def test_suggested_policy_releases_no_identifier_as_is(locale: str, key_env: str) -> None:
    frame, truth = make_table(locale, 300, seed=5)
    found = scan(frame)
    policy = suggest_policy(found, frame, k=3)
    # seven quasi-identifiers, occupation among them, leave nobody in a group of 3: the
    # policy says so in a comment; here only the column steps are applied
    release = anonymize(frame, policy.model_copy(update={"steps": [], "privacy": None}))
    kept = release.data.index
    for name, (role, _) in truth.items():
        if role != "identifier" or name not in release.data.columns:
            continue
        before = frame.loc[kept, name].astype(str)
        after = release.data[name].astype(str)
        if name == "notes":  # free text: the contact inside each note is gone, the rest kept
            assert policy.columns[name].steps == [{"redact": {"replace": "placeholder"}}]
            contact = before.str.contains("Call back on")
            assert (before != after).sum() == contact.sum() > 0
            assert after[contact].str.contains("Call back on <(?:PHONE|EMAIL)> after").all()
            continue
        assert not (before == after).any(), name


def test_suggestions_per_entity(key_env: str) -> None:
    frame = pd.DataFrame(
        {
            "county": ["Nairobi (County)", "Kisumu", "Mombasa", "Taita\u2013Taveta", "Lamu"] * 20,
            "age": list(range(18, 118)),
            "marital_status": ["Married", "Single", "Widowed", "Divorced", "Married"] * 20,
            "email": [f"user{i}@example.com" for i in range(100)],
        }
    )
    policy = suggest_policy(scan(frame), frame, k=2)
    steps = {name: spec.steps for name, spec in policy.columns.items()}
    assert steps["email"] == [{"drop": {}}]
    # quasi-identifiers get no step: the search generalizes them over the built hierarchies
    assert steps["county"] == steps["age"] == steps["marital_status"] == []
    assert policy.privacy is not None
    assert KAnonymity(k=2) in policy.privacy.models
    assert anonymize(frame, policy).certificate.after.k >= 2
    # the hierarchy the search climbs: counties (as written) to their former provinces
    county = {row[0]: row[1] for row in build_hierarchy("county", frame["county"]).table}
    assert county["Nairobi (County)"] == "Nairobi"
    assert county["Taita\u2013Taveta"] == "Coast"
    marital = {row[0]: row[1] for row in build_hierarchy("m", frame["marital_status"]).table}
    assert marital["Widowed"] == "Not partnered"


def test_a_column_of_a_few_identifiers_is_redacted_and_keeps_its_other_values(
    key_env: str,
) -> None:
    """Identifiers among a few of a column's values (one address, two phone numbers in 3,000
    remarks): the column is an identifier whose step redacts them; it was dropped, losing
    every other remark."""
    remarks = pd.Series(["none", "see file", "called twice"] * 1_000)
    remarks[1_234] = "write to jane.doe@example.org"
    remarks[2_000] = "call 0712 345 678 after 5"
    remarks[2_001] = "call +254 722 000 111"
    frame = pd.DataFrame({"comment": remarks, "age": [20 + i % 50 for i in range(3_000)]})
    policy = suggest_policy(scan(frame), frame, k=2)
    assert policy.columns["comment"].steps == [{"redact": {"replace": "placeholder"}}]
    released = anonymize(frame, policy).data["comment"]
    assert sorted(released[released.str.contains("<")]) == [
        "call <PHONE>",
        "call <PHONE> after 5",
        "write to <EMAIL>",
    ]
    assert (released.isin(["none", "see file", "called twice"])).sum() == len(released) - 3


def test_yaml_carries_the_evidence_and_a_key_file_not_a_key(key_env: str) -> None:
    frame, _ = make_table("en_KE", 100, seed=2)
    text = suggest_policy_yaml(scan(frame), frame, key_file="my.key")
    assert "# KE_KRA_PIN" in text
    assert "key_file: my.key" in text
    assert key_env not in text


def test_the_outcome_written_is_what_the_release_does(key_env: str) -> None:
    from veil.demo import demo_data

    demo = demo_data()
    found = scan(demo)
    text = suggest_policy_yaml(found, demo, k=5)
    release = anonymize(demo, suggest_policy(found, demo, k=5))
    cert = release.certificate
    kept = re.search(r"#   ([\d,]+) of ([\d,]+) records kept", text)
    assert kept is not None
    assert int(kept.group(1).replace(",", "")) == cert.rows_out
    assert int(kept.group(2).replace(",", "")) == cert.rows_in
    for name, level in (cert.search or {}).get("levels", {}).items():
        assert re.search(rf"#   {re.escape(name)}: level {level} of \d+", text), name
    assert cert.rows_out >= 0.95 * cert.rows_in  # the goal's 5% at most


def _hr_with_contacts() -> pd.DataFrame:
    """IBM's HR table (1,470 real rows), an e-mail address in one job role and a phone number
    in two attrition entries: values the scan's sample seldom holds."""
    from pathlib import Path

    frame = pd.read_csv(Path(__file__).parent / "data" / "ibm_hr_attrition.csv")
    frame["JobRole"] = frame["JobRole"].astype(object)
    frame.loc[700, "JobRole"] = "Sales Executive (mary.otieno@example.co.ke)"
    frame["Attrition"] = frame["Attrition"].astype(object)
    frame.loc[[100, 1_200], "Attrition"] = ["Yes, call 0712 345 678", "No - 0722 000 111"]
    return frame.drop(columns="EmployeeNumber")


def test_identifiers_among_a_quasi_identifier_s_values_are_redacted_at_the_first_try(
    key_env: str,
) -> None:
    """A quasi-identifier (the job role) and a sensitive column (attrition) that hold a direct
    identifier in a few rows keep their roles: the scan names the rows it found by searching
    every value, the suggested policy redacts them before the role applies, and the release
    passes at the first try with none of them in it. It was refused, naming the rows, until
    the policy was edited by hand."""
    frame = _hr_with_contacts()
    found = scan(frame)
    role, sensitive = found.column("JobRole"), found.column("Attrition")
    assert role.role.value == "quasi_identifier"
    assert sensitive.role.value == "sensitive"
    assert "row 701 holds an e-mail address, found by a search of every value" in role.evidence
    assert "rows 101 and 1,201 hold a phone number" in sensitive.evidence
    policy = suggest_policy(found, frame, k=5)
    for name in ("JobRole", "Attrition"):
        assert policy.columns[name].steps == [{"redact": {"replace": "placeholder"}}], name
    text = suggest_policy_yaml(found, frame, k=5)
    assert "before its role applies; then generalized by the search below" in text
    release = anonymize(frame, policy).data
    cells = release.astype(str).to_numpy().ravel()
    assert not any("@" in c or "0712" in c or "0722" in c for c in cells)
    # the other values as the search left them: attrition is still Yes or No elsewhere
    assert set(release["Attrition"]) - {"Yes", "No"} <= {"Yes, call <PHONE>", "No - <PHONE>"}


def test_a_quasi_identifier_the_policy_declares_is_refused_when_it_holds_identifiers(
    key_env: str,
) -> None:
    """The user's own role for the column, and no step: veil does not add one, and refuses,
    naming the rows (the policy leaves it to the scan: the suggested redaction applies)."""
    from veil.exceptions import PolicyError

    frame = _hr_with_contacts()[["Age", "Gender", "JobRole"]]
    declared = {"JobRole": {"role": "quasi_identifier"}, "Age": {"role": "quasi_identifier"}}
    policy = {"unlisted": "scan", "columns": declared, "privacy": {"k": 5}}
    with pytest.raises(PolicyError, match=r"column 'JobRole': row 701 holds an e-mail address"):
        anonymize(frame, policy)
    # a class large enough keeps an address as it is: the release put out all 40 (k = 5)
    frame.loc[frame.index[:40], "JobRole"] = "Manager (hr.desk@example.co.ke)"
    declared = {"JobRole": {"role": "quasi_identifier"}, "Gender": {"role": "quasi_identifier"}}
    said = "among the values of a quasi-identifier the search may release as they are"
    with pytest.raises(
        PolicyError, match=rf"{said}: column 'JobRole': rows 1 and 701 hold an e-mail"
    ):
        anonymize(
            frame, {**policy, "columns": declared, "privacy": {"k": 5, "max_suppression": 0.05}}
        )
    left = {"unlisted": "scan", "columns": {"Age": {"role": "quasi_identifier"}}}
    release = anonymize(frame, {**left, "privacy": {"k": 5}})
    assert not release.data["JobRole"].astype(str).str.contains("@").any()
