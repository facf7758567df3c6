"""Right to erasure: delete one person everywhere the map says they are, verifiably.

- SQL: per database one transaction, children before parents; files: each rewritten through
  a temporary file and a rename, other people's lines kept byte for byte; S3 objects
  rewritten the same way.
- Legal holds: a row whose retention class holds it (``hold: 7 years``, counted from its
  ``date_column``) is kept, its identifying columns replaced by random tokens (irreversible:
  drawn, not derived); a row other kept rows link to is kept the same way (a foreign key
  must still point somewhere). ``--mode anonymize`` keeps every row so.
- A journal (``MAP.journal/<subject hash>.json``) holds the request and which stores are done:
  killed at any point, the same command finishes the job (each store's step is atomic, and
  a store's step recomputes what is left, so a re-run is idempotent).
- Verified: afterwards ``retrieve`` runs again; ``Erasure.verified`` only when it finds nothing.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import sqlalchemy as sa

from veil.exceptions import InputError, ParameterError
from veil.io import atomic_open
from veil.rights import _sql
from veil.rights._files import subject_rows, units
from veil.rights._map import DataMap, Store, children_first
from veil.rights.retrieve import retrieve, retrieve_sql

MODES = ("delete", "anonymize")


@dataclass(frozen=True)
class Erasure:
    """What an erasure did, and whether retrieve then found nothing."""

    subject: str  # the subject's keyed hash
    mode: str
    dry_run: bool
    removed: dict[str, int] = field(default_factory=dict)  # "store.table" -> rows
    anonymized: dict[str, int] = field(default_factory=dict)  # kept, identifiers replaced
    left: dict[str, int] = field(default_factory=dict)  # what retrieve still finds
    resumed: bool = False

    @property
    def verified(self) -> bool:
        """Retrieve found nothing afterwards (never true for a dry run)."""
        return not self.dry_run and not any(self.left.values())

    def to_dict(self) -> dict[str, Any]:
        """For ``--format json`` and the audit log."""
        return {"subject": self.subject, "mode": self.mode, "dry_run": self.dry_run,
                "removed": self.removed, "anonymized": self.anonymized, "left": self.left,
                "verified": self.verified, "resumed": self.resumed}  # fmt: skip


def parse_age(text: str) -> pd.DateOffset:
    """``"10 months"``, ``"5 years"``, ``"30 days"`` as an offset to subtract from a date."""
    number, _, unit = text.strip().partition(" ")
    unit = unit.rstrip("s") + "s"
    if unit not in ("days", "months", "years") or not number.isdigit():
        raise ParameterError(f"a retention age must read 'N days|months|years', got {text!r}")
    return pd.DateOffset(**{unit: int(number)})  # type: ignore[arg-type]


def _held(data_map: DataMap, store: Store, table: str, rows: list[dict[str, Any]],
          as_of: pd.Timestamp) -> list[bool]:  # fmt: skip
    """Which rows a legal hold keeps."""
    spec = store.tables[table]
    rule = data_map.retention.get(spec.retention or "")
    if rule is None or rule.hold is None:
        return [False] * len(rows)
    if spec.date_column is None:
        return [True] * len(rows)  # held with no date to count from: kept
    limit = as_of - parse_age(rule.hold)
    return [pd.isna(r.get(spec.date_column)) or pd.Timestamp(r[spec.date_column]) > limit
            for r in rows]  # fmt: skip


class Journal:
    """The erasure's progress on disk, written atomically after every store."""

    def __init__(self, folder: Path, subject: str, mode: str) -> None:
        self.path = folder / f"{subject}.json"
        self.resumed = self.path.exists()
        if self.resumed:
            self.state = json.loads(self.path.read_text(encoding="utf-8"))
        else:
            self.state = {"subject": subject, "mode": mode, "stores": {}, "removed": {},
                          "anonymized": {},
                          "started": datetime.now(UTC).isoformat(timespec="seconds")}  # fmt: skip

    def done(self, store: str) -> bool:
        """Whether ``store`` was finished by an earlier run of this request."""
        return bool(self.state["stores"].get(store) == "done")

    def record(self, store: str, removed: dict[str, int], anonymized: dict[str, int]) -> None:
        """Mark ``store`` done, with what its step removed and kept."""
        self.state["stores"][store] = "done"
        for target, counts in (("removed", removed), ("anonymized", anonymized)):
            for table, n in counts.items():
                self.state[target][table] = self.state[target].get(table, 0) + n
        self.save()

    def save(self) -> None:
        """Write the journal (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(self.path) as handle:
            handle.write(json.dumps(self.state, indent=1))

    def close(self) -> None:
        """The request is done and verified: the journal goes."""
        self.path.unlink(missing_ok=True)


def erase(data_map: DataMap, subject: dict[str, str], *, subject_id: str, journal: Path,
          mode: str = "delete", dry_run: bool = False,
          as_of: pd.Timestamp | None = None) -> Erasure:  # fmt: skip
    """Erase ``subject`` from every store (see the module's doc). ``subject_id`` is the
    subject's keyed hash (the journal's name); ``journal`` the journal folder."""
    if mode not in MODES:
        raise ParameterError(f"--mode must be one of {MODES}, got {mode!r}")
    now = as_of if as_of is not None else pd.Timestamp.now()
    for name, store in data_map.stores.items():
        if store.read_only:
            raise InputError(f"store {name!r} is read-only in the map: nothing was erased; "
                             "erase there by hand or make it writable")  # fmt: skip
    if dry_run:
        plan = retrieve(data_map, subject)
        removed: dict[str, int] = {}
        anonymized: dict[str, int] = {}
        for name, tables in plan.stores.items():
            store = data_map.stores[name]
            for table, rows in tables.items():
                keep = _keeps(data_map, store, name, table, rows, now, mode, plan.stores[name])
                if sum(keep):
                    anonymized[f"{name}.{table}"] = sum(keep)
                if len(rows) - sum(keep):
                    removed[f"{name}.{table}"] = len(rows) - sum(keep)
        return Erasure(subject_id, mode, True, removed, anonymized, dict(plan.counts))
    log = Journal(journal, subject_id, mode)
    log.save()
    for name, store in data_map.stores.items():
        if log.done(name):
            continue
        try:
            if store.kind == "sql":
                removed, anonymized = erase_sql(data_map, name, store, subject, now, mode)
            else:
                removed, anonymized = _erase_files(data_map, name, store, subject, now, mode)
        except InputError as err:
            finished = [s for s in data_map.stores if log.done(s)]
            raise InputError(
                f"{err}; stores done: {', '.join(finished) or 'none'}; the journal {log.path} "
                "keeps the request: run the same command again"
            ) from err
        log.record(name, removed, anonymized)
    left = retrieve(data_map, subject)
    result = Erasure(subject_id, mode, False, dict(log.state["removed"]),
                     dict(log.state["anonymized"]), dict(left.counts), log.resumed)  # fmt: skip
    if result.verified:
        log.close()
    return result


Rows = list[dict[str, Any]]
Counts = tuple[dict[str, int], dict[str, int]]


def erase_many(data_map: DataMap, key: str, values: list[str], *, subject_id: str,
               journal: Path, mode: str = "delete",
               as_of: pd.Timestamp | None = None) -> Erasure:  # fmt: skip
    """Erase a batch of subjects by one key, set-based: each SQL store finds all their rows
    with ``IN`` queries and deletes them in one transaction (a retention sweep or a bulk
    request); files and objects are handled subject by subject. ``subject_id``: the batch's
    keyed hash (its journal's name)."""
    if key not in data_map.subject_keys:
        raise InputError(f"subject key {key!r} is not in the map")
    now = as_of if as_of is not None else pd.Timestamp.now()
    log = Journal(journal, subject_id, mode)
    log.save()
    for name, store in data_map.stores.items():
        if log.done(name):
            continue
        if store.kind == "sql":
            found = retrieve_sql(name, store, seed=_by_values(store, key, values))
            removed, anonymized = erase_sql(data_map, name, store, {}, now, mode, found=found)
        else:
            removed, anonymized = {}, {}
            for value in values:
                gone, kept = _erase_files(data_map, name, store, {key: value}, now, mode)
                for target, counts in ((removed, gone), (anonymized, kept)):
                    for table, n in counts.items():
                        target[table] = target.get(table, 0) + n
        log.record(name, removed, anonymized)
    left: dict[str, int] = {}
    for name, store in data_map.stores.items():
        if store.kind == "sql":
            again = retrieve_sql(name, store, seed=_by_values(store, key, values))
            left.update({f"{name}.{t}": len(r) for t, r in again.items() if r})
    result = Erasure(subject_id, mode, False, dict(log.state["removed"]),
                     dict(log.state["anonymized"]), left, log.resumed)  # fmt: skip
    if result.verified:
        log.close()
    return result


def _by_values(store: Store, key: str, values: list[str]) -> Any:
    """The seed: rows holding any of ``values`` in the key's column."""

    def seed(connection: sa.Connection, table_name: str, table: sa.Table) -> Rows:
        column = store.tables[table_name].subject_keys.get(key)
        if column is None:
            return []
        return _sql.fetch(connection, table, column, values,
                          where=f"table {table_name!r}")  # fmt: skip

    return seed


def _keeps(data_map: DataMap, store: Store, name: str, table: str, rows: Rows,
           now: pd.Timestamp, mode: str, found: dict[str, Rows]) -> list[bool]:  # fmt: skip
    """Which of a table's rows are kept (anonymized) rather than deleted."""
    if mode == "anonymize":
        return [True] * len(rows)
    keep = _held(data_map, store, table, rows, now)
    if store.kind != "sql":
        return keep
    # a row that a kept row of another table links to is kept too (its key must resolve)
    for child, spec in store.tables.items():
        for column, target in spec.links.items():
            parent, parent_column = target.split(".")
            if parent != table or child == table:
                continue
            child_rows = found.get(child, [])
            kept_children = [r for r, k in zip(child_rows, _keeps(data_map, store, name, child,
                             child_rows, now, mode, found), strict=True) if k]  # fmt: skip
            pointed = {r[column] for r in kept_children}
            keep = [k or r[parent_column] in pointed for k, r in zip(keep, rows, strict=True)]
    return keep


def _token() -> str:
    return f"erased-{secrets.token_hex(8)}"


def _identifying(table: sa.Table, spec_columns: set[str], link_columns: set[str]) -> list[str]:
    """The columns to replace in a kept row: the subject keys and what veil's scan reads as
    direct identifiers or quasi-identifiers in text, never a key other rows link by."""
    keys = {c.name for c in table.primary_key.columns} | link_columns
    return [c.name for c in table.columns if c.name in spec_columns and c.name not in keys]


def erase_sql(data_map: DataMap, name: str, store: Store, subject: dict[str, str],
               now: pd.Timestamp, mode: str, *,
               found: dict[str, Rows] | None = None) -> Counts:  # fmt: skip
    """Delete (or keep, anonymized) the subject's rows of one SQL store, or the rows
    ``found`` (retention's aged rows and what links to them)."""
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
                keep = _keeps(data_map, store, name, table_name, rows, now, mode, found)
                doomed = [r for r, k in zip(rows, keep, strict=True) if not k]
                kept = [r for r, k in zip(rows, keep, strict=True) if k]
                identity = [c.name for c in table.primary_key.columns]
                if not identity:
                    raise InputError(f"store {name!r}, table {table_name!r} has no primary key: "
                                     "veil erases rows by their key")  # fmt: skip
                for start in range(0, len(doomed), _sql.CHUNK):
                    chunk = doomed[start : start + _sql.CHUNK]
                    condition = sa.tuple_(*(table.c[c] for c in identity)).in_(
                        [tuple(r[c] for c in identity) for r in chunk]
                    )
                    connection.execute(sa.delete(table).where(condition))
                if doomed:
                    removed[f"{name}.{table_name}"] = len(doomed)
                spec = store.tables[table_name]
                columns = (_identifying(table, _scan_identifying(connection, table, spec),
                                        set(spec.links) | (targets & set(table.columns.keys())))
                           if kept else [])  # fmt: skip
                for row in kept if columns else []:  # nothing identifying: kept as it is
                    values = {c: _replacement(table.c[c]) for c in columns}
                    where = sa.and_(*(table.c[c] == row[c] for c in identity))
                    connection.execute(sa.update(table).where(where).values(values))
                if kept:
                    anonymized[f"{name}.{table_name}"] = len(kept)
    except sa.exc.SQLAlchemyError as err:
        raise InputError(f"store {name!r} refused the erasure (nothing of it was changed): "
                         f"{_sql.first_line(err)}") from err  # fmt: skip
    finally:
        engine.dispose()
    return removed, anonymized


def _scan_identifying(connection: sa.Connection, table: sa.Table, spec: Any) -> set[str]:
    """Subject-key columns, and the columns veil's scan reads as identifying in a sample of
    the table (names, phones, e-mails, addresses, birth dates, ID numbers)."""
    out = set(spec.subject_keys.values())
    sample = [dict(r._mapping) for r in connection.execute(sa.select(table).limit(1_000))]
    if sample:
        from veil.scan import scan
        from veil.schema import ColumnRole

        frame = pd.DataFrame(sample)
        for found in scan(frame).columns:
            if found.role is ColumnRole.IDENTIFIER or (
                found.role is ColumnRole.QUASI_IDENTIFIER and found.entity in
                {"PERSON", "PHONE_NUMBER", "EMAIL", "ADDRESS", "DATE_OF_BIRTH"}
            ):  # fmt: skip
                out.add(found.name)
    return out


def _replacement(column: sa.Column[Any]) -> Any:
    """A random value that says nothing and breaks no constraint."""
    try:
        kind = column.type.python_type
    except NotImplementedError:
        kind = str
    if kind is str:
        length = getattr(column.type, "length", None)
        token = _token()
        return token[:length] if length else token
    if column.nullable:
        return None
    if kind is int:
        return -secrets.randbelow(2**31)
    raise InputError(
        f"column {column.name!r} ({kind.__name__}, NOT NULL) of a kept row cannot be "
        "anonymized: make it nullable or leave it out of the subject keys"
    )


# ---------------------------------------------------------------------------- files, S3
def _split_records(text: str) -> tuple[str, list[str]]:
    """A CSV's header line and each record's raw text (quoted newlines kept)."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return "", []
    reader = csv.reader(io.StringIO(text))
    next(reader, None)
    records, start = [], reader.line_num
    for _ in reader:
        records.append("".join(lines[start : reader.line_num]))
        start = reader.line_num
    return "".join(lines[: 1 if lines else 0]), records


def _erase_text(data: bytes, where: str, columns: dict[str, str], subject: dict[str, str],
                held: bool) -> tuple[bytes, int, int]:  # fmt: skip
    """The CSV without the subject's records (or with their identifying fields replaced when
    held); everyone else's bytes unchanged."""
    text = data.decode("utf-8")
    header, records = _split_records(text)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if len(frame) != len(records):
        raise InputError(f"{where}: its rows could not be told apart (blank lines?): not erased")
    hit = subject_rows(frame, columns, subject, where=where)
    if not hit.any():
        return data, 0, 0
    out = [header]
    for i, record in enumerate(records):
        if not hit.iloc[i]:
            out.append(record)
        elif held:
            row = frame.iloc[i].copy()
            for column in columns.values():
                row[column] = _token()
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator=record[len(record.rstrip("\r\n")):] or "\n") \
                .writerow(row.tolist())  # fmt: skip
            out.append(buffer.getvalue())
    return "".join(out).encode("utf-8"), int(hit.sum()) * (not held), int(hit.sum()) * held


def _erase_files(data_map: DataMap, name: str, store: Store, subject: dict[str, str],
                 now: pd.Timestamp, mode: str) -> Counts:  # fmt: skip
    """Rewrite each file or object of the store that holds the subject (held rows kept)."""
    removed: dict[str, int] = {}
    anonymized: dict[str, int] = {}
    for pattern, spec in store.tables.items():
        rule = data_map.retention.get(spec.retention or "")
        held = mode == "anonymize" or (rule is not None and rule.hold is not None)
        label = f"{name}.{pattern}"
        for unit in units(name, store, pattern):
            rewrite = _erase_parquet if unit.label.lower().endswith(".parquet") else _erase_text
            new, gone, kept = rewrite(unit.read(), unit.where(name), spec.subject_keys, subject,
                                      held)  # fmt: skip
            if gone or kept:
                unit.write(new)
            for target, count in ((removed, gone), (anonymized, kept)):
                if count:
                    target[label] = target.get(label, 0) + count
    return removed, anonymized


def _erase_parquet(data: bytes, where: str, columns: dict[str, str], subject: dict[str, str],
                   held: bool) -> tuple[bytes, int, int]:  # fmt: skip
    frame = pd.read_parquet(io.BytesIO(data))
    hit = subject_rows(frame.astype("string"), columns, subject, where=where)
    if not hit.any():
        return data, 0, 0
    if held:
        for column in columns.values():
            frame[column] = frame[column].astype(object)
            frame.loc[hit, column] = [_token() for _ in range(int(hit.sum()))]
        out = frame
    else:
        out = frame[~hit]
    buffer = io.BytesIO()
    out.to_parquet(buffer, index=False)
    return buffer.getvalue(), int(hit.sum()) * (not held), int(hit.sum()) * held


__all__ = ["MODES", "Erasure", "erase", "erase_many"]
