"""Right of access on real stores: SQLite, the tests' PostgreSQL server, a folder of CSV
files and S3 objects in moto's server. What retrieve finds is checked against joins written
by hand in SQL (an oracle that shares no code with veil's breadth-first walk)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.rights.conftest import build_insurer, insurer_map, write_exports
from veil.cli import main
from veil.exceptions import InputError, PolicyError
from veil.rights import DataMap, load_map, parse_subject, retrieve

JOINS = {
    "clients": "SELECT c.id FROM clients c WHERE c.national_id = :v",
    "policies": "SELECT p.id FROM policies p JOIN clients c ON p.client_id = c.id "
    "WHERE c.national_id = :v",
    "claims": "SELECT k.id FROM claims k JOIN policies p ON k.policy_id = p.id "
    "JOIN clients c ON p.client_id = c.id WHERE c.national_id = :v",
    "payments": "SELECT y.id FROM payments y JOIN claims k ON y.claim_id = k.id JOIN policies p "
    "ON k.policy_id = p.id JOIN clients c ON p.client_id = c.id WHERE c.national_id = :v",
    "contacts": "SELECT t.id FROM contacts t JOIN clients c ON t.client_id = c.id "
    "WHERE c.national_id = :v",
}


def _oracle(url: str, national_id: str) -> dict[str, set[int]]:
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        out = {
            t: {r[0] for r in connection.execute(sa.text(q), {"v": national_id})}
            for t, q in JOINS.items()
        }
    engine.dispose()
    return out


def test_retrieve_finds_every_linked_row_and_nothing_else(database: str) -> None:
    data_map = DataMap.model_validate(insurer_map(database))
    for national_id in ("20000007", "20000042", "20000119"):
        found = retrieve(data_map, {"national_id": national_id})
        truth = _oracle(database, national_id)
        for table, ids in truth.items():
            got = {r["id"] for r in found.stores["core"].get(table, [])}
            assert got == ids, (table, national_id)
        assert found.total == sum(map(len, truth.values()))
        data = found.to_dict()
        assert data["subject"] == {"national_id": national_id}
        json.dumps(data)  # dates and decimals made JSON
    by_email = retrieve(data_map, {"email": "client42@example.co.ke"})
    assert by_email.counts == retrieve(data_map, {"national_id": "20000042"}).counts
    nobody = retrieve(data_map, {"national_id": "99999999"})
    assert nobody.total == 0


def test_files_and_s3_objects_are_searched_too(tmp_path: Path, s3_endpoint: str) -> None:
    import boto3

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    tables = build_insurer(url, clients=50)
    write_exports(tmp_path / "exports", tables)
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = f"veil-{tmp_path.name.lower().replace('_', '-')}"[:60]
    s3.create_bucket(Bucket=bucket)
    frame = tables["clients"][["national_id", "name"]]
    s3.put_object(Bucket=bucket, Key="crm/clients.csv", Body=frame.to_csv(index=False).encode())
    s3.put_object(Bucket=bucket, Key="other/unrelated.csv", Body=b"national_id\n20000007\n")
    spec = insurer_map(url)
    spec["stores"]["exports"] = {
        "kind": "files",
        "path": str(tmp_path / "exports"),
        "tables": {"export_*.csv": {"subject_keys": {"national_id": "NationalID"}}},
    }
    crm = {"crm/": {"subject_keys": {"national_id": "national_id"}}}
    spec["stores"]["lake"] = {
        "kind": "s3",
        "bucket": bucket,
        "endpoint_url": s3_endpoint,
        "tables": crm,
    }
    found = retrieve(DataMap.model_validate(spec), {"national_id": "20000007"})
    assert [r["_file"] for r in found.stores["exports"]["export_*.csv"]] == ["export_0.csv"]
    expected = {"_object": "crm/clients.csv", "national_id": "20000007", "name": "Client 7"}
    assert found.stores["lake"]["crm/"] == [expected]


def test_bad_maps_and_subjects_get_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=10)
    cases: list[tuple[dict[str, Any], str]] = []
    cyclic = insurer_map(url)
    cyclic["stores"]["core"]["tables"]["clients"]["links"] = {"id": "payments.id"}
    cases.append((cyclic, "store 'core': links form a cycle: .*payments -> claims"))
    unknown = insurer_map(url)
    unknown["stores"]["core"]["tables"]["contacts"]["subject_keys"] = {"phone": "phone"}
    cases.append((unknown, "subject key 'phone' is not in subject_keys"))
    dangling = insurer_map(url)
    dangling["stores"]["core"]["tables"]["claims"]["links"] = {"policy_id": "policy.id"}
    cases.append((dangling, "names a table the store does not map"))
    archived = insurer_map(
        url, retention={"old": {"keep": "1 year", "then": "archive", "archive_to": "cold"}}
    )
    archived["stores"]["core"]["tables"]["policies"]["retention"] = "old"
    archived["stores"]["cold"] = {
        "kind": "sql",
        "url": url.replace("insurer", "cold"),
        "tables": {"policies": {}},
    }
    # claims and payments link to policies: archived with them, so the archive must map them
    cases.append(
        (archived, "archives to 'cold', which does not map claims, payments: map them there too")
    )
    elsewhere = insurer_map(
        url, retention={"old": {"keep": "1 year", "then": "archive", "archive_to": "files"}}
    )
    elsewhere["stores"]["core"]["tables"]["contacts"]["retention"] = "old"
    elsewhere["stores"]["files"] = {
        "kind": "files",
        "path": str(tmp_path),
        "tables": {"contacts": {}},
    }
    cases.append((elsewhere, "the archive must be another sql store"))
    for spec, message in cases:
        path = tmp_path / "map.yaml"
        import yaml

        path.write_text(yaml.safe_dump(spec))
        with pytest.raises(PolicyError, match=message):
            load_map(path)
    missing = insurer_map(url)
    missing["stores"]["core"]["tables"]["refunds"] = {"links": {"claim_id": "claims.id"}}
    with pytest.raises(InputError, match="store 'core' has no table 'refunds'"):
        retrieve(DataMap.model_validate(missing), {"national_id": "20000001"})
    wrong = insurer_map(url)
    wrong["stores"]["core"]["tables"]["clients"]["subject_keys"]["national_id"] = "nid"
    with pytest.raises(InputError, match="table 'clients' has no column 'nid'"):
        retrieve(DataMap.model_validate(wrong), {"national_id": "20000001"})
    data_map = DataMap.model_validate(insurer_map(url))
    with pytest.raises(InputError, match="subject key 'kra_pin' is not in the map"):
        parse_subject("kra_pin=A123", data_map)
    with pytest.raises(InputError, match="must read KEY=VALUE"):
        parse_subject("20000001", data_map)
    down = insurer_map("postgresql+pg8000://veil@127.0.0.1:1/none")
    with pytest.raises(InputError, match="store 'core' cannot be reached"):
        retrieve(DataMap.model_validate(down), {"national_id": "1"})


def test_cli_retrieve_exports_json_and_records_the_request(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=30)
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(insurer_map(url)))
    code = main(
        [
            "rights",
            "retrieve",
            "--map",
            str(map_path),
            "--subject",
            "national_id=20000003",
            "--format",
            "json",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    data = json.loads(printed)
    assert set(data) >= {"subject", "stores", "counts"}
    assert data["counts"]["clients"] == 1
    export = tmp_path / "export.json"
    assert (
        main(
            [
                "rights",
                "retrieve",
                "--map",
                str(map_path),
                "--subject",
                "national_id=20000003",
                "-o",
                str(export),
            ]
        )
        == 0
    )
    assert json.loads(export.read_text())["counts"] == data["counts"]
    bundle = tmp_path / "export.zip"
    assert (
        main(
            [
                "rights",
                "retrieve",
                "--map",
                str(map_path),
                "--subject",
                "national_id=20000003",
                "-o",
                str(bundle),
            ]
        )
        == 0
    )
    import zipfile

    with zipfile.ZipFile(bundle) as archive:
        assert sorted(archive.namelist()) == ["core.json", "summary.html"]
        page = archive.read("summary.html").decode()
        core = json.loads(archive.read("core.json"))
    assert "What is held about you" in page
    assert "Client 3" in page
    assert len(core["tables"]["clients"]) == 1
    assert (
        main(
            [
                "rights",
                "retrieve",
                "--map",
                str(map_path),
                "--subject",
                "national_id=20000003",
                "-o",
                str(bundle),
            ]
        )
        == 2
    )  # never overwrites
    assert (
        main(["rights", "retrieve", "--map", str(map_path), "--subject", "national_id=99999999"])
        == 0
    )
    assert "nothing is held" in capsys.readouterr().out
    log = tmp_path / "insurer.audit.jsonl"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["action"] for e in entries] == ["retrieve"] * 4  # the refused export: none
    assert entries[3]["counts"] == {}
    assert all("20000003" not in line for line in log.read_text().splitlines())
    assert main(["rights", "audit", "--map", str(map_path), "--verify"]) == 0
    assert "4 entries, intact" in capsys.readouterr().out
