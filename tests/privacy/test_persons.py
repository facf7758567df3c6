"""Several rows per person: k counts people, not rows, and each person's risk is their riskiest
row (prosecutor) and the chance that any of their rows gives them away (sdcMicro's household
risk), checked by hand on a small table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from veil.cli import main
from veil.privacy import check


def _claims() -> pd.DataFrame:
    # A has 3 claims in (Nairobi, 30s), B 1 there; C 2 claims in (Kisumu, 40s)
    return pd.DataFrame(
        {
            "client": ["A", "A", "A", "B", "C", "C"],
            "county": ["Nairobi"] * 4 + ["Kisumu"] * 2,
            "age": ["30-39"] * 4 + ["40-49"] * 2,
            "amount": [100, 200, 300, 400, 500, 600],
        }
    )


def test_people_not_rows_by_hand() -> None:
    rows = check(_claims(), ["county", "age"], k=2)
    assert rows.k == 2  # rows: classes of 4 and 2
    assert rows.failed == ()
    people = check(_claims(), ["county", "age"], k=2, person="client")
    assert people.k == 1  # Kisumu holds one person, C, twice
    assert people.failed == ("k >= 2",)
    p = people.persons
    assert p is not None
    assert p.people == 3
    assert p.prosecutor_average == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)
    assert p.prosecutor_max == 1.0
    # any of A's three rows (each 1/2): 1 - (1/2)^3; B's one row: 1/2; C: certain
    assert p.household_average == pytest.approx((1 - 0.5**3 + 0.5 + 1) / 3)
    assert p.people_at_risk == pytest.approx(1.0)  # all above 0.2


def test_the_cli_judges_k_on_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "claims.csv"
    _claims().to_csv(data, index=False)
    assert main(["check", str(data), "-q", "county,age", "-k", "2"]) == 0
    capsys.readouterr()
    code = main(
        [
            "check",
            str(data),
            "-q",
            "county,age",
            "-k",
            "2",
            "--person-id",
            "client",
            "--format",
            "json",
        ]
    )
    body = json.loads(capsys.readouterr().out)
    assert code == 1
    assert body["k"] == 1
    assert body["persons"]["people"] == 3
    assert body["risk"]["prosecutor_max"] == 0.5  # the rows' own figures stay beside


def test_the_search_counts_people() -> None:
    """A client with many claims fills a class alone at row level; on people, the search must
    generalize further (or suppress) until every class holds k distinct clients, and verify
    counts them again from the release."""
    import numpy as np

    from veil import anonymize
    from veil.privacy import verify

    rng = np.random.default_rng(4)
    clients = np.repeat(np.arange(60), rng.integers(1, 9, 60))
    people = pd.DataFrame(
        {
            "client": [f"C{c:03d}" for c in clients],
            "age": rng.integers(20, 70, len(clients))[clients % 60],
            "county": rng.choice(["Nairobi", "Kisumu", "Mombasa", "Nakuru"], len(clients)),
        }
    )
    people["age"] = np.asarray(people["age"])
    columns = {
        "client": {"role": "insensitive"},
        "age": {"role": "quasi_identifier"},
        "county": {"role": "quasi_identifier"},
    }
    rows = anonymize(people, {"columns": columns, "privacy": {"k": 3}})
    assert check(rows.data, ["age", "county"]).k >= 3
    by_rows = check(rows.data, ["age", "county"], person="client").k
    release = anonymize(people, {"columns": columns, "privacy": {"k": 3, "person_id": "client"}})
    assert check(release.data, ["age", "county"], person="client").k >= 3
    assert by_rows < 3  # counting rows left classes of fewer than 3 people
    verified = verify(release.data, release.certificate.to_dict())
    assert verified.ok
    assert any("(people, by client)" in claim for claim, _, _ in verified.claims)
    gone = verify(release.data.drop(columns="client"), release.certificate.to_dict(), content=False)
    assert not gone.ok
