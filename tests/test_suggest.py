"""Suggested policies: valid, applicable, and never releasing an identifier as it was."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.scan.faker_tables import make_table
from veil import anonymize
from veil.criteria import KAnonymity
from veil.privacy.suggest import suggest_policy, suggest_policy_yaml
from veil.scan import scan


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
    mapping = steps["county"][0]["generalize"]["mapping"]
    assert mapping["Nairobi (County)"] == "Nairobi"
    assert mapping["Taita\u2013Taveta"] == "Coast"
    assert steps["age"][0]["generalize"]["bins"][0] <= 18
    assert steps["marital_status"][0]["generalize"]["other"] == "Not partnered"
    assert steps["email"] == [{"drop": {}}]
    assert policy.privacy is not None
    assert policy.privacy.models == [KAnonymity(k=2)]


def test_yaml_carries_the_evidence_and_a_key_file_not_a_key(key_env: str) -> None:
    frame, _ = make_table("en_KE", 100, seed=2)
    text = suggest_policy_yaml(scan(frame), frame, key_file="my.key")
    assert "# KE_KRA_PIN" in text
    assert "key_file: my.key" in text
    assert key_env not in text


def test_suggestion_estimates_what_suppression_withholds(key_env: str) -> None:
    frame, _ = make_table("en_US", 300, seed=5)
    text = suggest_policy_yaml(scan(frame), frame, k=3)
    assert "that is a lot: generalize the quasi-identifiers further, first" in text
    from veil.demo import demo_data

    demo = demo_data()
    found = scan(demo)
    text = suggest_policy_yaml(found, demo, k=5)
    withheld = anonymize(demo, suggest_policy(found, demo, k=5)).certificate.rows_suppressed
    assert f"with the steps above, {withheld:,} records" in text  # the estimate is exact
    # the event date (Date_of_entry) is a fifth quasi-identifier: the warning says so when due
    assert ("that is a lot" in text) == (withheld / len(demo) > 0.2)
    assert "- generalize:\n        date: decade" in text
