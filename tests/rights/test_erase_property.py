"""Property: for random linked tables, erasing a subject removes exactly the rows that belong
to them (found by an oracle written here, over the generated data, sharing no code with
veil's walk) and leaves every other row as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
        linked = {r["id"] for r in table["rows"]
                  if parent and r["parent_id"] in out[parent]}  # fmt: skip
        out[name] = own | linked
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=linked_tables())
def test_erase_removes_exactly_the_subjects_rows_and_nothing_else(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'db.sqlite'}"
        metadata = sa.MetaData()
        spec: dict[str, Any] = {}
        for name, table in data["tables"].items():
            columns = [sa.Column("id", sa.Integer, primary_key=True)]
            if table["keyed"]:
                columns.append(sa.Column("sid", sa.String(4)))
            if table["parent"]:
                columns.append(sa.Column("parent_id", sa.ForeignKey(f"{table['parent']}.id")))
            sa.Table(name, metadata, *columns)
            spec[name] = {"subject_keys": {"sid": "sid"} if table["keyed"] else {},
                          "links": {"parent_id": f"{table['parent']}.id"} if table["parent"]
                          else {}}  # fmt: skip
        engine = sa.create_engine(url)
        metadata.create_all(engine)
        with engine.begin() as connection:
            for name, table in data["tables"].items():
                if table["rows"]:
                    connection.execute(metadata.tables[name].insert(), table["rows"])
        data_map = DataMap.model_validate({"subject_keys": ["sid"], "stores": {"db": {
            "kind": "sql", "url": url, "tables": spec}}})  # fmt: skip
        result = erase(data_map, {"sid": data["subject"]}, subject_id="p",
                       journal=Path(folder) / "journal")  # fmt: skip
        assert result.verified
        doomed = _belongs(data)
        with engine.connect() as connection:
            for name, table in data["tables"].items():
                left = [dict(r._mapping) for r in connection.execute(
                    sa.select(metadata.tables[name]).order_by("id"))]  # fmt: skip
                expected = [r for r in table["rows"] if r["id"] not in doomed[name]]
                assert left == expected, name
        engine.dispose()
