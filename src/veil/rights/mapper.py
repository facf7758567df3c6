"""A first data map from the databases themselves, and a check of a map against the live
stores.

``build_map``: tables and single-column foreign keys by SQLAlchemy reflection become the map's
tables and links; the columns veil's own scan reads as direct identifiers (national IDs, KRA
PINs, e-mails, phones, cards...) in a sample of each table become subject keys, named after
what they hold. The user edits the result; nothing is guessed silently: every table is listed,
those the map cannot reach are named by the check.

``check_map``: every table, column, link target and file pattern exists; every table is
reachable from a subject key; every subject-key and link column has an index (without one,
retrieve and erase read the whole table for each person).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import sqlalchemy as sa

from veil.exceptions import ParameterError
from veil.rights import _sql
from veil.rights._map import DataMap, Store, TableMap
from veil.rights.stores import kind_of

#: what a subject key is called in the map, by the scan's entity
KEY_NAMES = {
    "KE_NATIONAL_ID": "national_id",
    "KE_KRA_PIN": "kra_pin",
    "EMAIL": "email",
    "PHONE_NUMBER": "phone",
    "KE_PHONE": "phone",
    "CREDIT_CARD": "card",
    "IBAN": "iban",
    "US_SSN": "ssn",
    "PASSPORT": "passport",
}
SAMPLE = 1_000


def build_map(
    urls: list[str], *, scan: bool = True, progress: Callable[[str], None] = lambda _: None
) -> DataMap:
    """A map of the databases at ``urls``."""
    stores: dict[str, Store] = {}
    keys: set[str] = set()
    for index, url in enumerate(urls, 1):
        name = sa.engine.make_url(url).database or f"db{index}"
        name = name.rsplit("/", 1)[-1].split(".")[0] or f"db{index}"
        engine = _sql.connect(url, store=name)
        try:
            metadata = _sql.reflect(engine)
            tables: dict[str, TableMap] = {}
            with engine.connect() as connection:
                for table in metadata.sorted_tables:
                    if table.name == "veil_audit_anchor":  # veil's own (the log's anchor)
                        continue
                    progress(f"mapping {name}.{table.name}")
                    links = {}
                    for fk in table.foreign_keys:
                        if len(fk.constraint.columns) == 1:  # type: ignore[union-attr]
                            links[fk.parent.name] = f"{fk.column.table.name}.{fk.column.name}"
                    found = _subject_keys(connection, table) if scan else {}
                    keys.update(found)
                    tables[table.name] = TableMap(subject_keys=found, links=links)
            stores[name] = Store(kind="sql", url=url, tables=tables)
        finally:
            engine.dispose()
    return DataMap(subject_keys=sorted(keys) or ["customer_id"], stores=stores)


def _subject_keys(connection: sa.Connection, table: sa.Table) -> dict[str, str]:
    from veil.scan import scan
    from veil.schema import ColumnRole

    rows = [dict(r._mapping) for r in connection.execute(sa.select(table).limit(SAMPLE))]
    if not rows:
        return {}
    out: dict[str, str] = {}
    for found in scan(pd.DataFrame(rows)).columns:
        # only key-shaped values: a name or a free-text note is not looked a person up by
        if (
            found.role is ColumnRole.IDENTIFIER
            and found.entity in KEY_NAMES
            and not found.free_text
        ):
            out.setdefault(KEY_NAMES[found.entity], found.name)
    primary = [c.name for c in table.primary_key.columns]
    if out and len(primary) == 1 and not table.foreign_keys:
        # the table people are kept in: its own key is how other systems know them
        out.setdefault(f"{table.name}_{primary[0]}", primary[0])
    return out


def check_map(data_map: DataMap) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of the map against the live stores."""
    errors: list[str] = []
    warnings: list[str] = []
    for name, store in data_map.stores.items():
        reachable = _reachable(store)
        for table in store.tables:
            if table not in reachable:
                warnings.append(
                    f"{name}.{table}: no subject key and no link to one: retrieve and erase "
                    "never reach it (map its key, or leave it out)"
                )
        try:
            kind_of(store).check(name, store, errors, warnings)
        except Exception as err:  # a store that is down is one error line, not a traceback
            errors.append(f"{name}: {err}")
    return errors, warnings


def _reachable(store: Store) -> set[str]:
    out = {t for t, spec in store.tables.items() if spec.subject_keys}
    changed = True
    while changed:
        changed = False
        for table, spec in store.tables.items():
            if table not in out and any(v.split(".")[0] in out for v in spec.links.values()):
                out.add(table)
                changed = True
    return out


def _indexed(inspector: Any, table: str) -> set[str]:
    """Columns that lead an index, a unique constraint or the primary key."""
    out = set((inspector.get_pk_constraint(table) or {}).get("constrained_columns", [])[:1])
    for index in inspector.get_indexes(table):
        out.update(index["column_names"][:1])
    for unique in inspector.get_unique_constraints(table):
        out.update(unique["column_names"][:1])
    return {c for c in out if c}


def _check_sql(name: str, store: Store, errors: list[str], warnings: list[str]) -> None:
    assert store.url is not None
    engine = _sql.connect(store.url, store=name)
    try:
        inspector = sa.inspect(engine)
        present = set(inspector.get_table_names())
        columns = {
            t: {c["name"] for c in inspector.get_columns(t)} for t in store.tables if t in present
        }
        for table, spec in store.tables.items():
            if table not in present:
                errors.append(f"{name}.{table}: no such table")
                continue
            indexed = _indexed(inspector, table)
            needed = [*spec.subject_keys.values(), *spec.links]
            needed += [spec.date_column] if spec.date_column else []
            for column in needed:
                if column not in columns[table]:
                    errors.append(f"{name}.{table}: no column {column!r}")
            for column in [*spec.subject_keys.values(), *spec.links]:
                if column in columns[table] and column not in indexed:
                    warnings.append(
                        f"{name}.{table}.{column} has no index: each retrieve and "
                        "erase reads the whole table; "
                        f"{_create_index(engine, table, column)}"
                    )
            for column, target in spec.links.items():
                parent, parent_column = target.split(".")
                if parent in columns and parent_column not in columns[parent]:
                    errors.append(
                        f"{name}.{table}: link {column} -> {target}: {parent} has no "
                        f"column {parent_column!r}"
                    )
    finally:
        engine.dispose()


def _create_index(engine: sa.Engine, table: str, column: str) -> str:
    """The statement that adds the index, as this database's dialect writes it (SQLite wants
    a name, PostgreSQL quotes what needs quoting)."""
    from sqlalchemy.schema import CreateIndex

    target = sa.Table(table, sa.MetaData(), sa.Column(column))
    index = sa.Index(f"ix_{table}_{column}"[:63], target.c[column])
    return f"{str(CreateIndex(index).compile(dialect=engine.dialect)).strip()};"


def _check_files(name: str, store: Store, errors: list[str]) -> None:
    from veil.rights._files import units

    for pattern, spec in store.tables.items():
        found = units(name, store, pattern)
        if not found:
            errors.append(f"{name}: {pattern!r} matches nothing")
        for unit in found[:3]:
            header = unit.table().columns
            dated = [spec.date_column] if spec.date_column else []
            for column in [*spec.subject_keys.values(), *dated]:
                if column not in header:
                    errors.append(f"{name}: {unit.label!r} has no column {column!r}")


def write_map(
    output: str | Path,
    urls: Sequence[str] = (),
    *,
    fides: str | Path | None = None,
    fides_urls: Mapping[str, str] | None = None,
    scan: bool = True,
    progress: Callable[[str], None] | None = None,
) -> DataMap:
    """A first data map, written to ``output`` (YAML) for the user to edit: built from the
    databases at ``urls`` (tables, foreign keys, subject keys found by the scan), or from a
    Fides dataset YAML (``fides``, with each dataset's URL in ``fides_urls``)."""
    from veil.io import atomic_open, check_output
    from veil.rights._map import dump_map

    if not urls and fides is None:
        raise ParameterError("give database URLs to map, --from-fides FILE, or --map MAP --check")
    check_output(output, inputs=[str(fides)] if fides else [], force=False)
    if fides is not None:
        from veil.rights.fides import from_fides

        data_map = from_fides(fides, dict(fides_urls or {}))
    else:
        data_map = build_map(list(urls), scan=scan, progress=progress or (lambda _: None))
    with atomic_open(output, force=False) as handle:
        handle.write(dump_map(data_map))
    return data_map
