"""Retention: keep data no longer than its class allows (GDPR art. 5(1)(e), Kenya DPA s. 39).

A class ``{keep: 10 months, then: archive, archive_to: archive}`` moves what is older than 10
months to the archive store and removes it where it was; ``{keep: 5 years}`` deletes it. A row
under a legal hold (its class's ``hold``, counted from its date) is kept, its identifying
columns replaced by random tokens, as erasure does.

- SQL tables: the rows whose ``date_column`` is older (and the rows linking to them) are copied
  to the archive store's same tables (made with the source's definitions) in one transaction,
  then deleted in another; a re-run copies nothing twice.
- Files and objects: rows by their ``date_column``, or, for a table without one, a whole file
  or object by when it was last written (as S3 lifecycle rules count). The aged rows are
  added to the archive store's file or object of the same name, then the source is rewritten
  without them (everyone else's bytes unchanged) or removed when nothing is left.

The archive store must map what it receives, so that retrieve and erase still reach archived
rows (the map's validation says so). A journal (``MAP.journal/retention.json``) holds the
run's date and, before a file's archive is written, the archive's digest: killed at any
point, the same command finishes the run with the same end state. ``--dry-run`` counts and
changes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import sqlalchemy as sa

from veil._html import Shown
from veil.exceptions import InputError
from veil.rights import _lock, _sql
from veil.rights._files import (
    Unit,
    appended,
    opened,
    rewritten,
    selected,
    tokens_only,
    unit,
)
from veil.rights._journal import Journal
from veil.rights._map import DataMap, RetentionClass, Store
from veil.rights.erase import erase_sql, held_rows, identifying, parse_age
from veil.rights.retrieve import retrieve_sql
from veil.rights.stores import kind_of

KINDS = ("deleted", "archived", "kept")


@dataclass(frozen=True)
class RetentionResult(Shown):
    """What retention did (or would do), per ``store.table``."""

    as_of: str
    dry_run: bool
    deleted: dict[str, int] = field(default_factory=dict)
    archived: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)  # held: kept, identifiers replaced
    resumed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """For ``--format json`` and the audit log."""
        return {
            "as_of": self.as_of,
            "dry_run": self.dry_run,
            "deleted": self.deleted,
            "archived": self.archived,
            "kept": self.kept,
            "resumed": self.resumed,
        }


Counts = dict[str, dict[str, int]]


def apply_retention(
    data_map: DataMap, *, journal: Path, as_of: pd.Timestamp | None = None, dry_run: bool = False
) -> RetentionResult:
    """Apply every class with a ``keep`` to the tables, files and objects that name it.
    ``journal``: the folder of the run's journal (an interrupted run resumes from it, with
    the date it started with)."""
    from veil.rights.erase import preflight

    preflight(data_map)  # what no re-run could fix fails before the journal exists
    log = None if dry_run else Journal(journal, "retention")
    now = as_of if as_of is not None else pd.Timestamp.now()
    if log is not None and log.resumed:
        started = pd.Timestamp(log.state["as_of"])
        if as_of is not None and as_of != started:
            raise InputError(
                f"an interrupted retention run as of {started} is in {log.path}: "
                "run it again without --as-of to finish it first"
            )
        now = started
    elif log is not None:
        log.state["as_of"] = now.isoformat()
        log.save()
    planned: Counts = {kind: {} for kind in KINDS}
    for class_name, rule in data_map.retention.items():
        if rule.keep is None:
            continue
        cutoff = now - parse_age(rule.keep)
        for name, store in data_map.stores.items():
            tables = [t for t, s in store.tables.items() if s.retention == class_name]
            step = f"{class_name}/{name}"
            if not tables or (log is not None and log.done(step)):
                continue
            try:
                archive = rule.archive_to if rule.then == "archive" else None
                with contextlib.ExitStack() as locks:  # beside erasures of these stores
                    if log is not None:  # (a dry run changes nothing, and leaves nothing)
                        locks.enter_context(_lock.store(name, store, journal))
                    if archive is not None and log is not None:  # source, then archive
                        locks.enter_context(_lock.store(archive, data_map.stores[archive], journal))
                    counts = kind_of(store).retain(
                        data_map, rule, step, name, store, tables, now, cutoff, log
                    )
            except InputError as err:
                if log is None:
                    raise
                raise InputError(
                    f"{err}; the journal {log.path} keeps the run: fix that, "
                    "then run the same command again"
                ) from err
            if log is not None:
                log.finish(step, **counts)
            for kind in KINDS:
                for table, n in counts.get(kind, {}).items():
                    planned[kind][table] = planned[kind].get(table, 0) + n
    if log is None:
        return RetentionResult(
            str(now.date()), True, planned["deleted"], planned["archived"], planned["kept"]
        )
    result = RetentionResult(
        str(now.date()),
        False,
        log.counts("deleted"),
        log.counts("archived"),
        log.counts("kept"),
        resumed=log.resumed,
    )
    log.close()
    return result


# -------------------------------------------------------------------------------------- SQL
def _retain_sql(
    data_map: DataMap,
    rule: RetentionClass,
    step: str,
    name: str,
    store: Store,
    tables: list[str],
    now: pd.Timestamp,
    cutoff: pd.Timestamp,
    log: Journal | None,
) -> Counts:
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
        _archive(data_map.stores[rule.archive_to], rule.archive_to, found, name, store)
    counts: Counts = {}

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


def _archive(
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


# ---------------------------------------------------------------------------- files, S3
def _retain_units(
    data_map: DataMap,
    rule: RetentionClass,
    step: str,
    name: str,
    store: Store,
    tables: list[str],
    now: pd.Timestamp,
    cutoff: pd.Timestamp,
    log: Journal | None,
) -> Counts:
    """Move, delete or (held) anonymize the aged rows of each file or object, each file its
    own journal step with its counts; with ``log`` None, only count (and return them)."""
    archive = (
        data_map.stores[rule.archive_to] if rule.archive_to and rule.then == "archive" else None
    )
    counts: Counts = {kind: {} for kind in KINDS}
    skip = log.done if log is not None else (lambda part: False)
    for got in opened(name, store, tables, step, skip):
        label, item = f"{name}.{got.pattern}", got.unit
        aged = _aged_rows(got.frame, got.spec.date_column, item, cutoff, got.where)
        held = aged & held_rows(data_map, store, got.pattern, got.frame, now, "delete")
        move = aged & ~held
        columns = (
            sorted(identifying(got.frame, set(got.spec.subject_keys.values())))
            if held.any()
            else []
        )
        fresh = held & ~tokens_only(got.frame, columns)  # anonymized by an earlier run: as is
        plan = {
            "archived" if archive else "deleted": {label: int(move.sum())},
            "kept": {label: int(held.sum())},
        }
        plan = {k: v for k, v in plan.items() if v[label]}
        if log is None:
            _add(counts, plan)
            continue
        noted = log.noted(got.step)
        if not move.any() and not fresh.any():  # nothing (left) to do
            if noted:  # done by a killed run after it noted its counts
                log.finish(got.step)
            continue
        target = unit(str(rule.archive_to), archive, item.label) if archive else None
        if "plan" not in noted:  # the archive's digest before anything is written to it
            before = _digest(target.peek()) if target is not None and move.any() else None
            log.note(got.step, plan=plan, before=before)
            noted = log.noted(got.step)
        if target is not None and move.any():
            current = target.peek()
            if _digest(current) == noted["before"]:  # not written by a killed run
                rows = selected(got.data, item.label, got.where, move)
                target.write(
                    appended(current, rows, item.label, target.where(str(rule.archive_to)))
                )
        if bool(move.all()):
            item.delete()
        else:
            item.write(
                rewritten(
                    got.data, item.label, got.where, drop=move, anonymize=fresh, columns=columns
                )
            )
        log.record(got.step, **noted["plan"])
    if log is not None:  # a file a killed run had emptied and removed: its noted counts
        for part, state in list(log.state["steps"].items()):
            if part.startswith(f"{step}/") and state != "done":
                log.finish(part)
    return counts


def _add(counts: Counts, more: Counts) -> None:
    for kind, tables in more.items():
        for table, n in tables.items():
            counts[kind][table] = counts[kind].get(table, 0) + n


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _aged_rows(
    frame: pd.DataFrame, column: str | None, item: Unit, cutoff: pd.Timestamp, where: str
) -> pd.Series:
    """The rows older than ``cutoff``: by their date column, or all of them when the file
    itself (no date column) was last written before it. A blank date is no age: kept."""
    if column is None:
        return pd.Series(bool(item.modified() < cutoff), index=frame.index)
    if column not in frame.columns:
        raise InputError(f"{where} has no column {column!r} (its date_column): fix the map")
    text = frame[column].astype("string").fillna("").str.strip()
    dates = pd.to_datetime(text.where(text != ""), errors="coerce", utc=True, format="mixed")
    bad = dates.isna() & (text != "")
    if bad.any():
        raise InputError(
            f"{where}, column {column!r}: {str(text[bad].iloc[0])!r} is not a "
            "date; fix the value or the map's date_column"
        )
    return (dates.dt.tz_localize(None) < cutoff).fillna(False).astype(bool)
