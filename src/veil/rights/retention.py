"""Retention: keep data no longer than its class allows (GDPR art. 5(1)(e), Kenya DPA s. 39).

A class ``{keep: 10 months, then: archive, archive_to: archive}`` moves a table's rows whose
``date_column`` is older than 10 months (and the rows linking to them) to the same table of
the archive store, then deletes them where they were; ``{keep: 5 years}`` deletes them. A
row under a legal hold (another class's ``hold``) is kept, identifiers replaced, as erasure
does. SQL tables only in this version; ``--dry-run`` counts and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import sqlalchemy as sa

from veil.exceptions import InputError
from veil.rights import _sql
from veil.rights._map import DataMap, Store
from veil.rights.erase import erase_sql, parse_age
from veil.rights.retrieve import retrieve_sql


@dataclass(frozen=True)
class RetentionResult:
    """What retention did (or would do), per ``store.table``."""

    as_of: str
    dry_run: bool
    deleted: dict[str, int] = field(default_factory=dict)
    archived: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)  # held: kept, identifiers replaced

    def to_dict(self) -> dict[str, Any]:
        """For ``--format json`` and the audit log."""
        return {"as_of": self.as_of, "dry_run": self.dry_run, "deleted": self.deleted,
                "archived": self.archived, "kept": self.kept}  # fmt: skip


def apply_retention(data_map: DataMap, *, as_of: pd.Timestamp | None = None,
                    dry_run: bool = False) -> RetentionResult:  # fmt: skip
    """Apply every class with a ``keep`` to the tables that name it."""
    now = as_of if as_of is not None else pd.Timestamp.now()
    deleted: dict[str, int] = {}
    archived: dict[str, int] = {}
    kept: dict[str, int] = {}
    for class_name, rule in data_map.retention.items():
        if rule.keep is None:
            continue
        cutoff = now - parse_age(rule.keep)
        for name, store in data_map.stores.items():
            tables = [t for t, s in store.tables.items() if s.retention == class_name]
            if not tables:
                continue
            if store.kind != "sql":
                raise InputError(f"store {name!r}: retention applies to SQL tables in this "
                                 "version; move the files by their dates yourself")  # fmt: skip
            for table in tables:
                if store.tables[table].date_column is None:
                    raise InputError(
                        f"store {name!r}, table {table!r}: retention class {class_name!r} "
                        "needs a date_column to count age from"
                    )
            found = retrieve_sql(name, store, seed=_aged(store, tables, cutoff))
            count = {f"{name}.{t}": len(rows) for t, rows in found.items() if rows}
            if dry_run:
                target = archived if rule.then == "archive" else deleted
                target.update(count)
                continue
            if rule.then == "archive":
                if rule.archive_to not in data_map.stores:
                    raise InputError(
                        f"retention class {class_name!r} archives to {rule.archive_to!r}, "
                        "which is not a store of the map"
                    )
                _archive(data_map.stores[rule.archive_to], rule.archive_to or "", found,
                         name, store)  # fmt: skip
                archived.update(count)
            gone, held = erase_sql(data_map, name, store, {}, now, "delete", found=found)
            if rule.then != "archive":
                deleted.update(gone)
            kept.update(held)
    return RetentionResult(str(now.date()), dry_run, deleted, archived, kept)


def _aged(store: Store, tables: list[str], cutoff: pd.Timestamp) -> Any:
    """The seed: rows of ``tables`` whose date is before ``cutoff``."""

    def seed(connection: sa.Connection, table_name: str, table: sa.Table) -> list[dict[str, Any]]:
        if table_name not in tables:
            return []
        column = table.c[str(store.tables[table_name].date_column)]
        query = sa.select(table).where(column < cutoff.to_pydatetime())
        return [dict(r._mapping) for r in connection.execute(query)]

    return seed


def _archive(archive: Store, name: str, found: dict[str, list[dict[str, Any]]],
             source_name: str, source: Store) -> None:  # fmt: skip
    """Copy the rows into the archive store's same tables, made if missing with the source
    tables' own definitions (types, keys, links); rows already there (a re-run after an
    interruption) are not copied twice."""
    if archive.kind != "sql" or archive.url is None or source.url is None:
        raise InputError(f"archive store {name!r} must be a SQL store in this version")
    engine = _sql.connect(source.url, store=source_name)
    try:
        definitions = _sql.reflect(engine, source.tables, store=source_name)
    finally:
        engine.dispose()
    target = sa.MetaData()
    for table in definitions.sorted_tables:
        table.to_metadata(target)
    engine = _sql.connect(archive.url, store=name)
    try:
        with engine.begin() as connection:
            target.create_all(connection, checkfirst=True)
            for table in target.sorted_tables:  # parents first, as the links need
                rows = found.get(table.name, [])
                if not rows:
                    continue
                identity = [c.name for c in table.primary_key.columns] or list(rows[0])
                there = {tuple(r) for r in connection.execute(
                    sa.select(*(table.c[c] for c in identity)))}  # fmt: skip
                fresh = [r for r in rows if tuple(r[c] for c in identity) not in there]
                if fresh:
                    connection.execute(table.insert(), fresh)
    finally:
        engine.dispose()
