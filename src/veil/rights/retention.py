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
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil._html import Shown
from veil.exceptions import InputError
from veil.rights import _lock
from veil.rights._journal import Journal
from veil.rights._map import DataMap
from veil.rights.stores import kind_of

if TYPE_CHECKING:  # pandas loads when retention runs, not when veil.rights is imported
    pass

OUTCOMES = ("deleted", "archived", "kept")


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


Outcomes = dict[str, dict[str, int]]


def apply_retention(
    data_map: DataMap, *, journal: Path, as_of: datetime | None = None, dry_run: bool = False
) -> RetentionResult:
    """Apply every class with a ``keep`` to the tables, files and objects that name it.
    ``journal``: the folder of the run's journal (an interrupted run resumes from it, with
    the date it started with)."""
    import pandas as pd

    from veil.rights.erase import parse_age, preflight

    preflight(data_map)  # what no re-run could fix fails before the journal exists
    log = None if dry_run else Journal(journal, "retention")
    now = pd.Timestamp(as_of) if as_of is not None else pd.Timestamp.now()
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
    planned: Outcomes = {kind: {} for kind in OUTCOMES}
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
            for kind in OUTCOMES:
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


def add_outcomes(counts: Outcomes, more: Outcomes) -> None:
    """Add ``more`` (rows per table, per outcome) into ``counts``."""
    for kind, tables in more.items():
        for table, n in tables.items():
            counts[kind][table] = counts[kind].get(table, 0) + n
