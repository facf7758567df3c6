"""Properties: for random linked tables, erasing a subject removes exactly the rows that belong
to them (found by an oracle written here, over the generated data, sharing no code with
veil's walk) and leaves every other row as it was; and a kill -9 at a random point of an
erasure, then the same request again, ends where an uninterrupted erasure ends."""

from __future__ import annotations

import csv
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rights.faults import killed_at, steps_of
from veil.rights import DataMap
from veil.rights.erase import erase


@st.composite
def linked_tables(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(2, 5))
    tables: dict[str, dict[str, Any]] = {}
    for i in range(count):
        name = f"t{i}"
        parent = None if i == 0 else draw(st.sampled_from([None, *[f"t{j}" for j in range(i)]]))
        keyed = parent is None or draw(st.booleans())  # the subject key held directly too?
        rows = draw(st.integers(0, 12))
        parent_rows = len(tables[parent]["rows"]) if parent else 0
        made = []
        for r in range(rows):
            row: dict[str, Any] = {"id": r + 1}
            if keyed:
                row["sid"] = draw(st.sampled_from(["A", "B", "C", None]))
            if parent:
                row["parent_id"] = draw(st.integers(1, parent_rows)) if parent_rows else None
            made.append(row)
        tables[name] = {"parent": parent, "keyed": keyed, "rows": made}
    return {"tables": tables, "subject": draw(st.sampled_from(["A", "B", "C"]))}


def _belongs(data: dict[str, Any]) -> dict[str, set[int]]:
    """The oracle: rows holding the subject's key, and rows pointing at such rows, closed."""
    out: dict[str, set[int]] = {}
    for name, table in data["tables"].items():  # parents come before children
        own = {r["id"] for r in table["rows"] if table["keyed"] and r["sid"] == data["subject"]}
        parent = table["parent"]
        linked = {r["id"] for r in table["rows"] if parent and r["parent_id"] in out[parent]}
        out[name] = own | linked
    return out


def _build(folder: Path, data: dict[str, Any]) -> tuple[DataMap, sa.MetaData]:
    """The drawn tables in a SQLite database under ``folder``, and the drawn CSV files
    beside it, with their map."""
    folder.mkdir(parents=True)
    url = f"sqlite:///{folder / 'db.sqlite'}"
    metadata = sa.MetaData()
    spec: dict[str, Any] = {}
    for name, table in data["tables"].items():
        columns = [sa.Column("id", sa.Integer, primary_key=True)]
        if table["keyed"]:
            columns.append(sa.Column("sid", sa.String(4)))
        if table["parent"]:
            columns.append(sa.Column("parent_id", sa.ForeignKey(f"{table['parent']}.id")))
        sa.Table(name, metadata, *columns)
        spec[name] = {
            "subject_keys": {"sid": "sid"} if table["keyed"] else {},
            "links": {"parent_id": f"{table['parent']}.id"} if table["parent"] else {},
        }
        if table.get("held"):
            spec[name]["retention"] = "record"
    engine = sa.create_engine(url)
    metadata.create_all(engine)
    with engine.begin() as connection:
        for name, table in data["tables"].items():
            if table["rows"]:
                connection.execute(metadata.tables[name].insert(), table["rows"])
    engine.dispose()
    stores: dict[str, Any] = {"db": {"kind": "sql", "url": url, "tables": spec}}
    files = data.get("files", [])
    if files:
        (folder / "files").mkdir()
        for i, rows in enumerate(files):
            with (folder / "files" / f"f{i}.csv").open("w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["sid", "note"])
                writer.writerows(rows)
        stores["files"] = {
            "kind": "files",
            "path": str(folder / "files"),
            "tables": {
                "f*.csv": {
                    "subject_keys": {"sid": "sid"},
                    **({"retention": "record"} if data.get("files_held") else {}),
                }
            },
        }
    data_map = DataMap.model_validate(
        {"subject_keys": ["sid"], "stores": stores, "retention": {"record": {"hold": "7 years"}}}
    )
    return data_map, metadata


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=linked_tables())
def test_erase_removes_exactly_the_subjects_rows_and_nothing_else(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data_map, metadata = _build(Path(folder) / "store", data)
        result = erase(
            data_map, {"sid": data["subject"]}, subject_id="p", journal=Path(folder) / "journal"
        )
        assert result.verified
        doomed = _belongs(data)
        engine = sa.create_engine(f"sqlite:///{Path(folder) / 'store' / 'db.sqlite'}")
        with engine.connect() as connection:
            for name, table in data["tables"].items():
                left = [
                    dict(r._mapping)
                    for r in connection.execute(sa.select(metadata.tables[name]).order_by("id"))
                ]
                expected = [r for r in table["rows"] if r["id"] not in doomed[name]]
                assert left == expected, name
        engine.dispose()


_NOTES = st.sampled_from(["plain", "a, comma", 'a "quote"', "two\nlines", ""])


@st.composite
def stores(draw: st.DrawFn) -> dict[str, Any]:
    """Linked tables, some under a legal hold, and CSV files (quoted, multi-line fields)."""
    data = draw(linked_tables())
    for table in data["tables"].values():
        table["held"] = draw(st.booleans()) and draw(st.booleans())
    data["files"] = draw(
        st.lists(
            st.lists(st.tuples(st.sampled_from(["A", "B", "C"]), _NOTES), max_size=6), max_size=4
        )
    )
    data["files_held"] = draw(st.booleans())
    return data


def _end_state(folder: Path, metadata: sa.MetaData) -> dict[str, Any]:
    """Every table's rows and every file's bytes, random tokens read as one mark (a held row's
    tokens are drawn afresh by each run)."""
    engine = sa.create_engine(f"sqlite:///{folder / 'db.sqlite'}")
    with engine.connect() as connection:
        state: dict[str, Any] = {
            name: [tuple(r) for r in connection.execute(sa.select(table).order_by("id"))]
            for name, table in metadata.tables.items()
        }
    engine.dispose()
    for path in sorted((folder / "files").glob("*")) if (folder / "files").is_dir() else []:
        state[path.name] = path.read_bytes()
    return json.loads(_TOKEN.sub("erased-*", json.dumps(state, default=lambda b: b.decode())))


_TOKEN = re.compile(r"erased-[0-9a-f]{16}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=stores(), choice=st.data())
def test_a_kill_at_any_point_then_a_rerun_ends_as_an_uninterrupted_erasure(
    data: dict[str, Any], choice: st.DataObject
) -> None:
    """kill -9 (SIGKILL, in a forked process) just before a drawn durable step of the erasure;
    the same request run again gives the end state of an erasure never interrupted, the same
    counts, and no journal left."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        subject = {"sid": data["subject"]}
        reference, metadata = _build(base / "reference", data)
        trial, _ = _build(base / "trial", data)
        expected: list[Any] = []

        def uninterrupted() -> None:
            expected.append(
                erase(reference, subject, subject_id="p", journal=base / "reference" / "journal")
            )

        steps = steps_of(uninterrupted)
        point = choice.draw(st.integers(1, steps), label="killed before step")
        assert killed_at(
            lambda: erase(trial, subject, subject_id="p", journal=base / "trial" / "journal"), point
        )
        again = erase(trial, subject, subject_id="p", journal=base / "trial" / "journal")
        assert again.verified
        assert _end_state(base / "trial", metadata) == _end_state(base / "reference", metadata)
        assert (again.removed, again.anonymized) == (expected[0].removed, expected[0].anonymized)
        assert not list((base / "trial" / "journal").glob("*.json"))
