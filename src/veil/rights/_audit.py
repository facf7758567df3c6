"""The audit log: append-only JSON lines, each entry chained to the one before by a keyed
hash (HMAC-SHA256 with veil's key), the subject only ever as a keyed hash of its identity.

An edited entry no longer matches its hash; a deleted, inserted or reordered one breaks the
chain (``seq`` and ``prev``); entries cut off the end are caught by the head file beside the
log (``LOG.head``: the count and last hash, keyed too). Without the key nobody can forge a
consistent chain; with it, the entries still cannot change without the head and every later
hash changing, which a copy of the head kept elsewhere exposes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veil.exceptions import CheckFailedError, InputError

GENESIS = "0" * 64


def subject_hash(key: bytes, subject: dict[str, str]) -> str:
    """The subject's keyed hash: the same person gives the same hash, the hash gives nobody."""
    text = "\n".join(f"{k}={v}" for k, v in sorted(subject.items()))
    return hmac.new(key, b"subject\n" + text.encode(), hashlib.sha256).hexdigest()


def _digest(key: bytes, entry: dict[str, Any]) -> str:
    body = json.dumps(
        {k: v for k, v in entry.items() if k != "hash"},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


class Anchor:
    """A copy of the log's head kept where deleting the log cannot reach it unnoticed."""

    where: str

    def read(self) -> dict[str, Any] | None:
        """The head recorded here (None: never anchored here)."""
        raise NotImplementedError

    def write(self, body: dict[str, Any]) -> None:
        """Record the head here."""
        raise NotImplementedError


class FileAnchor(Anchor):
    """The head in a file of veil's own (beside the map's journal folder)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def read(self) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        try:
            return dict(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {"damaged": True}

    def write(self, body: dict[str, Any]) -> None:
        from veil.io import atomic_open

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(self.path) as handle:
            handle.write(json.dumps(body))


class SqlAnchor(Anchor):
    """The head in a table of veil's own (``veil_audit_anchor``) in a SQL store."""

    TABLE = "veil_audit_anchor"

    def __init__(self, name: str, url: str, log: str) -> None:
        self.name, self.url, self.log = name, url, log
        self.where = f"store {name!r} (table {self.TABLE})"

    def _table(self) -> Any:
        import sqlalchemy as sa

        metadata = sa.MetaData()
        return sa.Table(
            self.TABLE,
            metadata,
            sa.Column("log", sa.String(64), primary_key=True),
            sa.Column("head", sa.Text, nullable=False),
        )

    def read(self) -> dict[str, Any] | None:
        import sqlalchemy as sa

        from veil.rights import _sql

        engine = _sql.connect(self.url, store=self.name)
        try:
            with engine.connect() as connection:
                if not sa.inspect(connection).has_table(self.TABLE):
                    return None
                table = self._table()
                row = connection.execute(
                    sa.select(table.c.head).where(table.c.log == self.log)
                ).first()
        finally:
            engine.dispose()
        return None if row is None else dict(json.loads(row[0]))

    def write(self, body: dict[str, Any]) -> None:
        import sqlalchemy as sa

        from veil.rights import _sql

        engine = _sql.connect(self.url, store=self.name)
        try:
            table = self._table()
            with engine.begin() as connection:
                table.metadata.create_all(connection)
                done = connection.execute(
                    sa.update(table).where(table.c.log == self.log).values(head=json.dumps(body))
                )
                if not done.rowcount:
                    connection.execute(sa.insert(table).values(log=self.log, head=json.dumps(body)))
        except sa.exc.SQLAlchemyError as err:
            raise InputError(
                f"the audit log's anchor in {self.where} could not be written: "
                f"{_sql.first_line(err)}"
            ) from err
        finally:
            engine.dispose()


class AuditLog:
    """The log at ``path`` (created on first append), keyed with ``key``; its head also kept
    at each of ``anchors``."""

    def __init__(self, path: str | Path, key: bytes, anchors: tuple[Anchor, ...] = ()) -> None:
        self.path = Path(path)
        self.head = self.path.with_name(self.path.name + ".head")
        self._key = key
        self.anchors = anchors

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise CheckFailedError(
                    f"audit log {self.path}: line {number} is not an entry (edited or truncated)"
                ) from err
        return out

    def append(
        self,
        action: str,
        *,
        subject: str | None,
        stores: list[str],
        counts: dict[str, int],
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add one entry (under a lock, flushed to disk) and return it."""
        with self._locked():
            entries = self._entries()
            self._check_anchors(entries)  # never a new chain where one was cut or deleted
            previous = entries[-1]["hash"] if entries else GENESIS
            entry: dict[str, Any] = {
                "seq": len(entries) + 1,
                "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "actor": actor or _actor(),
                "action": action,
                "subject": subject,
                "stores": stores,
                "counts": counts,
                "detail": detail or {},
                "prev": previous,
            }
            entry["hash"] = _digest(self._key, entry)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            self._write_head(entry["seq"], entry["hash"])
        return entry

    def _write_head(self, count: int, last: str) -> None:
        body = {"entries": count, "last": last}
        body["hash"] = _digest(self._key, body)
        from veil.io import atomic_open

        with atomic_open(self.head) as handle:
            handle.write(json.dumps(body))
        for anchor in self.anchors:
            anchor.write(body)

    def check(self) -> None:
        """Refuse, before a request runs, a log that is shorter than an anchor says (a
        request would otherwise go unrecorded, or start a new chain over the gap)."""
        self._check_anchors(self._entries())

    def _check_anchors(self, entries: list[dict[str, Any]]) -> None:
        """Each anchor's head must be an entry of the log as it is (the log may have grown
        since, never shrunk)."""
        for anchor in self.anchors:
            body = anchor.read()
            if body is None:
                continue
            if not hmac.compare_digest(
                str(body.get("hash")),
                _digest(self._key, {k: body.get(k) for k in ("entries", "last")}),
            ):
                raise CheckFailedError(
                    f"audit log {self.path}: its anchor in {anchor.where} was edited or damaged"
                )
            count = int(body["entries"])
            if count > len(entries):
                what = "is missing" if not self.path.exists() else f"holds {len(entries)} entries"
                raise CheckFailedError(
                    f"audit log {self.path} {what}, but its anchor in {anchor.where} records "
                    f"{count}: entries after {len(entries)} were deleted or cut off"
                )
            if count and entries[count - 1].get("hash") != body.get("last"):
                raise CheckFailedError(
                    f"audit log {self.path}: entry {count} is not the one its anchor in "
                    f"{anchor.where} recorded: the log was replaced"
                )

    def verify(self) -> int:
        """The number of entries, if the log is intact; else ``CheckFailedError`` naming the
        first bad entry."""
        entries = self._entries()
        previous = GENESIS
        for index, entry in enumerate(entries, 1):
            if not isinstance(entry, dict) or "hash" not in entry:
                raise CheckFailedError(f"audit log {self.path}: entry {index} is malformed")
            if entry.get("seq") != index or entry.get("prev") != previous:
                raise CheckFailedError(
                    f"audit log {self.path}: entry {index} (seq {entry.get('seq')}) does not "
                    f"follow entry {index - 1}: an entry was deleted, inserted or reordered here"
                )
            if not hmac.compare_digest(str(entry["hash"]), _digest(self._key, entry)):
                raise CheckFailedError(
                    f"audit log {self.path}: entry {index} (seq {entry['seq']}) was edited: its "
                    "hash does not match"
                )
            previous = entry["hash"]
        self._check_anchors(entries)
        if not entries and not self.head.exists():
            return 0
        try:
            head = json.loads(self.head.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise CheckFailedError(
                f"audit log {self.path}: its head file {self.head.name} is missing or damaged"
            ) from err
        if not hmac.compare_digest(str(head.get("hash")), _digest(self._key, head)):
            raise CheckFailedError(f"audit log {self.path}: its head file was edited")
        if head.get("entries") != len(entries) or head.get("last") != previous:
            raise CheckFailedError(
                f"audit log {self.path}: the head records {head.get('entries')} entries, the "
                f"log holds {len(entries)}: entries after {len(entries)} were cut off"
            )
        return len(entries)

    def entries(self) -> list[dict[str, Any]]:
        """Every entry (verify first to trust them)."""
        return self._entries()


def _actor() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in a container
        return f"uid {os.getuid()}"


def open_log(path: str | Path, key: bytes, *, anchors: tuple[Anchor, ...] = ()) -> AuditLog:
    """The audit log at ``path``; a folder in the way is one clear line."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"audit_log {str(target)!r} is a folder; name a file")
    return AuditLog(target, key, anchors)


def anchors_for(data_map: Any, map_path: str | Path, log_path: Path) -> tuple[Anchor, ...]:
    """Where a map's log is anchored: a file beside its journal folder, and a table in each
    writable SQL store (named by a hash of the log's path, so logs sharing a database do not
    collide)."""
    import hashlib

    from veil.rights import _lock
    from veil.rights.stores import kind_of

    journal = Path(map_path).with_name(Path(map_path).stem + ".journal")
    log_id = hashlib.sha256(str(log_path.resolve()).encode()).hexdigest()[:32]
    out: list[Anchor] = [FileAnchor(_lock.folder(journal) / f"audit-{log_id}.anchor")]
    for name, store in data_map.stores.items():
        anchor = kind_of(store).anchor(name, store, log_id)
        if anchor is not None:
            out.append(anchor)
    return tuple(out)


def confirmation(log: AuditLog, subject_id: str) -> dict[str, Any]:
    """What a data subject is sent after an erasure: taken from the log (verified first), their
    last erasure that retrieve then found nothing after, with the entry's number and hash so
    anyone holding the log can check it; every request about them, by time. The subject
    appears as their keyed hash only."""
    total = log.verify()
    mine = [e for e in log.entries() if e.get("subject") == subject_id]
    done = [e for e in mine if e["action"] == "erase" and e["detail"].get("verified")]
    if not done:
        raise CheckFailedError(
            "no verified erasure of this person is in the audit log: erase "
            "first (a dry run does not count)"
        )
    last = done[-1]
    return {
        "confirmation": "erasure",
        "subject": subject_id,
        "erased_at": last["at"],
        "mode": last["detail"].get("mode"),
        "stores": last["stores"],
        "counts": last["counts"],
        "verified": True,
        "audit": {
            "log": log.path.name,
            "entry": last["seq"],
            "hash": last["hash"],
            "entries": total,
        },
        "requests": [{"at": e["at"], "action": e["action"], "entry": e["seq"]} for e in mine],
    }


def confirmation_html(body: dict[str, Any]) -> str:
    """The confirmation as a page a person reads."""
    from veil._html import card

    rows = [(table, str(n)) for table, n in body["counts"].items()]
    audit = body["audit"]
    parts = [
        card(
            "Your data was erased",
            headers=("where", "rows"),
            rows=rows,
            lines=[
                f"Erased on {body['erased_at']} (mode: {body['mode']}); afterwards a search of "
                f"every store ({', '.join(body['stores'])}) found nothing about you.",
                "Rows the law requires keeping, if any, are marked anonymized: kept with every "
                "identifying value replaced by a random one.",
            ],
        ),
        card(
            "Your requests",
            headers=("when", "what", "audit entry"),
            rows=[(r["at"], r["action"], str(r["entry"])) for r in body["requests"]],
        ),
        card(
            "How to check this",
            lines=[
                f"Entry {audit['entry']} of the audit log {audit['log']} "
                f"({audit['entries']} entries, hash chain intact), hash {audit['hash']}.",
                f"You appear in it only as the keyed hash {body['subject']}.",
            ],
        ),
    ]
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Erasure confirmation"
        f"</title></head><body>{''.join(parts)}</body></html>"
    )
