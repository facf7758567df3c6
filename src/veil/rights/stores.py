"""The kinds of store a data map names (``kind: sql``, ``files``, ``s3``), each one class that
says how a request reads and changes it: ``retrieve`` a person's rows, ``erase`` them (one
person, or many by one key), ``retain`` what is older than its class keeps it, ``check`` the
map against the live store, and what else a request needs (``locks``, an audit ``anchor``,
whether its tables link to each other, whether it goes last in an erasure).

The kinds are registered in ``KINDS`` (``veil.rights.sql_kind`` registers SQL,
``veil.rights.file_kinds`` files and S3, each kind's code in its module, loaded when a store of
its kind is first met: ``BUILT_IN``): ``kind_of(store)`` is how every request finds them, so a
new kind of store is one module, not a branch in each request."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from veil.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from veil.rights._map import DataMap, RetentionClass, Store

__all__ = ["BUILT_IN", "KINDS", "Counts", "StoreKind", "kind_named", "kind_of", "known_kinds"]

#: Rows removed and rows kept (anonymized) by table.
Counts = tuple[dict[str, int], dict[str, int]]


class StoreKind:
    """How requests read and change one kind of store (the methods a kind implements)."""

    #: The map's word for it (``kind:``).
    kind: ClassVar[str]
    #: Erased after the other kinds: the keys other stores are found by mostly come from it.
    erased_last: ClassVar[bool] = False
    #: Its tables link to each other (a kept row keeps the rows it links to).
    linked: ClassVar[bool] = False
    #: The field of the map's store that says where it is (``url``, ``path``, ``bucket``).
    needs: ClassVar[str]

    def validate(self, store: Store) -> None:
        """Refuse, when the map loads, a store of this kind that is wrongly described."""

    def units(self, name: str, store: Store, pattern: str) -> list[Any]:
        """The files or objects of the store a table names, in a stable order (the kinds
        made of files)."""
        raise NotImplementedError(f"a store of kind {self.kind} holds no files")

    def unit(self, name: str, store: Store, label: str) -> Any:
        """The file or object ``label`` of the store, whether or not it exists yet (the kinds
        made of files)."""
        raise NotImplementedError(f"a store of kind {self.kind} holds no files")

    def retrieve(self, name: str, store: Store, subject: Any) -> dict[str, list[dict[str, Any]]]:
        """The rows about ``subject`` in the store, by table (tables with none included)."""
        raise NotImplementedError

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
        """Erase ``subject`` from the store (``log``: the request's journal); the counts the
        journal records when the store is verified (empty when each step recorded its own)."""
        raise NotImplementedError

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
        """Erase every subject whose ``key`` is among ``values``."""
        raise NotImplementedError

    def left_many(self, name: str, store: Store, key: str, values: list[str]) -> dict[str, int]:
        """What ``erase_many`` left, by table (``name.table``)."""
        return {}

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
        """Archive or delete the rows of ``tables`` older than ``cutoff``; counts by kind."""
        raise NotImplementedError

    def check(self, name: str, store: Store, errors: list[str], warnings: list[str]) -> None:
        """Add what is wrong with the map of this store (errors) or could be better."""
        raise NotImplementedError

    def preflight(self, name: str, store: Store) -> None:
        """Refuse, before any change, what no re-run of a request could fix."""

    @contextlib.contextmanager
    def locked(self, name: str, store: Store) -> Iterator[None]:
        """The store's own lock, beside the request's (none by default)."""
        yield

    def anchor(self, name: str, store: Store, log_id: str) -> Any:
        """An anchor of the audit log in the store (None: it keeps none)."""
        return None


KINDS: Registry[StoreKind] = Registry("store kind")


#: Where the kinds veil ships are defined: each module registers its kinds in ``KINDS`` when one
#: is first needed (a map of SQL stores never loads the file kinds, nor pandas with them).
BUILT_IN = {
    "sql": "veil.rights.sql_kind",
    "files": "veil.rights.file_kinds",
    "s3": "veil.rights.file_kinds",
}


def known_kinds() -> list[str]:
    """Every kind a map may name: veil's own and those registered since."""
    return list(dict.fromkeys([*BUILT_IN, *KINDS]))


def kind_named(name: str) -> StoreKind:
    """The kind registered as ``name`` (veil's own loaded on first use)."""
    if name not in KINDS and name in BUILT_IN:
        importlib.import_module(BUILT_IN[name])
    return KINDS[name]


def kind_of(store: Store) -> StoreKind:
    """The kind of ``store``, as registered."""
    return kind_named(store.kind)


def add_counts(total: dict[str, int], more: dict[str, int]) -> None:
    """Add ``more`` (rows per table) into ``total``."""
    for table, n in more.items():
        total[table] = total.get(table, 0) + n
