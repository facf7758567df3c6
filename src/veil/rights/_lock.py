"""Locks that serialize requests per store: two erasures whose rows share one file must not
each rewrite it from what they read (one would undo the other), and two requests about the
same person must not share a journal at once.

- every store: an exclusive ``flock`` on a file in the map's lock folder (``MAP.journal.locks``,
  beside the journal folder), which every veil process using the map shares;
- a files store also: a lock file beside its folder (``.FOLDER.veil-lock``), which any map
  naming the same folder shares;
- a PostgreSQL store also: a session advisory lock (``pg_advisory_lock``), which every veil
  process on any machine using that database shares. SQLite locks its file itself.

A lock is held from the store's first read to its verified rewrite. Lock files are never
removed (removing one while another process waits on it would let a third take a fresh one).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
from collections.abc import Iterator
from pathlib import Path

from veil.rights._map import Store
from veil.rights.stores import kind_of


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (made if missing, never written), waited for. A link in
    its place is refused: opening it would create or lock whatever file it names."""
    import os

    from veil.exceptions import InputError

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise InputError(
            f"cannot take the lock {str(path)!r}: {err.strerror} (a link in its "
            "place is refused; remove it)"
        ) from err
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def folder(journal: Path) -> Path:
    """Where a map's lock files are: beside its journal folder (which goes when empty)."""
    return journal.with_name(journal.name + ".locks")


def _name(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@contextlib.contextmanager
def request(journal: Path, subject_id: str) -> Iterator[None]:
    """One request about one subject at a time (they share a journal)."""
    with held(folder(journal) / f"request-{_name(subject_id)}.lock"):
        yield


@contextlib.contextmanager
def store(name: str, spec: Store, journal: Path) -> Iterator[None]:
    """The store ``name`` to this request alone, from its first read to its verified rewrite."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(held(folder(journal) / f"store-{_name(name)}.lock"))
        stack.enter_context(kind_of(spec).locked(name, spec))  # the store kind's own
        yield


@contextlib.contextmanager
def advisory(name: str, url: str) -> Iterator[None]:
    """PostgreSQL's session advisory lock for this store, on a connection of its own."""
    import sqlalchemy as sa

    from veil.rights import _sql

    key = int.from_bytes(
        hashlib.sha256(f"veil rights store {name}".encode()).digest()[:8], "big", signed=True
    )
    engine = _sql.connect(url, store=name)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": key})
            connection.commit()
            try:
                yield
            finally:
                connection.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                connection.commit()
    finally:
        engine.dispose()
