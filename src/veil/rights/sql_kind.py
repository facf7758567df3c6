"""The SQL kind of store (``veil.rights.stores``): a database through SQLAlchemy. Rows are
found by the subject's keys and the map's links, erased (or anonymized) in one transaction whose
counts the journal notes inside it, aged out by retention classes, and checked (reachable
tables, indexed keys); an advisory lock on PostgreSQL and an audit anchor in a writable
database."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from veil.exceptions import InputError
from veil.rights import _lock, _sql
from veil.rights._audit import SqlAnchor
from veil.rights._map import DataMap, RetentionClass, Store, children_first
from veil.rights._subject import Subject, values_of
from veil.rights._subject import token as make_token
from veil.rights.stores import KINDS, Counts, StoreKind

if TYPE_CHECKING:  # erasure and retention bring pandas: loaded when a request changes rows
    import pandas as pd

    from veil.rights._journal import Journal
    from veil.rights.erase import Rows
    from veil.rights.retention import Outcomes
    from veil.rights.retrieve import Seed


def retrieve_sql(
    name: str, store: Store, subject: Subject | None = None, *, seed: Seed | None = None
) -> dict[str, list[dict[str, Any]]]:
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
                        value = subject[key]  # several (followed) values: lenient
                        for row in _sql.fetch(
                            connection,
                            table,
                            column,
                            values_of(value),
                            where=where,
                            lenient=not isinstance(value, str),
                        ):
                            found[table_name][_sql.row_key(table, row)] = row
                for column, target in spec.links.items():
                    parent, parent_column = target.split(".")
                    _column(table, column, where)
                    _column(
                        metadata.tables[parent],
                        parent_column,
                        f"store {name!r}, table {parent!r} (linked from {table_name!r})",
                    )
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


def _by_values(store: Store, key: str, values: list[str]) -> Any:
    """The seed: rows holding any of ``values`` in the key's column."""

    def seed(connection: sa.Connection, table_name: str, table: sa.Table) -> Rows:
        column = store.tables[table_name].subject_keys.get(key)
        if column is None:
            return []
        return _sql.fetch(connection, table, column, values, where=f"table {table_name!r}")

    return seed


def _identifying(table: sa.Table, spec_columns: set[str], link_columns: set[str]) -> list[str]:
    """The columns to replace in a kept row: the subject keys and what veil's scan reads as
    direct identifiers or quasi-identifiers in text, never a key other rows link by."""
    keys = {c.name for c in table.primary_key.columns} | link_columns
    return [c.name for c in table.columns if c.name in spec_columns and c.name not in keys]


def erase_sql(
    data_map: DataMap,
    name: str,
    store: Store,
    subject: Subject,
    now: datetime,
    mode: str,
    *,
    found: dict[str, Rows] | None = None,
    before_commit: Callable[[dict[str, dict[str, int]]], None] | None = None,
) -> Counts:
    """Delete (or keep, anonymized) the subject's rows of one SQL store, or the rows
    ``found`` (retention's aged rows and what links to them). ``before_commit`` sees the
    counts inside the transaction (a journal notes them there)."""
    from veil.rights.erase import keeps

    assert store.url is not None
    if found is None:
        found = retrieve_sql(name, store, subject)
    engine = _sql.connect(store.url, store=name)
    removed: dict[str, int] = {}
    anonymized: dict[str, int] = {}
    try:
        metadata = _sql.reflect(engine, store.tables, store=name)
        targets = {t.split(".")[1] for s in store.tables.values() for t in s.links.values()}
        with engine.begin() as connection:  # one transaction: all of the store, or nothing
            for table_name in children_first(store):
                rows = found.get(table_name, [])
                if not rows:
                    continue
                table = metadata.tables[table_name]
                keep = keeps(data_map, store, name, table_name, rows, now, mode, found)
                doomed = [r for r, k in zip(rows, keep, strict=True) if not k]
                kept = [r for r, k in zip(rows, keep, strict=True) if k]
                identity = [c.name for c in table.primary_key.columns]
                if not identity:
                    raise InputError(
                        f"store {name!r}, table {table_name!r} has no primary key: "
                        "veil erases rows by their key"
                    )
                for start in range(0, len(doomed), _sql.CHUNK):
                    chunk = doomed[start : start + _sql.CHUNK]
                    condition = sa.tuple_(*(table.c[c] for c in identity)).in_(
                        [tuple(r[c] for c in identity) for r in chunk]
                    )
                    connection.execute(sa.delete(table).where(condition))
                if doomed:
                    removed[f"{name}.{table_name}"] = len(doomed)
                spec = store.tables[table_name]
                columns = (
                    _identifying(
                        table,
                        _scan_identifying(connection, table, spec),
                        set(spec.links) | (targets & set(table.columns.keys())),
                    )
                    if kept
                    else []
                )
                for row in kept if columns else []:  # nothing identifying: kept as it is
                    values = {c: _replacement(table.c[c]) for c in columns}
                    where = sa.and_(*(table.c[c] == row[c] for c in identity))
                    connection.execute(sa.update(table).where(where).values(values))
                if kept:
                    anonymized[f"{name}.{table_name}"] = len(kept)
            if before_commit is not None and (removed or anonymized):
                before_commit({"removed": removed, "anonymized": anonymized})
    except sa.exc.SQLAlchemyError as err:
        raise InputError(
            f"store {name!r} refused the erasure (nothing of it was changed): "
            f"{_sql.first_line(err)}"
        ) from err
    finally:
        engine.dispose()
    return removed, anonymized


def _scan_identifying(connection: sa.Connection, table: sa.Table, spec: Any) -> set[str]:
    """:func:`identifying` over a sample of a SQL table."""
    import pandas as pd

    from veil.rights.erase import identifying

    sample = [dict(r._mapping) for r in connection.execute(sa.select(table).limit(1_000))]
    return identifying(pd.DataFrame(sample), set(spec.subject_keys.values()))


def _replacement(column: sa.Column[Any]) -> Any:
    """A random value that says nothing and breaks no constraint."""
    try:
        kind = column.type.python_type
    except NotImplementedError:
        kind = str
    if kind is str:
        length = getattr(column.type, "length", None)
        token = make_token()
        return token[:length] if length else token
    if column.nullable:
        return None
    if kind is int:
        return -secrets.randbelow(2**31)
    raise InputError(
        f"column {column.name!r} ({kind.__name__}, NOT NULL) of a kept row cannot be "
        "anonymized: make it nullable or leave it out of the subject keys"
    )


# -------------------------------------------------------------------------------------- SQL
def _retain_sql(
    data_map: DataMap,
    rule: RetentionClass,
    step: str,
    name: str,
    store: Store,
    tables: list[str],
    now: datetime,
    cutoff: pd.Timestamp,
    log: Journal | None,
) -> Outcomes:
    """Archive (then delete) or delete one database's aged rows; with ``log`` None, only
    count. The counts are noted in the journal inside the deleting transaction."""
    class_name = step.split("/")[0]
    for table in tables:
        if store.tables[table].date_column is None:
            raise InputError(
                f"store {name!r}, table {table!r}: retention class {class_name!r} "
                "needs a date_column to count age from"
            )
    found = retrieve_sql(name, store, seed=_aged(store, tables, cutoff))
    count = {f"{name}.{t}": len(rows) for t, rows in found.items() if rows}
    moved = "archived" if rule.then == "archive" else "deleted"
    if log is None:
        return {moved: count}
    if rule.then == "archive":
        assert rule.archive_to is not None  # the map's validation
        archive_rows(data_map.stores[rule.archive_to], rule.archive_to, found, name, store)
    counts: Outcomes = {}

    def planned(changes: dict[str, dict[str, int]]) -> None:
        counts.update(
            {
                moved: count if rule.then == "archive" else changes["removed"],
                "kept": changes["anonymized"],
            }
        )
        if log is not None:
            log.note(step, plan=counts)

    gone, held = erase_sql(
        data_map, name, store, {}, now, "delete", found=found, before_commit=planned
    )
    return {moved: count if rule.then == "archive" else gone, "kept": held}


def _aged(store: Store, tables: list[str], cutoff: pd.Timestamp) -> Any:
    """The seed: rows of ``tables`` whose date is before ``cutoff``."""

    def seed(connection: sa.Connection, table_name: str, table: sa.Table) -> list[dict[str, Any]]:
        if table_name not in tables:
            return []
        column = table.c[str(store.tables[table_name].date_column)]
        query = sa.select(table).where(column < cutoff.to_pydatetime())
        return [dict(r._mapping) for r in connection.execute(query)]

    return seed


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


class Sql(StoreKind):
    """A database through SQLAlchemy: rows found by keys and links, erased in one transaction
    (the journal notes the counts inside it), an advisory lock on PostgreSQL, an audit anchor
    in a writable one."""

    kind = "sql"
    erased_last = True
    linked = True
    needs = "url"

    def retrieve(self, name: str, store: Store, subject: Any) -> dict[str, list[dict[str, Any]]]:
        """The rows about ``subject``, following the store's links."""
        return retrieve_sql(name, store, subject)

    def erase(
        self,
        data_map: DataMap,
        name: str,
        store: Store,
        subject: Any,
        now: datetime,
        mode: str,
        log: Any,
    ) -> Counts:
        """Delete (or anonymize) the rows in one transaction, noting its counts first."""
        return erase_sql(data_map, name, store, subject, now, mode, before_commit=log.noter(name))

    def erase_many(
        self,
        data_map: DataMap,
        name: str,
        store: Store,
        key: str,
        values: list[str],
        now: datetime,
        mode: str,
    ) -> Counts:
        """Every subject's rows found with ``IN`` queries and erased in one transaction."""
        found = retrieve_sql(name, store, seed=_by_values(store, key, values))
        return erase_sql(data_map, name, store, {}, now, mode, found=found)

    def left_many(self, name: str, store: Store, key: str, values: list[str]) -> dict[str, int]:
        """The rows still found by ``key`` after ``erase_many``."""
        again = retrieve_sql(name, store, seed=_by_values(store, key, values))
        return {f"{name}.{t}": len(r) for t, r in again.items() if r}

    def retain(
        self,
        data_map: DataMap,
        rule: RetentionClass,
        step: str,
        name: str,
        store: Store,
        tables: list[str],
        now: datetime,
        cutoff: pd.Timestamp,
        log: Any,
    ) -> dict[str, dict[str, int]]:
        """Aged rows archived or deleted in one transaction per class."""
        return _retain_sql(data_map, rule, step, name, store, tables, now, cutoff, log)

    def check(self, name: str, store: Store, errors: list[str], warnings: list[str]) -> None:
        """Tables, columns and links against the live database; key columns without an
        index."""
        _check_sql(name, store, errors, warnings)

    @contextlib.contextmanager
    def locked(self, name: str, store: Store) -> Iterator[None]:
        """PostgreSQL's advisory lock for the store (other databases: the request's lock)."""
        if store.url is not None and store.url.startswith("postgresql"):
            with _lock.advisory(name, store.url):
                yield
        else:
            yield

    def anchor(self, name: str, store: Store, log_id: str) -> Any:
        """The log's anchor in a database veil may write."""
        if store.read_only or store.url is None:
            return None
        return SqlAnchor(name, store.url, log_id)


def _create_index(engine: sa.Engine, table: str, column: str) -> str:
    """The statement that adds the index, as this database's dialect writes it (SQLite wants
    a name, PostgreSQL quotes what needs quoting)."""
    from sqlalchemy.schema import CreateIndex

    target = sa.Table(table, sa.MetaData(), sa.Column(column))
    index = sa.Index(f"ix_{table}_{column}"[:63], target.c[column])
    return f"{str(CreateIndex(index).compile(dialect=engine.dialect)).strip()};"


def archive_rows(
    archive: Store,
    name: str,
    found: dict[str, list[dict[str, Any]]],
    source_name: str,
    source: Store,
) -> None:
    """Copy the rows into the archive store's same tables, made if missing with the source
    tables' own definitions (types, keys, links); rows already there (a re-run after an
    interruption) are not copied twice."""
    assert archive.url is not None
    assert source.url is not None
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
                there = {
                    tuple(r) for r in connection.execute(sa.select(*(table.c[c] for c in identity)))
                }
                fresh = [r for r in rows if tuple(r[c] for c in identity) not in there]
                if fresh:
                    connection.execute(table.insert(), fresh)
    except sa.exc.SQLAlchemyError as err:
        raise InputError(
            f"archive store {name!r} refused the rows (nothing was moved): {_sql.first_line(err)}"
        ) from err
    finally:
        engine.dispose()


KINDS.add(Sql.kind, Sql())
