"""A person is every key they are known by. Customers are keyed by national ID in a database
(SQLite and the tests' PostgreSQL), their phones in its contacts table; a CSV store knows them
only by e-mail, an S3 store only by phone. Erasing by national ID removes them from all three
and verifies; retrieve returns all three. A family e-mail shared by two customers stops the
request instead of erasing both, until the map lists it as shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy as sa
import yaml

from tests.rights.conftest import insurer_map
from veil.cli import main
from veil.exceptions import InputError
from veil.rights import DataMap, retrieve
from veil.rights.erase import erase


def _person(url: str, index: int) -> dict[str, Any]:
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        client = dict(
            connection.execute(
                sa.text("SELECT id, national_id, email FROM clients ORDER BY id LIMIT 1 OFFSET :i"),
                {"i": index},
            )
            .one()
            ._mapping
        )
        phones = [
            r[0]
            for r in connection.execute(
                sa.text("SELECT phone FROM contacts WHERE client_id = :c"), {"c": client["id"]}
            )
        ]
    engine.dispose()
    return {**client, "phones": phones}


def _stores(
    tmp_path: Path, url: str, s3_endpoint: str, people: list[dict[str, Any]]
) -> tuple[dict[str, Any], Path, Any, str]:
    import boto3

    folder = tmp_path / "crm"
    folder.mkdir()
    lines = ["Email,Segment\r\n"] + [f"{p['email']},gold\r\n" for p in people]
    lines.append("someone.else@example.org,silver\r\n")
    (folder / "mailing.csv").write_bytes("".join(lines).encode())
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = f"veil-closure-{abs(hash(str(tmp_path))) % 10**8}"
    s3.create_bucket(Bucket=bucket)
    calls = ["phone,minutes\r\n"] + [f"{p['phones'][0]},12\r\n" for p in people if p["phones"]]
    calls.append("+254700000000,3\r\n")
    s3.put_object(Bucket=bucket, Key="calls/2025.csv", Body="".join(calls).encode())
    spec = insurer_map(url)
    spec["subject_keys"] = ["national_id", "email", "phone"]
    spec["stores"]["core"]["tables"]["contacts"]["subject_keys"] = {"phone": "phone"}
    spec["stores"]["crm"] = {
        "kind": "files",
        "path": str(folder),
        "tables": {"mailing.csv": {"subject_keys": {"email": "Email"}}},
    }
    calls_table = {"calls/": {"subject_keys": {"phone": "phone"}}}
    spec["stores"]["calls"] = {
        "kind": "s3",
        "bucket": bucket,
        "endpoint_url": s3_endpoint,
        "tables": calls_table,
    }
    return spec, folder, s3, bucket


def _with_phone(url: str) -> int:
    for i in range(100):
        if _person(url, i)["phones"]:
            return i
    raise AssertionError("no client has a phone")


def test_erasing_by_national_id_reaches_the_email_and_phone_stores(
    database: str, tmp_path: Path, s3_endpoint: str
) -> None:
    target = _person(database, _with_phone(database))
    other = _person(database, _with_phone(database) + 1)
    spec, folder, s3, bucket = _stores(tmp_path, database, s3_endpoint, [target, other])
    data_map = DataMap.model_validate(spec)
    subject = {"national_id": target["national_id"]}

    found = retrieve(data_map, subject)
    assert set(found.stores) == {"core", "crm", "calls"}
    assert found.keys["email"] == [target["email"]]
    assert set(found.keys["phone"]) == set(target["phones"])
    assert found.to_dict()["keys"] == found.keys

    mailing_before = (folder / "mailing.csv").read_bytes()
    result = erase(data_map, subject, subject_id="p", journal=tmp_path / "journal")
    assert result.verified
    assert result.removed["crm.mailing.csv"] == 1
    assert result.removed["calls.calls/"] == 1
    # the e-mail and phone stores lost exactly that person's line
    assert (folder / "mailing.csv").read_bytes() == mailing_before.replace(
        f"{target['email']},gold\r\n".encode(), b""
    )
    body = s3.get_object(Bucket=bucket, Key="calls/2025.csv")["Body"].read().decode()
    assert target["phones"][0] not in body
    assert other["phones"][0] in body
    assert "+254700000000" in body
    again = retrieve(data_map, {"email": target["email"]})
    assert again.total == 0
    assert retrieve(data_map, {"national_id": other["national_id"]}).stores.keys() == {
        "core",
        "crm",
        "calls",
    }


def test_a_shared_family_email_stops_the_request_until_the_map_says_so(
    tmp_path: Path, s3_endpoint: str, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.rights.conftest import build_insurer

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=30)
    engine = sa.create_engine(url)
    with engine.begin() as connection:  # two customers of one household share an e-mail
        connection.execute(
            sa.text("UPDATE clients SET email = 'family@example.co.ke' WHERE id IN (1, 2)")
        )
    engine.dispose()
    first, second = _person(url, 0), _person(url, 1)
    spec, _folder, _, _ = _stores(tmp_path, url, s3_endpoint, [first])
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(spec))
    before = pd.read_sql("SELECT * FROM clients", url)
    code = main(
        [
            "rights",
            "erase",
            "--map",
            str(map_path),
            "--subject",
            f"national_id={first['national_id']}",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "2 values of 'national_id'" in err
    assert "follow.shared" in err
    assert pd.read_sql("SELECT * FROM clients", url).equals(before)  # nothing erased
    with pytest.raises(InputError, match="2 values of 'national_id'"):
        retrieve(DataMap.model_validate(spec), {"national_id": first["national_id"]})

    spec["follow"] = {"shared": {"email": ["family@example.co.ke"]}}
    map_path.write_text(yaml.safe_dump(spec))
    assert (
        main(
            [
                "rights",
                "erase",
                "--map",
                str(map_path),
                "--subject",
                f"national_id={first['national_id']}",
                "--format",
                "json",
            ]
        )
        == 0
    )
    erased = json.loads(capsys.readouterr().out)
    assert erased["verified"]
    left = pd.read_sql("SELECT national_id FROM clients", url)["national_id"].tolist()
    assert first["national_id"] not in left
    assert second["national_id"] in left  # the other member of the household stays
    # the audit entry names the keys followed, hashed
    log = [json.loads(x) for x in (tmp_path / "insurer.audit.jsonl").read_text().splitlines()]
    followed = log[-1]["detail"]["keys"]
    assert set(followed) >= {"national_id"}
    assert first["national_id"] not in json.dumps(log)


def test_a_resumed_erasure_follows_the_keys_the_first_run_found(
    tmp_path: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the database was erased, a re-run can no longer find the e-mail there:
    the journal kept every key followed, sealed with the map's key (never in clear)."""
    from tests.rights.conftest import build_insurer
    from veil.rights._journal import Journal
    from veil.rights.erase import _opened

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=30)
    target = _person(url, _with_phone(url))
    spec, folder, _, _ = _stores(tmp_path, url, s3_endpoint, [target])
    data_map = DataMap.model_validate(spec)
    key = b"k" * 32
    monkeypatch.setattr(Journal, "close", lambda self: None)  # the journal stays, as if killed
    subject = {"national_id": target["national_id"]}
    assert erase(data_map, subject, subject_id="p", journal=tmp_path / "j", key=key).verified
    text = (tmp_path / "j" / "p.json").read_text()
    for raw in (target["national_id"], target["email"], *target["phones"]):
        assert raw not in text  # sealed, not in clear
    kept = _opened(key, "p", json.loads(text)["keys"])
    assert kept["email"] == [target["email"]]
    # the person's mailing line comes back (a restore from a backup); the database row that
    # held the e-mail is gone, so only the journal's keys can find it
    with (folder / "mailing.csv").open("ab") as handle:
        handle.write(f"{target['email']},gold\r\n".encode())
    again = erase(data_map, subject, subject_id="p", journal=tmp_path / "j", key=key)
    assert again.resumed
    assert again.verified
    assert target["email"] not in (folder / "mailing.csv").read_text()
    with pytest.raises(InputError, match="do not open with the map's key"):
        erase(data_map, subject, subject_id="p", journal=tmp_path / "j", key=b"x" * 32)
