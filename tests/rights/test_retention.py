"""Retention on a real database: rows older than their class keeps them (with the rows that
link to them) move to the archive store or go; everything younger stays as it was."""

from __future__ import annotations

import csv
import io
import os
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
import yaml

from tests.rights.conftest import build_insurer, insurer_map
from tests.rights.faults import killed_at, steps_of
from tests.rights.test_erase import TABLES, _snapshot
from veil.cli import main
from veil.rights import DataMap, retrieve
from veil.rights.retention import apply_retention


def _spec(url: str, archive: str, then: str) -> dict:
    spec = insurer_map(
        url, retention={"operational": {"keep": "3 years", "then": then, "archive_to": "archive"}}
    )
    spec["stores"]["core"]["tables"]["clients"].update(
        retention="operational", date_column="joined"
    )
    # the archive maps what it receives, so that retrieve and erase still reach it
    tables = insurer_map(archive)["stores"]["core"]["tables"]
    spec["stores"]["archive"] = {"kind": "sql", "url": archive, "tables": tables}
    return spec


def test_old_clients_and_their_rows_move_to_the_archive(tmp_path: Path, key: bytes) -> None:
    url, archive = f"sqlite:///{tmp_path / 'core.db'}", f"sqlite:///{tmp_path / 'archive.db'}"
    tables = build_insurer(url, clients=80)
    sa.create_engine(archive).dispose()
    as_of = pd.Timestamp("2024-06-01")
    old = set(
        tables["clients"].loc[tables["clients"]["joined"] < as_of - pd.DateOffset(years=3), "id"]
    )
    assert 0 < len(old) < 80
    before = _snapshot(url)
    data_map = DataMap.model_validate(_spec(url, archive, "archive"))
    journal = tmp_path / "journal"
    plan = apply_retention(data_map, as_of=as_of, dry_run=True, journal=journal)
    assert plan.archived["core.clients"] == len(old)
    assert _snapshot(url)["clients"].equals(before["clients"])
    done = apply_retention(data_map, as_of=as_of, journal=journal)
    assert done.archived == plan.archived
    after = _snapshot(url)
    assert set(after["clients"]["id"]) == set(before["clients"]["id"]) - old
    old_policies = set(before["policies"].loc[before["policies"]["client_id"].isin(old), "id"])
    assert not set(after["policies"]["id"]) & old_policies
    engine = sa.create_engine(archive)
    with engine.connect() as connection:
        archived_clients = pd.read_sql(sa.text("SELECT * FROM clients ORDER BY id"), connection)
    engine.dispose()
    assert set(archived_clients["id"]) == old
    columns = [(c["name"], str(c["type"])) for c in sa.inspect(engine).get_columns("clients")]
    source = sa.create_engine(url)
    assert columns == [
        (c["name"], str(c["type"])) for c in sa.inspect(source).get_columns("clients")
    ]  # the source's definition
    assert sa.inspect(engine).get_foreign_keys("policies")[0]["referred_table"] == "clients"
    source.dispose()
    for table in TABLES:  # what is younger stays row for row
        assert len(after[table]) + done.archived.get(f"core.{table}", 0) == len(before[table])
    again = apply_retention(data_map, as_of=as_of, journal=journal)  # nothing left to move
    assert again.archived == {}


def test_delete_class_and_the_cli(tmp_path: Path, key: bytes) -> None:
    url, archive = f"sqlite:///{tmp_path / 'core.db'}", f"sqlite:///{tmp_path / 'archive.db'}"
    build_insurer(url, clients=40)
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(_spec(url, archive, "delete")))
    assert (
        main(["rights", "retention", "--map", str(map_path), "--as-of", "2024-06-01", "--dry-run"])
        == 0
    )
    before = _snapshot(url)
    assert main(["rights", "retention", "--map", str(map_path), "--as-of", "2024-06-01"]) == 0
    after = _snapshot(url)
    assert len(after["clients"]) < len(before["clients"])
    assert (pd.to_datetime(after["clients"]["joined"]) >= pd.Timestamp("2021-06-01")).all()
    assert main(["rights", "audit", "--map", str(map_path), "--verify"]) == 0


# ------------------------------------------------------------------------ files and objects
AS_OF = pd.Timestamp("2025-06-01")
OPERATIONAL, ARCHIVE = "2024-08-01", "2020-06-01"  # AS_OF less 10 months, less 5 years


def _record(row: tuple[str, ...], ending: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=ending).writerow(row)
    return buffer.getvalue()


def _claims(seed: int, n: int) -> list[tuple[str, str, str, str]]:
    rng = np.random.default_rng(seed)
    days = rng.integers(0, (AS_OF - pd.Timestamp("2018-01-01")).days, n)
    notes = ["paid", "a, comma", 'said "no"', "two\nlines"]
    rows = [
        (
            f"{30000000 + seed * 100 + i}",
            f"Client {i}",
            str((pd.Timestamp("2018-01-01") + pd.Timedelta(days=int(d))).date()),
            notes[i % 4],
        )
        for i, d in enumerate(days)
    ]
    rows[3] = (rows[3][0], rows[3][1], "", "no date: kept")
    return rows


HEADER = ("national_id", "name", "filed", "note")


def _file_stores(folder: Path) -> tuple[dict[str, Any], dict[str, list[tuple[str, ...]]]]:
    """A folder of exports (claims by row date, letters by file age) and a cold archive that
    already holds rows from an earlier run."""
    exports, cold = folder / "exports", folder / "cold"
    exports.mkdir(parents=True)
    cold.mkdir()
    claims = {"claims_2023.csv": _claims(1, 30), "claims_2024.csv": _claims(2, 30)}
    for (name, rows), ending in zip(claims.items(), ("\r\n", "\n"), strict=True):
        (exports / name).write_bytes("".join(_record(r, ending) for r in [HEADER, *rows]).encode())
    earlier = [
        ("29000001", "Old One", "2021-03-04", "kept"),
        ("29000002", "Old Two", "2019-01-02", "past five years"),
    ]
    claims["cold:claims_2023.csv"] = earlier
    text = "".join(_record(r, "\r\n") for r in [HEADER, *earlier])
    (cold / "claims_2023.csv").write_bytes(text.encode())
    for name, age in (
        ("letters_old.csv", pd.DateOffset(years=2)),
        ("letters_new.csv", pd.DateOffset(months=1)),
    ):
        (exports / name).write_text(f"national_id,letter\n{name[8:11]}1,Dear client\n")
        stamp = (AS_OF - age).timestamp()
        os.utime(exports / name, (stamp, stamp))
    keys = {"national_id": "national_id"}
    spec = {
        "subject_keys": ["national_id"],
        "retention": {
            "operational": {"keep": "10 months", "then": "archive", "archive_to": "cold"},
            "archive": {"keep": "5 years"},
        },
        "stores": {
            "exports": {
                "kind": "files",
                "path": str(exports),
                "tables": {
                    "claims_*.csv": {
                        "subject_keys": keys,
                        "retention": "operational",
                        "date_column": "filed",
                    },
                    "letters_*.csv": {"subject_keys": keys, "retention": "operational"},
                },
            },
            "cold": {
                "kind": "files",
                "path": str(cold),
                "tables": {
                    "claims_*.csv": {
                        "subject_keys": keys,
                        "retention": "archive",
                        "date_column": "filed",
                    },
                    "letters_*.csv": {"subject_keys": keys},
                },
            },
        },
    }
    return spec, claims


def _files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_files_age_out_row_by_row_and_whole_into_the_archive(tmp_path: Path) -> None:
    """Claims older than 10 months (by their date) move to the cold folder, appended to
    what it held; rows past 5 years leave the cold folder; a letter file last written 2 years
    ago moves whole; every other record keeps its bytes; a blank date is kept."""
    spec, claims = _file_stores(tmp_path)
    data_map = DataMap.model_validate(spec)
    letters = (tmp_path / "exports" / "letters_old.csv").read_bytes()
    before = _files_of(tmp_path)
    journal = tmp_path / "journal"
    plan = apply_retention(data_map, as_of=AS_OF, dry_run=True, journal=journal)
    assert _files_of(tmp_path) == before  # a dry run changes nothing
    done = apply_retention(data_map, as_of=AS_OF, journal=journal)
    assert done.archived == plan.archived
    moved = {
        name: [r for r in rows if r[2] and r[2] < OPERATIONAL]
        for name, rows in claims.items()
        if name.startswith("claims")
    }
    assert done.archived == {
        "exports.claims_*.csv": sum(map(len, moved.values())),
        "exports.letters_*.csv": 1,
    }
    for (name, rows), ending in zip(list(claims.items())[:2], ("\r\n", "\n"), strict=True):
        stays = [r for r in rows if not r[2] or r[2] >= OPERATIONAL]
        assert (tmp_path / "exports" / name).read_bytes() == "".join(
            _record(r, ending) for r in [HEADER, *stays]
        ).encode()
    cold_2023 = [
        r for r in claims["cold:claims_2023.csv"] + moved["claims_2023.csv"] if r[2] >= ARCHIVE
    ]
    expected = _record(HEADER, "\r\n") + "".join(_record(r, "\r\n") for r in cold_2023)
    assert (tmp_path / "cold" / "claims_2023.csv").read_bytes() == expected.encode()
    cold_2024 = [r for r in moved["claims_2024.csv"] if r[2] >= ARCHIVE]
    expected = "".join(_record(r, "\n") for r in [HEADER, *cold_2024])
    assert (tmp_path / "cold" / "claims_2024.csv").read_bytes() == expected.encode()
    gone = [r for rows in moved.values() for r in rows if r[2] < ARCHIVE]
    assert done.deleted == {"cold.claims_*.csv": len(gone) + 1}  # with the earlier 2019 row
    assert not (tmp_path / "exports" / "letters_old.csv").exists()
    assert (tmp_path / "cold" / "letters_old.csv").read_bytes() == letters
    new = before["exports/letters_new.csv"]
    assert (tmp_path / "exports" / "letters_new.csv").read_bytes() == new
    archived = next(r for r in cold_2023 if r[0].startswith("3"))
    found = retrieve(data_map, {"national_id": archived[0]})  # the archive is still reached
    held = {s: {t: len(rows) for t, rows in tables.items()} for s, tables in found.stores.items()}
    assert held == {"exports": {}, "cold": {"claims_*.csv": 1}}
    assert not list(journal.glob("*.json"))
    settled = _files_of(tmp_path)
    again = apply_retention(data_map, as_of=AS_OF, journal=journal)
    assert (again.archived, again.deleted) == ({}, {})
    assert _files_of(tmp_path) == settled


def _end_state(folder: Path) -> tuple[dict[str, bytes], dict[str, list[Any]]]:
    files = {n: b for n, b in _files_of(folder).items() if n.startswith(("exports", "cold"))}
    tables = _snapshot(f"sqlite:///{folder / 'core.db'}")
    return files, {t: f.astype(str).to_numpy().tolist() for t, f in tables.items()}


def _mixed_stores(folder: Path) -> DataMap:
    """The file stores above and a database whose clients older than 3 years go."""
    spec, _ = _file_stores(folder)
    url = f"sqlite:///{folder / 'core.db'}"
    build_insurer(url, clients=30)
    core = insurer_map(url)["stores"]["core"]
    core["tables"]["clients"].update(retention="core", date_column="joined")
    spec["stores"]["core"] = core
    spec["subject_keys"].append("email")
    spec["retention"]["core"] = {"keep": "3 years"}
    return DataMap.model_validate(spec)


def test_a_retention_run_killed_at_every_step_finishes_as_if_never_killed(tmp_path: Path) -> None:
    """Every point a kill -9 can land (before each journal write, database commit, file
    written or removed), then the same command again: files byte for byte, tables row for row
    and the counts are those of a run never killed."""
    reference = _mixed_stores(tmp_path / "reference")
    outcome: list[Any] = []
    steps = steps_of(
        lambda: outcome.append(
            apply_retention(reference, as_of=AS_OF, journal=tmp_path / "reference" / "j")
        )
    )
    expected = _end_state(tmp_path / "reference")
    assert outcome[0].deleted["core.clients"] > 0
    assert steps > 10
    for point in range(1, steps + 1):
        folder = tmp_path / f"killed-{point}"
        data_map = _mixed_stores(folder)
        run = partial(apply_retention, data_map, as_of=AS_OF, journal=folder / "j")
        assert killed_at(run, point)
        started = (folder / "j" / "retention.json").exists()  # the first step writes it
        assert started == (point > 1)
        # the same command; a journal holds the run's date, so it may be left out then
        again = apply_retention(data_map, journal=folder / "j", as_of=None if started else AS_OF)
        assert again.resumed == started
        assert (again.archived, again.deleted, again.kept) == (
            outcome[0].archived,
            outcome[0].deleted,
            outcome[0].kept,
        ), point
        assert _end_state(folder) == expected, point
        assert not list((folder / "j").glob("*.json"))


def test_s3_objects_age_out_and_held_rows_keep_no_identifier(
    tmp_path: Path, s3_endpoint: str
) -> None:
    """Objects with no date column move whole to the archive bucket once last written more
    than 10 months before; dated rows in CSV and Parquet objects past a year are deleted, or,
    under a 7-year legal hold, kept with identifiers replaced (a second run leaves them)."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    for bucket in ("veil-lake", "veil-lake-archive"):
        s3.create_bucket(Bucket=bucket)
    scan = b"national_id,page\r\n40000001,1\r\n40000002,2\r\n"
    s3.put_object(Bucket="veil-lake", Key="scans/a.csv", Body=scan)
    today = pd.Timestamp.now().normalize()
    as_of = today + pd.DateOffset(months=11)

    def updated(age: pd.DateOffset) -> str:
        return str((as_of - age).date())

    young, held, old = (
        updated(pd.DateOffset(months=2)),
        updated(pd.DateOffset(years=3)),
        updated(pd.DateOffset(years=9)),
    )
    contacts = (
        "national_id,name,phone,updated\n"
        f"40000001,Amina Otieno,+254712000001,{young}\n"
        f"40000002,Brian Kamau,+254712000002,{held}\n"
        f"40000003,Chebet Rono,+254712000003,{old}\n"
    ).encode()
    s3.put_object(Bucket="veil-lake", Key="crm/contacts.csv", Body=contacts)
    history = pd.DataFrame(
        {
            "national_id": ["40000001", "40000002", "40000003"],
            "visits": [3, 5, 8],
            "updated": [young, held, old],
        }
    )
    buffer = io.BytesIO()
    history.to_parquet(buffer, index=False)
    s3.put_object(Bucket="veil-lake", Key="crm/history.parquet", Body=buffer.getvalue())
    keys = {"national_id": "national_id"}
    data_map = DataMap.model_validate(
        {
            "subject_keys": ["national_id"],
            "retention": {
                "scans": {"keep": "10 months", "then": "archive", "archive_to": "cold"},
                "crm": {"keep": "1 year", "hold": "7 years"},
            },
            "stores": {
                "lake": {
                    "kind": "s3",
                    "bucket": "veil-lake",
                    "endpoint_url": s3_endpoint,
                    "tables": {
                        "scans/": {"subject_keys": keys, "retention": "scans"},
                        "crm/": {
                            "subject_keys": keys,
                            "retention": "crm",
                            "date_column": "updated",
                        },
                    },
                },
                "cold": {
                    "kind": "s3",
                    "bucket": "veil-lake-archive",
                    "endpoint_url": s3_endpoint,
                    "tables": {"scans/": {"subject_keys": keys}},
                },
            },
        }
    )
    journal = tmp_path / "journal"
    early = apply_retention(
        data_map, as_of=today + pd.DateOffset(months=9), dry_run=True, journal=journal
    )
    assert "lake.scans/" not in early.archived  # written 9 months before: still young
    done = apply_retention(data_map, as_of=as_of, journal=journal)
    assert done.archived == {"lake.scans/": 2}
    assert done.deleted == {"lake.crm/": 2}  # the 9-year-old contact and history row
    assert done.kept == {"lake.crm/": 2}  # held, anonymized
    assert s3.get_object(Bucket="veil-lake-archive", Key="scans/a.csv")["Body"].read() == scan
    assert "Contents" not in s3.list_objects_v2(Bucket="veil-lake", Prefix="scans/")
    text = s3.get_object(Bucket="veil-lake", Key="crm/contacts.csv")["Body"].read()
    lines = text.decode().splitlines()
    assert lines[:2] == contacts.decode().splitlines()[:2]  # the young row, byte for byte
    assert len(lines) == 3
    kept = lines[2].split(",")
    assert all(v.startswith("erased-") for v in kept[:3])  # id, name and phone replaced
    assert kept[3] == held  # the date the hold counts from stays
    frame = pd.read_parquet(
        io.BytesIO(s3.get_object(Bucket="veil-lake", Key="crm/history.parquet")["Body"].read())
    )
    assert frame["visits"].tolist() == [3, 5]
    assert frame["national_id"].iloc[0] == "40000001"
    assert frame["national_id"].iloc[1].startswith("erased-")
    again = apply_retention(data_map, as_of=as_of, journal=journal)
    assert s3.get_object(Bucket="veil-lake", Key="crm/contacts.csv")["Body"].read() == text
    assert again.deleted == {}
