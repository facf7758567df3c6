"""An insurer's stores for the rights tests: a linked database (clients, policies, claims,
payments, contacts) on SQLite and on the tests' real PostgreSQL server, a folder of CSV
exports, and S3 objects in moto's server on 127.0.0.1 (talked to with boto3 as to S3)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa


def build_insurer(url: str, *, clients: int = 200, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Create and fill the five linked tables at ``url``; return what was written."""
    rng = np.random.default_rng(seed)
    metadata = sa.MetaData()
    sa.Table(
        "clients",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("national_id", sa.String(12), index=True, unique=True),
        sa.Column("email", sa.String(80), index=True),
        sa.Column("name", sa.String(80)),
        sa.Column("joined", sa.Date),
    )
    sa.Table(
        "policies",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("client_id", sa.ForeignKey("clients.id"), index=True),
        sa.Column("tier", sa.String(10)),
    )
    sa.Table(
        "claims",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("policy_id", sa.ForeignKey("policies.id"), index=True),
        sa.Column("amount", sa.Numeric(12, 2)),
        sa.Column("diagnosis", sa.String(40)),
    )
    sa.Table(
        "payments",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("claim_id", sa.ForeignKey("claims.id"), index=True),
        sa.Column("paid", sa.Numeric(12, 2)),
    )
    sa.Table(
        "contacts",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("client_id", sa.ForeignKey("clients.id"), index=True),
        sa.Column("phone", sa.String(20)),
    )
    n = clients
    tables = {
        "clients": pd.DataFrame(
            {
                "id": np.arange(1, n + 1),
                "national_id": [f"{20000000 + i}" for i in range(n)],
                "email": [f"client{i}@example.co.ke" for i in range(n)],
                "name": [f"Client {i}" for i in range(n)],
                "joined": pd.to_datetime("2020-01-01")
                + pd.to_timedelta(rng.integers(0, 1500, n), "D"),
            }
        ),
    }
    owners = rng.integers(1, n + 1, 2 * n)
    tables["policies"] = pd.DataFrame(
        {
            "id": np.arange(1, 2 * n + 1),
            "client_id": owners,
            "tier": rng.choice(["Gold", "Silver"], 2 * n),
        }
    )
    policy = rng.integers(1, 2 * n + 1, 3 * n)
    tables["claims"] = pd.DataFrame(
        {
            "id": np.arange(1, 3 * n + 1),
            "policy_id": policy,
            "amount": rng.integers(1_000, 90_000, 3 * n),
            "diagnosis": rng.choice(["Malaria", "Asthma", "Fracture"], 3 * n),
        }
    )
    tables["payments"] = pd.DataFrame(
        {
            "id": np.arange(1, 4 * n + 1),
            "claim_id": rng.integers(1, 3 * n + 1, 4 * n),
            "paid": rng.integers(100, 9_000, 4 * n),
        }
    )
    tables["contacts"] = pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "client_id": rng.integers(1, n + 1, n),
            "phone": [f"+2547{i:08d}" for i in range(n)],
        }
    )
    engine = sa.create_engine(url)
    try:
        metadata.drop_all(engine)
        metadata.create_all(engine)
        with engine.begin() as connection:
            for name in ("clients", "policies", "claims", "payments", "contacts"):
                records = tables[name].to_dict("records")
                if name == "clients":
                    for r in records:
                        r["joined"] = r["joined"].date()
                connection.execute(metadata.tables[name].insert(), records)
    finally:
        engine.dispose()
    return tables


def insurer_map(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "subject_keys": ["national_id", "email"],
        "stores": {
            "core": {
                "kind": "sql",
                "url": url,
                "tables": {
                    "clients": {"subject_keys": {"national_id": "national_id", "email": "email"}},
                    "policies": {"links": {"client_id": "clients.id"}},
                    "claims": {"links": {"policy_id": "policies.id"}},
                    "payments": {"links": {"claim_id": "claims.id"}},
                    "contacts": {"links": {"client_id": "clients.id"}},
                },
            }
        },
        **extra,
    }


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a free local port, for boto3 exactly as for S3."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail("moto's S3 server did not start: `make test` installs moto[server]")
        time.sleep(0.2)
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        os.environ.setdefault(name, value)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> bytes:
    value = "a3f9c2d18e7b4a6f9c0d1e2f3a4b5c6d"
    monkeypatch.setenv("VEIL_KEY", value)
    return value.encode()


def write_exports(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    clients = tables["clients"]
    half = len(clients) // 2
    for i, part in enumerate((clients.iloc[:half], clients.iloc[half:])):
        part[["national_id", "email", "name"]].rename(columns={"national_id": "NationalID"}).to_csv(
            folder / f"export_{i}.csv", index=False
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'insurer.db'}"
    else:
        # a database of its own on the tests' server (other tests own theirs), reached
        # through psycopg 3 as veil's rights extra does
        server = request.getfixturevalue("postgres_url").replace("+pg8000", "+psycopg")
        url = fresh_database(server)
    build_insurer(url, clients=120)
    return url


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server at ``server_url``; its URL."""
    import uuid

    name = f"rights_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return sa.engine.make_url(server_url).set(database=name).render_as_string(hide_password=False)
