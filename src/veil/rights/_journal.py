"""A long request's progress on disk, so that a killed run finishes when run again.

Each step (a store of an erasure, a class's store or a file of a retention run) is atomic on
its own (a transaction, a rename, a PUT); the journal says which are done, keeps what a step
must know to resume (the archive's state before it was written), and adds up the counts. It
is written through a temporary file and a rename after every step, and removed when the
request is finished and verified. It never holds a subject's raw key, only its keyed hash.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veil import _pause as pause
from veil.io import atomic_open


class Journal:
    """One request's journal, ``FOLDER/NAME.json``."""

    def __init__(self, folder: Path, name: str, **request: Any) -> None:
        self.path = folder / f"{name}.json"
        self.resumed = self.path.exists()
        if self.resumed:
            self.state: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        else:
            self.state = {
                **request,
                "steps": {},
                "counts": {},
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
            }

    def done(self, step: str) -> bool:
        """Whether ``step`` was finished by an earlier run of this request."""
        return bool(self.state["steps"].get(step) == "done")

    def noted(self, step: str) -> dict[str, Any]:
        """What was noted for an unfinished ``step`` (empty when nothing was)."""
        value = self.state["steps"].get(step)
        return dict(value) if isinstance(value, dict) else {}

    def note(self, step: str, **info: Any) -> None:
        """Keep ``info`` for ``step`` before it changes anything (written at once)."""
        self.state["steps"][step] = {**self.noted(step), **info}
        self.save()

    def noter(self, step: str) -> Callable[[dict[str, dict[str, int]]], None]:
        """A callback that notes a step's counts as its plan (inside its transaction)."""
        return lambda counts: self.note(step, plan=counts)

    def record(self, step: str, **counts: dict[str, int]) -> None:
        """Mark ``step`` done and add its counts (``removed={"store.table": n}``, ...)."""
        self.state["steps"][step] = "done"
        for kind, table_counts in counts.items():
            totals = self.state["counts"].setdefault(kind, {})
            for table, n in table_counts.items():
                totals[table] = totals.get(table, 0) + n
        self.save()
        pause.point("journal step done")

    def finish(self, step: str, **counts: dict[str, int]) -> None:
        """Mark ``step`` done with ``counts``; when this run found nothing left to do (a killed
        run changed the store after noting its plan), with the counts that run noted."""
        if not any(counts.values()):
            counts = self.noted(step).get("plan", counts)
        self.record(step, **counts)

    def counts(self, kind: str) -> dict[str, int]:
        """The counts of ``kind`` over every step done."""
        return dict(self.state["counts"].get(kind, {}))

    def save(self) -> None:
        """Write the journal (temporary file, then rename). Another request finishing may
        remove the shared folder between the two steps (it goes when empty): made again."""
        from veil.exceptions import OutputError

        for attempt in range(3):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                with atomic_open(self.path) as handle:
                    handle.write(json.dumps(self.state, indent=1))
                pause.point("journal saved")
                return
            except OutputError:
                if attempt == 2 or self.path.parent.is_dir():
                    raise

    def close(self) -> None:
        """The request is done (and verified): the journal goes, and its folder when empty."""
        self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # other requests' journals still in it
            self.path.parent.rmdir()
