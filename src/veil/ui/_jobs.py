"""Work longer than a click (the scan, the search, the export) runs in a thread of its own; the
page polls its progress (the messages veil's steps report) and moves on when it is done."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from veil.exceptions import ParameterError, one_line

__all__ = ["Job", "Jobs"]


@dataclass
class Job:
    """One piece of work: what it has said, whether it ended, and how."""

    title: str
    after: str  # the page to show once it is done
    messages: list[str] = field(default_factory=list)
    done: bool = False
    error: str | None = None

    def say(self, message: str) -> None:
        """Told of each step (veil's progress callback)."""
        self.messages.append(str(message))
        del self.messages[:-50]

    def to_dict(self) -> dict[str, Any]:
        """The job as the page polls it."""
        return {
            "title": self.title,
            "done": self.done,
            "error": self.error,
            "message": self.messages[-1] if self.messages else "starting",
            "steps": len(self.messages),
            "after": self.after,
        }


class Jobs:
    """The jobs of this server, by a random id."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def start(self, title: str, after: str, work: Callable[[Callable[[str], None]], Any]) -> str:
        """Run ``work(progress)`` in a thread; the job's id. One job at a time: they all read
        and write the one workspace, so a second waits for the first to end."""
        running = next((j for j in self._jobs.values() if not j.done), None)
        if running is not None:
            raise ParameterError(f"the {running.title} is still running: wait for it to end")
        job = Job(title, after)
        ident = secrets.token_urlsafe(12)
        self._jobs[ident] = job

        def run() -> None:
            try:
                work(job.say)
            except Exception as err:  # any failure is shown on the page, in one line
                job.error = one_line(str(err)) or type(err).__name__
            finally:
                job.done = True

        threading.Thread(target=run, name=f"veil-ui-{title}", daemon=True).start()
        return ident

    def get(self, ident: str) -> Job | None:
        """The job ``ident``, if this server started it."""
        return self._jobs.get(ident)
