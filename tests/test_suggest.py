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
