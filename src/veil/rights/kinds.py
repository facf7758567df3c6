"""SQL databases, folders of files and S3 buckets: the kinds of store veil serves requests on
(``veil.rights.stores``), registered in ``KINDS``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from veil.rights import _lock
from veil.rights._audit import SqlAnchor
from veil.rights._files import retrieve_store, units
from veil.rights._map import DataMap, RetentionClass, Store, inside_folder
from veil.rights.erase import _by_values, _erase_files, erase_sql
from veil.rights.mapper import _check_files, _check_sql
from veil.rights.retention import _retain_sql, _retain_units
from veil.rights.retrieve import retrieve_sql
from veil.rights.stores import KINDS, Counts, StoreKind

__all__ = ["Files", "Objects", "Sql"]


def _added(total: dict[str, int], more: dict[str, int]) -> None:
    for table, n in more.items():
        total[table] = total.get(table, 0) + n


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
        now: pd.Timestamp,
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
        now: pd.Timestamp,
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
        now: pd.Timestamp,
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


class Objects(StoreKind):
    """Objects of an S3 bucket (CSV, JSON, Parquet): each rewritten whole, then recorded."""

    kind = "s3"
    needs = "bucket"

    def retrieve(self, name: str, store: Store, subject: Any) -> dict[str, list[dict[str, Any]]]:
        """The rows about ``subject`` in the store's files or objects."""
        return retrieve_store(name, store, subject)

    def erase(
        self,
        data_map: DataMap,
        name: str,
        store: Store,
        subject: Any,
        now: pd.Timestamp,
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
        now: pd.Timestamp,
        mode: str,
    ) -> Counts:
        """Subject by subject."""
        removed: dict[str, int] = {}
        anonymized: dict[str, int] = {}
        for value in values:
            gone, kept = _erase_files(data_map, name, store, {key: value}, now, mode)
            _added(removed, gone)
            _added(anonymized, kept)
        return removed, anonymized

    def retain(
        self,
        data_map: DataMap,
        rule: RetentionClass,
        step: str,
        name: str,
        store: Store,
        tables: list[str],
        now: pd.Timestamp,
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


for _kind in (Sql(), Files(), Objects()):
    KINDS.add(_kind.kind, _kind)
