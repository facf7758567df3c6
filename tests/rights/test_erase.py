"""Right to erasure on SQLite, PostgreSQL, files and S3: exactly the subject's rows go,
everyone else's rows stay row for row (tables) and byte for byte (files); legal holds keep
rows with identifiers replaced; a killed erasure finishes when run again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sqlalchemy as sa
import yaml

from tests.conftest import stopped_at
from tests.rights.conftest import build_insurer, insurer_map, write_exports
from tests.rights.test_retrieve import _oracle
from veil.cli import main
from veil.exceptions import InputError
from veil.rights import DataMap, retrieve
from veil.rights.erase import erase

TABLES = ("clients", "policies", "claims", "payments", "contacts")


def _snapshot(url: str) -> dict[str, pd.DataFrame]:
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        out = {
            t: pd.read_sql(sa.text(f"SELECT * FROM {t} ORDER BY id"), connection) for t in TABLES
        }
    engine.dispose()
    return out


def _busy(url: str) -> str:
    """A client with rows in every table (so every step of the walk is exercised)."""
    for i in range(200):
        national_id = f"{20000000 + i}"
        if all(_oracle(url, national_id).values()):
            return national_id
    raise AssertionError("no client has rows in every table")


def test_erase_removes_exactly_the_subjects_rows(database: str, tmp_path: Path) -> None:
    data_map = DataMap.model_validate(insurer_map(database))
    before = _snapshot(database)
    busy = _busy(database)
    doomed = _oracle(database, busy)
    plan = erase(
        data_map,
        {"national_id": busy},
        subject_id="s11",
        journal=tmp_path / "journal",
        dry_run=True,
    )
    assert plan.removed == {f"core.{t}": len(ids) for t, ids in doomed.items()}
    assert _snapshot(database)["payments"].equals(before["payments"])  # a dry run changes nothing
    result = erase(data_map, {"national_id": busy}, subject_id="s11", journal=tmp_path / "journal")
    assert result.verified
    assert result.removed == {f"core.{t}": len(ids) for t, ids in doomed.items()}
    after = _snapshot(database)
    for table in TABLES:  # everyone else's rows, row for row
        kept = before[table][~before[table]["id"].isin(doomed[table])].reset_index(drop=True)
        pd.testing.assert_frame_equal(after[table], kept)
    assert retrieve(data_map, {"national_id": busy}).total == 0
    again = erase(data_map, {"national_id": busy}, subject_id="s11", journal=tmp_path / "journal")
    assert again.verified
    assert again.removed == {}  # idempotent
    assert not (tmp_path / "journal").exists()  # journal and its folder gone once verified


def test_a_legal_hold_keeps_rows_with_identifiers_replaced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=60)
    spec = insurer_map(url, retention={"insurance_record": {"hold": "7 years"}})
    spec["stores"]["core"]["tables"]["claims"]["retention"] = "insurance_record"
    data_map = DataMap.model_validate(spec)
    busy = _busy(url)
    doomed = _oracle(url, busy)
    before = _snapshot(url)
    result = erase(data_map, {"national_id": busy}, subject_id="s5", journal=tmp_path / "journal")
    assert result.verified
    after = _snapshot(url)
    # claims are held; the policies and the client they point at are kept too, anonymized
    assert set(after["claims"]["id"]) == set(before["claims"]["id"])
    client = after["clients"].set_index("id").loc[next(iter(doomed["clients"]))]
    assert client["national_id"].startswith("erased-")
    assert client["email"].startswith("erased-")
    assert client["name"].startswith("erased-")  # veil's scan reads it as a person's name
    assert result.anonymized["core.clients"] == 1
    assert result.removed.get("core.payments", 0) == len(doomed["payments"])
    assert not set(after["payments"]["id"]) & doomed["payments"]
    untouched = after["clients"][~after["clients"]["id"].isin(doomed["clients"])]
    pd.testing.assert_frame_equal(
        untouched.reset_index(drop=True),
        before["clients"][~before["clients"]["id"].isin(doomed["clients"])].reset_index(drop=True),
    )
    expired = erase(
        DataMap.model_validate(spec),
        {"national_id": "20000006"},
        subject_id="s6",
        journal=tmp_path / "journal",
        as_of=pd.Timestamp("2040-01-01"),
    )
    assert expired.verified


def test_files_lose_only_the_subjects_lines_byte_for_byte(tmp_path: Path, s3_endpoint: str) -> None:
    import boto3

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    tables = build_insurer(url, clients=40)
    folder = tmp_path / "exports"
    write_exports(folder, tables)
    original = (folder / "export_0.csv").read_bytes()
    other = (folder / "export_1.csv").read_bytes()
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = "veil-erase-test"
    s3.create_bucket(Bucket=bucket)
    body = b'national_id,note\r\n20000003,"two\r\nlines"\r\n20000004,kept\r\n'
    s3.put_object(Bucket=bucket, Key="crm/a.csv", Body=body)
    spec = insurer_map(url)
    spec["stores"]["exports"] = {
        "kind": "files",
        "path": str(folder),
        "tables": {"export_*.csv": {"subject_keys": {"national_id": "NationalID"}}},
    }
    crm = {"crm/": {"subject_keys": {"national_id": "national_id"}}}
    spec["stores"]["lake"] = {
        "kind": "s3",
        "bucket": bucket,
        "endpoint_url": s3_endpoint,
        "tables": crm,
    }
    result = erase(
        DataMap.model_validate(spec),
        {"national_id": "20000003"},
        subject_id="s3",
        journal=tmp_path / "journal",
    )
    assert result.verified
    lines = original.splitlines(keepends=True)
    expected = b"".join(line for line in lines if not line.startswith(b"20000003,"))
    assert (folder / "export_0.csv").read_bytes() == expected
    assert (folder / "export_1.csv").read_bytes() == other
    assert (
        s3.get_object(Bucket=bucket, Key="crm/a.csv")["Body"].read()
        == b"national_id,note\r\n20000004,kept\r\n"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["export_0.csv", "export_1.csv"]


def _kill_setup(folder: Path) -> tuple[dict[str, Any], Path]:
    folder.mkdir(parents=True)
    url = f"sqlite:///{folder / 'insurer.db'}"
    tables = build_insurer(url, clients=300)
    exports = folder / "exports"
    exports.mkdir()
    part = tables["clients"].iloc[:150][["national_id", "name"]]
    for i in range(40):  # many files: the kill lands between them
        part.to_csv(exports / f"f{i:02d}.csv", index=False)
    spec = insurer_map(url)
    files = {"f*.csv": {"subject_keys": {"national_id": "national_id"}}}
    spec["stores"]["exports"] = {"kind": "files", "path": str(exports), "tables": files}
    map_path = folder / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(spec))
    return spec, map_path


def _state(folder: Path) -> tuple[dict[str, list[Any]], dict[str, bytes]]:
    tables = _snapshot(f"sqlite:///{folder / 'insurer.db'}")
    files = {p.name: p.read_bytes() for p in sorted((folder / "exports").glob("*"))}
    return {t: f.to_numpy().tolist() for t, f in tables.items()}, files


@pytest.mark.parametrize("when", ["started", "files half done"])
def test_a_killed_erasure_finishes_when_run_again(tmp_path: Path, key: bytes, when: str) -> None:
    """kill -9 as soon as the journal is written, or as soon as it records the first file
    rewritten (files and objects go first, the database last: the files then half rewritten,
    the database untouched), then the same command: the end state equals an uninterrupted
    erasure's, table for table and byte for byte."""
    spec, map_path = _kill_setup(tmp_path / "killed")
    reference_spec, _ = _kill_setup(tmp_path / "reference")
    erase(
        DataMap.model_validate(reference_spec),
        {"national_id": "20000009"},
        subject_id="ref",
        journal=tmp_path / "reference" / "journal",
    )
    command = [
        sys.executable,
        "-m",
        "veil",
        "rights",
        "erase",
        "--map",
        str(map_path),
        "--subject",
        "national_id=20000009",
    ]
    env = {**os.environ, "VEIL_KEY": key.decode()}
    point = {"started": "journal saved", "files half done": "journal step done"}[when]
    process = subprocess.Popen(
        command,
        env={**env, "VEIL_PAUSE_AT": point},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = map_path.with_name("insurer.journal")
    assert stopped_at(process), "the erasure ended before it could be killed"
    if when == "files half done":  # the files went first: one is done, the database is not
        assert '.csv": "done"' in next(journal.glob("*.json")).read_text()
    process.send_signal(signal.SIGKILL)
    _, status = os.waitpid(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == -signal.SIGKILL
    assert list(journal.glob("*.json")), "killed mid-way, the journal must remain"
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout
    assert retrieve(DataMap.model_validate(spec), {"national_id": "20000009"}).total == 0
    assert _state(tmp_path / "killed") == _state(tmp_path / "reference")
    assert not list(journal.glob("*.json"))


def test_bad_requests_get_one_line(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=20)
    spec: dict[str, Any] = insurer_map(url)
    spec["stores"]["core"]["read_only"] = True
    with pytest.raises(InputError, match="store 'core' is read-only"):
        erase(
            DataMap.model_validate(spec),
            {"national_id": "20000001"},
            subject_id="x",
            journal=tmp_path / "j",
        )
    down = insurer_map("postgresql+psycopg://veil@127.0.0.1:1/none")
    # the keys are followed before anything changes: a store out of reach stops the request
    # with nothing changed and no journal to finish
    with pytest.raises(InputError, match="cannot be reached"):
        erase(
            DataMap.model_validate(down),
            {"national_id": "1"},
            subject_id="y",
            journal=tmp_path / "j",
        )
    assert not (tmp_path / "j" / "y.json").exists()
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(insurer_map(url)))
    code = main(
        [
            "rights",
            "erase",
            "--map",
            str(map_path),
            "--subject",
            "national_id=99999999",
            "--format",
            "json",
        ]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["removed"] == {}
    assert (
        main(["rights", "erase", "--map", str(map_path), "--subject", "national_id=99999999"]) == 0
    )
    assert "nothing is held about this person" in capsys.readouterr().out
    assert (
        main(
            [
                "rights",
                "erase",
                "--map",
                str(map_path),
                "--subject",
                "national_id=20000002",
                "--mode",
                "shred",
            ]
        )
        == 2
    )
    assert "--mode must be one of" in capsys.readouterr().err
    assert main(["rights", "audit", "--map", str(map_path), "--verify"]) == 0


def test_a_batch_erasure_removes_every_subjects_rows_at_once(database: str, tmp_path: Path) -> None:
    from veil.rights.erase import erase_many

    data_map = DataMap.model_validate(insurer_map(database))
    before = _snapshot(database)
    batch = [f"{20000000 + i}" for i in range(0, 120, 7)]
    doomed: dict[str, set[int]] = {t: set() for t in TABLES}
    for national_id in batch:
        for table, ids in _oracle(database, national_id).items():
            doomed[table] |= ids
    result = erase_many(
        data_map, "national_id", batch, subject_id="batch", journal=tmp_path / "journal"
    )
    assert result.verified
    assert result.removed == {f"core.{t}": len(ids) for t, ids in doomed.items() if ids}
    after = _snapshot(database)
    for table in TABLES:
        kept = before[table][~before[table]["id"].isin(doomed[table])].reset_index(drop=True)
        pd.testing.assert_frame_equal(after[table], kept)


def test_an_interrupted_erasure_resumes_only_in_its_own_mode(tmp_path: Path) -> None:
    from functools import partial

    from tests.rights.faults import killed_at

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=20)
    data_map = DataMap.model_validate(insurer_map(url))
    subject = {"national_id": _busy(url)}
    run = partial(erase, data_map, subject, subject_id="m", journal=tmp_path / "j")
    assert killed_at(run, 2)  # the journal written, the database not yet committed
    with pytest.raises(InputError, match="with --mode delete is in .*: finish it in that mode"):
        erase(data_map, subject, subject_id="m", journal=tmp_path / "j", mode="anonymize")
    assert run().verified
