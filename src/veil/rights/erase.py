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

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil._html import Shown
from veil.exceptions import InputError, ParameterError
from veil.rights import _lock
from veil.rights._journal import Journal
from veil.rights._map import DataMap, Store
from veil.rights._subject import Subject, values_of
from veil.rights.retrieve import closure, retrieve, retrieve_one
from veil.rights.stores import kind_of

if TYPE_CHECKING:
    import pandas as pd

MODES = ("delete", "anonymize")


@dataclass(frozen=True)
class Erasure(Shown):
    """What an erasure did, and whether retrieve then found nothing."""

    subject: str  # the subject's keyed hash
    mode: str
    dry_run: bool
    removed: dict[str, int] = field(default_factory=dict)  # "store.table" -> rows
    anonymized: dict[str, int] = field(default_factory=dict)  # kept, identifiers replaced
    left: dict[str, int] = field(default_factory=dict)  # what retrieve still finds
    resumed: bool = False
    keys: dict[str, list[str]] = field(default_factory=dict)  # every key followed (not logged)

    @property
    def verified(self) -> bool:
        """Retrieve found nothing afterwards (never true for a dry run)."""
        return not self.dry_run and not any(self.left.values())

    def to_dict(self) -> dict[str, Any]:
        """For ``--format json`` and the audit log."""
        return {
            "subject": self.subject,
            "mode": self.mode,
            "dry_run": self.dry_run,
            "removed": self.removed,
            "anonymized": self.anonymized,
            "left": self.left,
            "verified": self.verified,
            "resumed": self.resumed,
            "keys": {k: len(v) for k, v in self.keys.items()},
        }


def parse_age(text: str) -> pd.DateOffset:
    """``"10 months"``, ``"5 years"``, ``"30 days"`` as an offset to subtract from a date."""
    import pandas as pd

    number, _, unit = text.strip().partition(" ")
    unit = unit.rstrip("s") + "s"
    if unit not in ("days", "months", "years") or not number.isdigit():
        raise ParameterError(f"a retention age must read 'N days|months|years', got {text!r}")
    return pd.DateOffset(**{unit: int(number)})  # type: ignore[arg-type]


def _held(
    data_map: DataMap, store: Store, table: str, rows: list[dict[str, Any]], as_of: datetime
) -> list[bool]:
    """Which rows a legal hold keeps (pandas reads their dates: imported only here, where a
    hold applies)."""
    spec = store.tables[table]
    rule = data_map.retention.get(spec.retention or "")
    if rule is None or rule.hold is None:
        return [False] * len(rows)
    if spec.date_column is None:
        return [True] * len(rows)  # held with no date to count from: kept
    import pandas as pd

    limit = pd.Timestamp(as_of) - parse_age(rule.hold)
    dates = pd.to_datetime(
        pd.Series([r.get(spec.date_column) for r in rows], dtype=object),
        errors="coerce",
        format="mixed",
    )
    return [bool(pd.isna(d) or d > limit) for d in dates]  # no date that reads: held


def erase(
    data_map: DataMap,
    subject: dict[str, str],
    *,
    subject_id: str,
    journal: Path,
    mode: str = "delete",
    dry_run: bool = False,
    as_of: datetime | None = None,
    key: bytes | None = None,
) -> Erasure:
    """Erase ``subject`` from every store (see the module's doc). ``subject_id`` is the
    subject's keyed hash (the journal's name); ``journal`` the journal folder; ``key`` the
    map's key, which seals the keys followed in the journal (so a killed run finishes under
    all of them)."""
    if mode not in MODES:
        raise ParameterError(f"--mode must be one of {MODES}, got {mode!r}")
    now = as_of if as_of is not None else datetime.now()
    for name, store in data_map.stores.items():
        if store.read_only:
            raise InputError(
                f"store {name!r} is read-only in the map: nothing was erased; "
                "erase there by hand or make it writable"
            )
    if dry_run:
        plan = retrieve(data_map, subject)
        removed: dict[str, int] = {}
        anonymized: dict[str, int] = {}
        for name, tables in plan.stores.items():
            store = data_map.stores[name]
            for table, rows in tables.items():
                keep = keeps(data_map, store, name, table, rows, now, mode, plan.stores[name])
                if sum(keep):
                    anonymized[f"{name}.{table}"] = sum(keep)
                if len(rows) - sum(keep):
                    removed[f"{name}.{table}"] = len(rows) - sum(keep)
        return Erasure(
            subject_id, mode, True, removed, anonymized, dict(plan.counts), keys=plan.keys
        )
    preflight(data_map)  # a store the map cannot be honoured on fails before any file
    with _lock.request(journal, subject_id):  # one request about this person at a time
        return _erase(
            data_map, subject, subject_id=subject_id, journal=journal, mode=mode, now=now, key=key
        )


def _cipher(key: bytes, subject_id: str, nonce: bytes) -> Any:
    import hashlib
    import hmac

    from Crypto.Cipher import AES

    sealing = hmac.new(key, f"veil journal keys {subject_id}".encode(), hashlib.sha256).digest()
    return AES.new(sealing, AES.MODE_GCM, nonce=nonce)


def _sealed(key: bytes, subject_id: str, keys: dict[str, set[str]]) -> str:
    """The keys followed, AES-GCM under a key derived from the map's key, as hex."""
    nonce = secrets.token_bytes(12)
    body = json.dumps({k: sorted(v) for k, v in keys.items()}).encode()
    sealed, tag = _cipher(key, subject_id, nonce).encrypt_and_digest(body)
    return (nonce + tag + sealed).hex()


def _opened(key: bytes | None, subject_id: str, text: Any) -> dict[str, list[str]]:
    """The keys an interrupted run followed (empty when it kept none)."""
    if not text or key is None:
        return {}
    raw = bytes.fromhex(str(text))
    try:
        body = _cipher(key, subject_id, raw[:12]).decrypt_and_verify(raw[28:], raw[12:28])
    except ValueError as err:
        raise InputError(
            "the journal's keys do not open with the map's key: it was made with "
            "another key, or edited"
        ) from err
    return {str(k): [str(x) for x in v] for k, v in json.loads(body).items()}


def _erase(
    data_map: DataMap,
    subject: Subject,
    *,
    subject_id: str,
    journal: Path,
    mode: str,
    now: datetime,
    key: bytes | None,
) -> Erasure:
    log = Journal(journal, subject_id, subject=subject_id, mode=mode)
    if log.resumed and log.state.get("mode") != mode:
        raise InputError(
            f"an interrupted erasure of this person with --mode "
            f"{log.state.get('mode')} is in {log.path}: finish it in that "
            "mode"
        )
    # the person under every key they are known by, followed before anything changes: once a
    # row is gone, the keys only it held cannot be found again, so the journal keeps them
    # (encrypted with the map's key: it never holds a raw key in clear)
    if not log.resumed:
        followed, _ = closure(data_map, subject)  # an error here: nothing changed, no journal
        if key is not None:
            log.state["keys"] = _sealed(key, subject_id, followed)
    else:
        saved = _opened(key, subject_id, log.state.get("keys"))
        start = {k: {*values_of(subject.get(k, [])), *saved.get(k, [])} for k in {*subject, *saved}}
        try:
            followed, _ = closure(data_map, start)
        except InputError as err:
            raise InputError(
                f"{err}; the journal {log.path} keeps the request: run the same command again"
            ) from err
    log.save()
    subject = followed
    # every store, also those an earlier run finished: each step finds what is left (nothing,
    # when it is done) and is verified before the journal calls it done. Files and objects
    # first: the keys they are found by mostly come from the databases, erased last
    left: dict[str, int] = {}
    for name, store in sorted(data_map.stores.items(), key=lambda i: kind_of(i[1]).erased_last):
        try:
            with _lock.store(name, store, journal):  # from the first read to the check
                kind = kind_of(store)
                removed, anonymized = kind.erase(data_map, name, store, subject, now, mode, log)
                # held rows were kept with the keys replaced: the keys no longer find them
                still = {t: len(r) for t, r in retrieve_one(name, store, subject).items()}
                left.update({f"{name}.{t}": n for t, n in still.items()})
                if sum(still.values()):
                    raise InputError(
                        f"store {name!r} still holds {sum(still.values())} rows "
                        "about this person after its rewrite"
                    )
                log.finish(name, removed=removed, anonymized=anonymized)
        except InputError as err:
            finished = [s for s in data_map.stores if log.done(s)]
            raise InputError(
                f"{err}; stores done: {', '.join(finished) or 'none'}; the journal {log.path} "
                "keeps the request: run the same command again"
            ) from err
    # every store was retrieved again under its lock with every key followed, and found
    # nothing (else the loop stopped): a retrieve of all of them now would repeat that
    result = Erasure(
        subject_id,
        mode,
        False,
        log.counts("removed"),
        log.counts("anonymized"),
        left,
        log.resumed,
        {k: sorted(v) for k, v in followed.items()},
    )
    if result.verified:
        log.close()
    return result


Rows = list[dict[str, Any]]
Counts = tuple[dict[str, int], dict[str, int]]


def preflight(data_map: DataMap) -> None:
    """Refuse, before a journal exists, what no re-run could fix: a files store's folder that
    is missing, or a file of it that is a link out of the folder."""
    for name, store in data_map.stores.items():
        kind_of(store).preflight(name, store)


def erase_many(
    data_map: DataMap,
    key: str,
    values: list[str],
    *,
    subject_id: str,
    journal: Path,
    mode: str = "delete",
    as_of: datetime | None = None,
) -> Erasure:
    """Erase a batch of subjects by one key, set-based: each SQL store finds all their rows
    with ``IN`` queries and deletes them in one transaction (a retention sweep or a bulk
    request); files and objects are handled subject by subject. ``subject_id``: the batch's
    keyed hash (its journal's name)."""
    if key not in data_map.subject_keys:
        raise InputError(f"subject key {key!r} is not in the map")
    now = as_of if as_of is not None else datetime.now()
    log = Journal(journal, subject_id, subject=subject_id, mode=mode)
    log.save()
    for name, store in data_map.stores.items():
        if log.done(name):
            continue
        removed, anonymized = kind_of(store).erase_many(
            data_map, name, store, key, values, now, mode
        )
        log.record(name, removed=removed, anonymized=anonymized)
    left: dict[str, int] = {}
    for name, store in data_map.stores.items():
        left.update(kind_of(store).left_many(name, store, key, values))
    result = Erasure(
        subject_id, mode, False, log.counts("removed"), log.counts("anonymized"), left, log.resumed
    )
    if result.verified:
        log.close()
    return result


# ---------------------------------------------------------------------------- files, S3
def keeps(
    data_map: DataMap,
    store: Store,
    name: str,
    table: str,
    rows: Rows,
    now: datetime,
    mode: str,
    found: dict[str, Rows],
) -> list[bool]:
    """Which of a table's rows are kept (anonymized) rather than deleted."""
    if mode == "anonymize":
        return [True] * len(rows)
    keep = _held(data_map, store, table, rows, now)
    if not kind_of(store).linked:
        return keep
    # a row that a kept row of another table links to is kept too (its key must resolve)
    for child, spec in store.tables.items():
        for column, target in spec.links.items():
            parent, parent_column = target.split(".")
            if parent != table or child == table:
                continue
            child_rows = found.get(child, [])
            kept_children = [
                r
                for r, k in zip(
                    child_rows,
                    keeps(data_map, store, name, child, child_rows, now, mode, found),
                    strict=True,
                )
                if k
            ]
            pointed = {r[column] for r in kept_children}
            keep = [k or r[parent_column] in pointed for k, r in zip(keep, rows, strict=True)]
    return keep


def identifying(frame: pd.DataFrame, keys: set[str]) -> set[str]:
    """The columns to replace in a kept row: the subject keys, and what veil's scan reads as
    identifying in (a sample of) the table: names, phones, e-mails, addresses, birth dates,
    ID numbers."""
    out = set(keys)
    if len(frame):
        from veil.scan import scan
        from veil.schema import ColumnRole

        for found in scan(frame.head(1_000)).columns:
            if found.entity == "RECORD_KEY" or (
                found.entity is None and _row_numbers(frame[found.name])
            ):
                continue  # a row's own number says nothing of a person: kept, as a key is
            if found.role is ColumnRole.IDENTIFIER or (
                found.role is ColumnRole.QUASI_IDENTIFIER
                and found.entity in {"PERSON", "PHONE_NUMBER", "EMAIL", "ADDRESS", "DATE_OF_BIRTH"}
            ):
                out.add(str(found.name))
    return out


def _row_numbers(values: pd.Series) -> bool:
    """Whether a column holds only whole numbers (a record's number, not a reference)."""
    text = values.astype(str).str.strip()
    return bool(len(text)) and bool(text.str.fullmatch(r"\d{1,9}").all())


def held_rows(
    data_map: DataMap, store: Store, table: str, frame: pd.DataFrame, now: datetime, mode: str
) -> pd.Series:
    """Which of a file's rows are kept (anonymized) rather than deleted."""
    import pandas as pd

    if mode == "anonymize":
        return pd.Series(True, index=frame.index)
    rows = [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    return pd.Series(_held(data_map, store, table, rows, now), index=frame.index, dtype=bool)


__all__ = ["MODES", "Erasure", "erase", "erase_many"]
