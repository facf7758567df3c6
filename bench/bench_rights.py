"""Data-subject rights at scale: 10 linked tables, one row per customer in each (1M customers:
10M rows), on PostgreSQL (a server of the bench's own, psycopg 3) and on SQLite.

    make bench-rights        (or: python bench/bench_rights.py [--customers 1000000])

Prints, per database: retrieve one subject (median of 20; target <= 1 s), erase + verify one
subject (median of 10; target <= 2 s), both with the key closure on (the e-mail found in the
customer's row is followed too: every request makes at least two passes over the stores),
a batch erase of 10,000 subjects (subjects per second;
target >= 1,000/s), and the indexes veil needs (on every subject-key and link column; `veil
rights map --check` warns about a missing one). The peer figure is Fides' own users' report:
15 minutes per request at 900k recipients (Fides issue #1956); Fides needs PostgreSQL and
Redis deployed and is not run here.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import start_postgres  # noqa: E402

from veil.rights import DataMap, retrieve  # noqa: E402
from veil.rights.erase import erase, erase_many  # noqa: E402

CHILDREN = {  # table -> (parent, link column, payload column)
    "contacts": ("customers", "customer_id", "phone"),
    "addresses": ("customers", "customer_id", "county"),
    "consents": ("customers", "customer_id", "purpose"),
    "devices": ("customers", "customer_id", "device"),
    "notes": ("customers", "customer_id", "note"),
    "policies": ("customers", "customer_id", "tier"),
    "claims": ("policies", "policy_id", "amount"),
    "payments": ("claims", "claim_id", "paid"),
    "documents": ("claims", "claim_id", "kind"),
}


def schema() -> sa.MetaData:
    metadata = sa.MetaData()
    sa.Table(
        "customers",
        metadata,
        sa.Column("id", sa.BigInteger, primary_key=True),
        sa.Column("national_id", sa.String(12), unique=True),
        sa.Column("email", sa.String(60), index=True),
        sa.Column("name", sa.String(40)),
    )
    for table, (parent, link, payload) in CHILDREN.items():
        sa.Table(
            table,
            metadata,
            sa.Column("id", sa.BigInteger, primary_key=True),
            sa.Column(link, sa.ForeignKey(f"{parent}.id"), index=True),
            sa.Column(payload, sa.String(40)),
        )
    return metadata


def frames(customers: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    ids = np.arange(1, customers + 1)
    out = {
        "customers": pd.DataFrame(
            {
                "id": ids,
                "national_id": (20_000_000 + ids).astype(str),
                "email": [f"c{i}@example.co.ke" for i in ids],
                "name": [f"Customer {i}" for i in ids],
            }
        )
    }
    for table, (_parent, link, payload) in CHILDREN.items():
        out[table] = pd.DataFrame(
            {"id": ids, link: rng.permutation(ids), payload: rng.choice(["a", "b", "c"], customers)}
        )
    return out


def load(url: str, data: dict[str, pd.DataFrame]) -> None:
    engine = sa.create_engine(url)
    metadata = schema()
    metadata.create_all(engine)
    order = [
        "customers",
        "policies",
        "claims",
        *[t for t in CHILDREN if t not in ("policies", "claims")],
    ]
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        for table in order:
            frame = data[table]
            if url.startswith("postgresql"):
                buffer = io.StringIO()
                frame.to_csv(buffer, index=False, header=False)
                with cursor.copy(
                    f"COPY {table} ({', '.join(frame.columns)}) FROM STDIN "  # type: ignore[attr-defined]
                    "WITH (FORMAT csv)"
                ) as copy:
                    copy.write(buffer.getvalue())
            else:
                marks = ", ".join("?" * len(frame.columns))
                cursor.executemany(
                    f"INSERT INTO {table} VALUES ({marks})",
                    frame.itertuples(index=False, name=None),
                )
        raw.commit()
        if url.startswith("postgresql"):
            cursor.execute("ANALYZE")
            raw.commit()
    finally:
        raw.close()
        engine.dispose()


def data_map(url: str) -> DataMap:
    tables: dict[str, Any] = {
        "customers": {"subject_keys": {"national_id": "national_id", "email": "email"}}
    }
    for table, (parent, link, _payload) in CHILDREN.items():
        tables[table] = {"links": {link: f"{parent}.id"}}
    return DataMap.model_validate(
        {
            "subject_keys": ["national_id", "email"],
            "stores": {"db": {"kind": "sql", "url": url, "tables": tables}},
        }
    )


def measure(label: str, url: str, customers: int, batch: int) -> None:
    rng = np.random.default_rng(1)
    mapped = data_map(url)
    picks = rng.choice(np.arange(1, customers + 1), 20 + 10 + batch, replace=False)
    ids = [str(20_000_000 + int(i)) for i in picks]
    times = []
    for national_id in ids[:20]:
        start = time.perf_counter()
        found = retrieve(mapped, {"national_id": national_id})
        times.append(time.perf_counter() - start)
        assert found.total >= 1
    retrieve_median = statistics.median(times)
    times = []
    with tempfile.TemporaryDirectory() as journal:
        for national_id in ids[20:30]:
            start = time.perf_counter()
            result = erase(
                mapped, {"national_id": national_id}, subject_id=national_id, journal=Path(journal)
            )
            times.append(time.perf_counter() - start)
            assert result.verified
        start = time.perf_counter()
        bulk = erase_many(
            mapped, "national_id", ids[30:], subject_id="batch", journal=Path(journal)
        )
        seconds = time.perf_counter() - start
        assert bulk.verified
    print(
        f"  {label:<11} retrieve one subject {retrieve_median * 1000:7.0f} ms (target <= 1 s)"
        f"   erase + verify one {statistics.median(times) * 1000:7.0f} ms (target <= 2 s)"
        f"   batch of {batch:,}: {batch / seconds:,.0f} subjects/s in {seconds:.1f} s "
        f"(target >= 1,000/s; {sum(bulk.removed.values()):,} rows)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--customers", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    data = frames(args.customers)
    rows = sum(len(f) for f in data.values())
    print(
        f"{args.customers:,} customers, 10 linked tables, {rows:,} rows; indexes: primary keys, "
        "national_id (unique), email, and every link column"
    )
    with tempfile.TemporaryDirectory() as folder:
        sqlite = f"sqlite:///{Path(folder) / 'bench.db'}"
        start = time.perf_counter()
        load(sqlite, data)
        print(f"  (SQLite loaded in {time.perf_counter() - start:.0f} s)")
        measure("SQLite", sqlite, args.customers, args.batch)
    with start_postgres() as url:
        url = url.replace("+pg8000", "+psycopg")
        start = time.perf_counter()
        load(url, data)
        print(f"  (PostgreSQL loaded in {time.perf_counter() - start:.0f} s)")
        measure("PostgreSQL", url, args.customers, args.batch)
    print("  Fides (its users' report, issue #1956): 15 minutes per request at 900k recipients")


if __name__ == "__main__":
    main()
