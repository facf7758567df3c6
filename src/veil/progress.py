"""Progress a person can see: what veil is doing, how much of it is done, and how long is left.

Long work reports *steps* ("pseudonymize National_ID") and the *rows* each step processed. The
command line shows them as a bar with rows done / total, rate and ETA on a terminal, and as one
line per finished step elsewhere (a CI log, a pipe), so pipelines see progress too. Library
functions take any ``progress`` callable (``progress("a step")``) and report rows through
``as_progress(progress)``, which adds them when the callable is a ``Progress``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Any

__all__ = ["LineProgress", "Progress", "RichProgress", "as_progress"]


class Progress:
    """Receives steps and rows; this base class ignores them (no output)."""

    def __call__(self, description: str) -> None:
        self.step(description)

    def step(self, description: str) -> None:
        """A new step starts (the previous one is finished)."""

    def expect(self, rows: int) -> None:
        """``rows`` more rows of work are ahead (the total the ETA is measured against)."""

    def advance(self, rows: int) -> None:
        """``rows`` rows of the current step are done."""

    def close(self, finished: bool = True) -> None:
        """The work is over: finish the last step (``finished=False``: it failed)."""


class _Callback(Progress):
    """A plain ``progress(description)`` callable, told steps only."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self._callback = callback

    def step(self, description: str) -> None:
        self._callback(description)


def as_progress(progress: Callable[[str], None] | Progress | None) -> Progress:
    """A ``Progress`` for any ``progress`` argument a library function takes."""
    if progress is None:
        return Progress()
    if isinstance(progress, Progress):
        return progress
    return _Callback(progress)


class LineProgress(Progress):
    """One line per finished step, with its rows and rate: for logs and pipes (no control
    characters, nothing rewritten)."""

    def __init__(self, stream: IO[str], prefix: str = "veil: ") -> None:
        self._stream = stream
        self._prefix = prefix
        self._current: str | None = None
        self._started = 0.0
        self._rows = 0

    def step(self, description: str) -> None:
        """Print the step that just finished, with its time, and start the next."""
        self._finish()
        self._current, self._started, self._rows = description, time.perf_counter(), 0

    def advance(self, rows: int) -> None:
        """Count rows done (shown when the step ends)."""
        self._rows += rows

    def close(self, finished: bool = True) -> None:
        """Print the last step's line (when it finished)."""
        if finished:
            self._finish()
        self._current = None

    def _finish(self) -> None:
        if self._current is None:
            return
        seconds = time.perf_counter() - self._started
        done = f"{self._prefix}{self._current}: done in {seconds:.1f} s"
        if self._rows:
            rate = self._rows / seconds if seconds > 0 else float("inf")
            done += f" ({self._rows:,} rows, {_rate(rate)})"
        print(done, file=self._stream, flush=True)
        self._current = None


def _rate(rows_per_second: float) -> str:
    for limit, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rows_per_second >= limit:
            return f"{rows_per_second / limit:.1f}{unit} rows/s"
    return f"{rows_per_second:.0f} rows/s"


class RichProgress(Progress):
    """A live bar on a terminal: the step, rows done / total, rate, elapsed and ETA."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            ProgressColumn,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar
        from rich.text import Text

        class Rows(ProgressColumn):  # "1,200,000/5,000,000 rows"
            def render(self, task: Any) -> Text:
                done = f"{int(task.completed):,}"
                total = f"/{int(task.total):,}" if task.total else ""
                return Text(f"{done}{total} rows")

        self._bar = Bar(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TaskProgressColumn(),
            Rows(),
            TextColumn("{task.fields[rate]}", markup=False),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task("starting", total=None, rate="")
        self._bar.start()
        self._started = time.perf_counter()
        self._done = 0

    def step(self, description: str) -> None:
        """Start a new task on the live display."""
        self._bar.update(self._task, description=description)

    def expect(self, rows: int) -> None:
        """How many rows the current step will take (the bar's total)."""
        total = self._bar.tasks[0].total or 0
        self._bar.update(self._task, total=total + rows)

    def advance(self, rows: int) -> None:
        """Move the current bar by ``rows``."""
        self._done += rows
        seconds = time.perf_counter() - self._started
        rate = _rate(self._done / seconds) if seconds > 0 else ""
        self._bar.update(self._task, advance=rows, rate=rate)

    def close(self, finished: bool = True) -> None:
        """Stop the live display, marking the last task finished or not."""
        self._bar.stop()
