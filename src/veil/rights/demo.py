"""``veil rights demo``: a small insurer (clients, policies, claims, payments, contacts) in
SQLite, built from the bundled sample, and one person's rights exercised end to end:
retrieve, erase, retrieve again (nothing), verify the audit log."""

from __future__ import annotations

import copy
import csv
import io
from collections.abc import Callable
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
import yaml

from veil.data import SAMPLE
from veil.rights._audit import anchors_for, open_log, subject_hash
from veil.rights._map import load_map
from veil.rights.erase import erase
from veil.rights.retrieve import retrieve


def build_database(path: Path, *, seed: int = 0) -> dict[str, list[Any]]:
    """The insurer's tables from the bundled sample; returns the clients' columns."""
    tables = _insurer_tables(seed)
    engine = sa.create_engine(f"sqlite:///{path}")
    metadata = sa.MetaData()
    sa.Table(
        "clients",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("national_id", sa.String(12), index=True),
        sa.Column("kra_pin", sa.String(11), index=True),
        sa.Column("county", sa.String(40)),
        sa.Column("gender", sa.String(10)),
        sa.Column("joined", sa.Date),
    )
    for name, (column, parent) in _LINKS.items():
        columns: list[sa.Column[Any]] = [
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column(column, sa.ForeignKey(f"{parent}.id"), index=True),
        ]
        columns += [sa.Column(c, sa.Text()) for c in tables[name] if c not in ("id", column)]
        sa.Table(name, metadata, *columns)
    metadata.create_all(engine)
    with engine.begin() as connection:
        for name, table in tables.items():
            records = [
                dict(zip(table, row, strict=True)) for row in zip(*table.values(), strict=True)
            ]
            connection.execute(metadata.tables[name].insert(), records)
    engine.dispose()
    return tables["clients"]


#: Each linked table: the column that links it, and the table it links to.
_LINKS = {
    "policies": ("client_id", "clients"),
    "claims": ("policy_id", "policies"),
    "payments": ("claim_id", "claims"),
    "contacts": ("client_id", "clients"),
}


def _bundled_rows() -> list[dict[str, str]]:
    """The bundled sample's rows as text (read without pandas: the demo's start-up)."""
    text = (resources.files("veil.data") / SAMPLE).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _insurer_tables(seed: int) -> dict[str, dict[str, list[Any]]]:
    """Clients, policies, claims, payments and contacts made from the bundled sample, in the
    order they are written: each a table's columns."""
    rng = np.random.default_rng(seed)
    sample = _bundled_rows()
    n = len(sample)
    ids = list(range(1, n + 1))
    clients = {
        "id": ids,
        "national_id": [row["ID_number"] for row in sample],
        "kra_pin": [row["Tax_id"] for row in sample],
        "county": [row["County"] for row in sample],
        "gender": [row["Gender"] for row in sample],
        "joined": [date.fromisoformat(row["Date_of_entry"][:10]) for row in sample],
    }
    policies = {
        "id": ids,
        "client_id": ids,
        "tier": [row["Tier"] for row in sample],
        "policy_limit": [row["Policy_limit"] for row in sample],
    }
    claim_policy = rng.integers(1, n + 1, 2 * n).tolist()
    claims = {
        "id": list(range(1, 2 * n + 1)),
        "policy_id": claim_policy,
        "illness": [sample[p - 1]["Illness_category"] for p in claim_policy],
    }
    payments = {
        "id": list(range(1, 2 * n + 1)),
        "claim_id": list(range(1, 2 * n + 1)),
        "amount": rng.integers(500, 90_000, 2 * n).tolist(),
    }
    phones = [f"+2547{int(x):08d}" for x in rng.integers(0, 10**8, n)]
    contacts = {"id": ids, "client_id": ids, "phone": phones}
    return {
        "clients": clients,
        "policies": policies,
        "claims": claims,
        "payments": payments,
        "contacts": contacts,
    }


MAP: dict[str, Any] = {
    "subject_keys": ["national_id", "kra_pin"],
    "stores": {
        "insurer": {
            "kind": "sql",
            "url": "",
            "tables": {
                "clients": {"subject_keys": {"national_id": "national_id", "kra_pin": "kra_pin"}},
                "policies": {"links": {"client_id": "clients.id"}},
                "claims": {"links": {"policy_id": "policies.id"}},
                "payments": {"links": {"claim_id": "claims.id"}},
                "contacts": {"links": {"client_id": "clients.id"}},
            },
        }
    },
}


def run_demo(folder: Path, key: bytes, say: Callable[[str], None] = print) -> bool:
    """Build the insurer in ``folder`` and exercise one client's rights; True when the
    erasure was verified and the audit log is intact."""
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "insurer.db"
    database.unlink(missing_ok=True)
    clients = build_database(database)
    spec = copy.deepcopy(MAP)
    spec["stores"]["insurer"]["url"] = f"sqlite:///{database}"
    map_path = folder / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    data_map = load_map(map_path)
    who = {"national_id": clients["national_id"][0]}
    hashed = subject_hash(key, who)
    path = data_map.audit_path(map_path)
    log = open_log(path, key, anchors=anchors_for(data_map, map_path, path))
    say(
        f"data map: {map_path} ({len(clients['id']):,} clients and their policies, claims, "
        "payments, contacts)"
    )
    found = retrieve(data_map, who)
    log.append("retrieve", subject=hashed, stores=list(found.stores), counts=found.counts)
    say(
        f"1. retrieve national_id=…: {found.total} rows "
        f"({', '.join(f'{t} {n}' for t, n in found.counts.items())})"
    )
    result = erase(data_map, who, subject_id=hashed, journal=folder / "insurer.journal")
    log.append(
        "erase",
        subject=hashed,
        stores=list(data_map.stores),
        counts=result.removed,
        detail={"verified": result.verified},
    )
    say(f"2. erase: removed {sum(result.removed.values())} rows in one transaction, children first")
    again = retrieve(data_map, who)
    log.append("retrieve", subject=hashed, stores=list(again.stores), counts=again.counts)
    say(f"3. retrieve again: {again.total} rows")
    entries = log.verify()
    say(
        f"4. audit log {log.path.name}: {entries} entries, hash chain intact; the person "
        "appears only as a keyed hash"
    )
    return result.verified and again.total == 0
