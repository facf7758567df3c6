"""Right of access and portability: everything about one person, in every store of the map,
found from their identity and followed along links breadth-first (a client's policies, a
policy's claims, a claim's payments), as data a program reads and a person can check."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from veil.exceptions import InputError
from veil.rights import _sql
from veil.rights._files import retrieve_store
from veil.rights._map import DataMap, Store, children_first


@dataclass(frozen=True)
class Retrieval:
    """What the map's stores hold about one subject."""

    subject: dict[str, str]
    stores: dict[str, dict[str, list[dict[str, Any]]]]
    retention: dict[str, str | None] = field(default_factory=dict)  # "store.table" -> class

    @property
    def counts(self) -> dict[str, int]:
        """Rows per table (``store.table`` when two stores share a table name)."""
        names = [t for tables in self.stores.values() for t in tables]
        return {(t if names.count(t) == 1 else f"{s}.{t}"): len(rows)
                for s, tables in self.stores.items() for t, rows in tables.items()}  # fmt: skip

    @property
    def total(self) -> int:
        """Rows found in all."""
        return sum(self.counts.values())

    def _repr_html_(self) -> str:
        return summary_html(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"subject", "stores": {STORE: {TABLE: [rows]}}, "counts": {TABLE: n}}``."""
        return {
            "subject": self.subject,
            "stores": {s: {t: [{k: _sql.jsonable(v) for k, v in r.items()} for r in rows]
                           for t, rows in tables.items()} for s, tables in self.stores.items()},
            "counts": self.counts,
        }  # fmt: skip


def summary_html(found: Retrieval) -> str:
    """A page a person can read: what is held about them, where, under which retention class,
    then every row (values escaped)."""
    from veil._html import card

    overview = [
        (store, table, str(len(rows)), found.retention.get(f"{store}.{table}") or "-")
        for store, tables in found.stores.items()
        for table, rows in tables.items()
    ]
    parts = [card("What is held about you", headers=("store", "table", "rows", "retention class"),
                  rows=overview or [("-", "-", "0", "-")],
                  lines=[f"{found.total} rows in {len(found.stores)} stores"])]  # fmt: skip
    for store, tables in found.stores.items():
        for table, rows in tables.items():
            columns = list(rows[0]) if rows else []
            cells = [[str(_sql.jsonable(r.get(c, ""))) for c in columns] for r in rows[:500]]
            more = [f"... and {len(rows) - 500} more rows in the JSON"] if len(rows) > 500 else []
            parts.append(card(f"{store}: {table}", headers=columns, rows=cells, lines=more))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Your data</title></head>"
            f"<body>{''.join(parts)}</body></html>")  # fmt: skip


def write_export(found: Retrieval, path: str | Path) -> None:
    """The export: ``.json`` (the whole retrieval), or ``.zip`` (a JSON file per store and a
    readable ``summary.html``), written through a temporary file and a rename."""
    import zipfile

    from veil.io import atomic_path

    target = Path(path)
    data = found.to_dict()
    with atomic_path(target, force=False) as temporary:
        if target.suffix.lower() == ".zip":
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
                for store, tables in data["stores"].items():
                    body = {"subject": data["subject"], "store": store, "tables": tables}
                    archive.writestr(f"{store}.json", json.dumps(body, indent=1,
                                                                 ensure_ascii=False))  # fmt: skip
                archive.writestr("summary.html", summary_html(found))
        else:
            Path(temporary).write_text(json.dumps(data, indent=2, ensure_ascii=False),
                                       encoding="utf-8")  # fmt: skip


def parse_subject(text: str, data_map: DataMap) -> dict[str, str]:
    """``KEY=VALUE`` with a key the map knows."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise InputError(f"--subject must read KEY=VALUE (such as national_id=12345678), got "
                         f"{text!r}")  # fmt: skip
    if key not in data_map.subject_keys:
        raise InputError(f"subject key {key!r} is not in the map; known keys: "
                         f"{', '.join(data_map.subject_keys)}")  # fmt: skip
    return {key: value}


def retrieve(data_map: DataMap, subject: dict[str, str]) -> Retrieval:
    """Every row about ``subject`` in every store."""
    stores: dict[str, dict[str, list[dict[str, Any]]]] = {}
    retention: dict[str, str | None] = {}
    for name, store in data_map.stores.items():
        stores[name] = retrieve_one(name, store, subject)
        retention.update({f"{name}.{t}": store.tables[t].retention for t in stores[name]})
    return Retrieval(subject, stores, retention)


def retrieve_one(name: str, store: Store, subject: dict[str, str]
                 ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """The rows about ``subject`` in one store (tables with none left out)."""
    if store.kind == "sql":
        found = retrieve_sql(name, store, subject)
    else:
        found = retrieve_store(name, store, subject)
    return {t: rows for t, rows in found.items() if rows}


Seed = Callable[[sa.Connection, str, sa.Table], list[dict[str, Any]]]


def retrieve_sql(name: str, store: Store, subject: dict[str, str] | None = None, *,
                 seed: Seed | None = None) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """One SQL store: the rows the subject's keys find (or ``seed`` gives: retention's aged
    rows), then the rows linking to them, parents before children (one pass: the links form
    no cycle)."""
    assert store.url is not None
    subject = subject or {}
    engine = _sql.connect(store.url, store=name)
    try:
        metadata = _sql.reflect(engine, store.tables, store=name)
        found: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in store.tables}
        with engine.connect() as connection:
            for table_name in reversed(children_first(store)):
                table = metadata.tables[table_name]
                spec = store.tables[table_name]
                where = f"store {name!r}, table {table_name!r}"
                for row in seed(connection, table_name, table) if seed else []:
                    found[table_name][_sql.row_key(table, row)] = row
                for key, column in spec.subject_keys.items():
                    if key in subject:
                        _column(table, column, where)
                        for row in _sql.fetch(connection, table, column, [subject[key]],
                                              where=where):  # fmt: skip
                            found[table_name][_sql.row_key(table, row)] = row
                for column, target in spec.links.items():
                    parent, parent_column = target.split(".")
                    _column(table, column, where)
                    values = {r[parent_column] for r in found[parent].values()}
                    if values:
                        for row in _sql.fetch(connection, table, column, values, where=where):
                            found[table_name][_sql.row_key(table, row)] = row
        return {t: list(rows.values()) for t, rows in found.items()}
    finally:
        engine.dispose()


def _column(table: Any, column: str, where: str) -> None:
    if column not in table.c:
        raise InputError(f"{where} has no column {column!r}: fix the map")
