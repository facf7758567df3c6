"""The kinds of store made of files (``veil.rights.stores``): a folder of CSV, Parquet and
JSON files, and an S3 bucket's objects (moto's server in the tests). A subject's rows are found
in each file, erased by rewriting the file (a tombstone first, then a rename), aged out by
retention classes with an archive, and the map's patterns checked."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from veil.exceptions import InputError
from veil.rights import _lock
from veil.rights._files import (
    FileUnit,
    ObjectUnit,
    Subject,
    Unit,
    appended,
    client,
    objects_of,
    opened,
    retrieve_store,
    rewritten,
    selected,
    subject_rows,
    tokens_only,
    units,
)
from veil.rights._journal import Journal
from veil.rights._map import DataMap, RetentionClass, Store, inside_folder
from veil.rights.erase import held_rows, identifying
from veil.rights.retention import OUTCOMES, Outcomes, add_outcomes
from veil.rights.stores import KINDS, Counts, StoreKind, add_counts, kind_of


def _erase_files(
    data_map: DataMap,
    name: str,
    store: Store,
    subject: Subject,
    now: datetime,
    mode: str,
    *,
    log: Journal | None = None,
) -> Counts:
    """Rewrite each file or object of the store that holds the subject (held rows kept,
    their identifying fields replaced; everyone else's bytes unchanged). With ``log``, each
    file is a journal step that notes its counts before it is rewritten."""
    removed: dict[str, int] = {}
    anonymized: dict[str, int] = {}
    # every file, also those an earlier run finished: what is done holds nothing (re-read)
    for got in opened(name, store, store.tables, name, lambda step: False):
        label = f"{name}.{got.pattern}"
        hit = subject_rows(got.frame, got.spec.subject_keys, subject, where=got.where)
        if not hit.any():
            if log is not None and log.noted(got.step):  # rewritten by a killed run
                log.finish(got.step)
            continue
        held = hit & held_rows(data_map, store, got.pattern, got.frame, now, mode)
        columns = (
            identifying(got.frame, set(got.spec.subject_keys.values())) if held.any() else set()
        )
        counts = {
            "removed": {label: int((hit & ~held).sum())},
            "anonymized": {label: int(held.sum())},
        }
        counts = {k: v for k, v in counts.items() if v[label]}
        if log is not None:
            log.note(got.step, plan=counts)
        got.unit.write(
            rewritten(
                got.data,
                got.unit.label,
                got.where,
                drop=hit & ~held,
                anonymize=held,
                columns=sorted(columns),
            )
        )
        if log is not None:
            log.record(got.step, **counts)
        for kind, target in (("removed", removed), ("anonymized", anonymized)):
            for table, n in counts.get(kind, {}).items():
                target[table] = target.get(table, 0) + n
    return removed, anonymized


# ---------------------------------------------------------------------------- files, S3
def _retain_units(
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
    """Move, delete or (held) anonymize the aged rows of each file or object, each file its
    own journal step with its counts; with ``log`` None, only count (and return them)."""
    archive = (
        data_map.stores[rule.archive_to] if rule.archive_to and rule.then == "archive" else None
    )
    counts: Outcomes = {kind: {} for kind in OUTCOMES}
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
            add_outcomes(counts, plan)
            continue
        noted = log.noted(got.step)
        if not move.any() and not fresh.any():  # nothing (left) to do
            if noted:  # done by a killed run after it noted its counts
                log.finish(got.step)
            continue
        target = (
            kind_of(archive).unit(str(rule.archive_to), archive, item.label) if archive else None
        )
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


def _check_files(name: str, store: Store, errors: list[str]) -> None:
    for pattern, spec in store.tables.items():
        found = units(name, store, pattern)
        if not found:
            errors.append(f"{name}: {pattern!r} matches nothing")
        for each in found[:3]:
            header = each.table().columns
            dated = [spec.date_column] if spec.date_column else []
            for column in [*spec.subject_keys.values(), *dated]:
                if column not in header:
                    errors.append(f"{name}: {each.label!r} has no column {column!r}")


class Objects(StoreKind):
    """Objects of an S3 bucket (CSV, JSON, Parquet): each rewritten whole, then recorded."""

    kind = "s3"
    needs = "bucket"

    def units(self, name: str, store: Store, pattern: str) -> list[Unit]:
        """The bucket's objects under the pattern's prefix that match it, by key."""
        s3 = client(name, store)
        return [
            ObjectUnit(key, s3=s3, bucket=str(store.bucket))
            for key in objects_of(s3, name, store, pattern)
        ]

    def unit(self, name: str, store: Store, label: str) -> Unit:
        """The object ``label`` of the bucket."""
        return ObjectUnit(label, s3=client(name, store), bucket=str(store.bucket))

    def retrieve(self, name: str, store: Store, subject: Any) -> dict[str, list[dict[str, Any]]]:
        """The rows about ``subject`` in the store's files or objects."""
        return retrieve_store(name, store, subject)

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
        """Each file or object rewritten without the person, each recorded as it is done."""
        _erase_files(data_map, name, store, subject, now, mode, log=log)
        return {}, {}  # each file recorded its own counts

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
        """Subject by subject."""
        removed: dict[str, int] = {}
        anonymized: dict[str, int] = {}
        for value in values:
            gone, kept = _erase_files(data_map, name, store, {key: value}, now, mode)
            add_counts(removed, gone)
            add_counts(anonymized, kept)
        return removed, anonymized

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
        """Aged rows of each file or object archived or deleted, file by file."""
        return _retain_units(data_map, rule, step, name, store, tables, now, cutoff, log)

    def check(self, name: str, store: Store, errors: list[str], warnings: list[str]) -> None:
        """Every file or object a table names is there and readable."""
        _check_files(name, store, errors)


class Files(Objects):
    """Files in a folder: as objects, with the folder locked and its links refused first."""

    kind = "files"
    needs = "path"

    def units(self, name: str, store: Store, pattern: str) -> list[Unit]:
        """Every file the pattern matches, by its real path inside the folder: a link is
        followed to the file it names (rewriting the link itself would leave the data in its
        target), and refused when that file is outside the folder (the store would reach data
        the map does not hold)."""
        assert store.path is not None
        folder = Path(store.path)
        if not folder.is_dir():
            raise InputError(f"store {name!r}: folder {str(folder)!r} does not exist")
        try:
            inside_folder(pattern)
        except ValueError as err:
            raise InputError(f"store {name!r}: {err}") from err
        real = folder.resolve()
        out: dict[str, FileUnit] = {}
        for path in sorted(folder.glob(pattern)):
            if not path.is_file():
                continue
            target = path.resolve()
            if not target.is_relative_to(real):
                raise InputError(
                    f"store {name!r}: {path.relative_to(folder).as_posix()!r} is a link to "
                    f"{str(target)!r}, outside the store's folder: refusing to read or rewrite "
                    "it (nothing was changed); map that folder as a store, or remove the link"
                )
            label = target.relative_to(real).as_posix()
            out.setdefault(label, FileUnit(label, folder=real))
        return list(out.values())

    def unit(self, name: str, store: Store, label: str) -> Unit:
        """The file ``label`` of the folder."""
        return FileUnit(label, folder=Path(str(store.path)))

    def validate(self, store: Store) -> None:
        """Every file pattern stays inside the folder (relative, without ``..``)."""
        for pattern in store.tables:
            inside_folder(pattern)

    def preflight(self, name: str, store: Store) -> None:
        """A missing folder, or a file that is a link out of it, is refused first."""
        for pattern in store.tables:
            units(name, store, pattern)

    @contextlib.contextmanager
    def locked(self, name: str, store: Store) -> Iterator[None]:
        """A lock file beside the folder (a read-only parent: the map's lock alone)."""
        if store.path is None:
            yield
            return
        real = Path(store.path).resolve()
        with contextlib.ExitStack() as stack:
            with contextlib.suppress(PermissionError):
                stack.enter_context(_lock.held(real.parent / f".{real.name}.veil-lock"))
            yield


for _kind in (Files(), Objects()):
    KINDS.add(_kind.kind, _kind)
