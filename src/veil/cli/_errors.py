"""Exit codes and what the command prints when it stops: one line per error, the signal that
ended a run, warnings as one line.

Exit codes: 0 success; 1 the data fails the check asked for; 2 usage, input or environment
error (one line on stderr, ``--debug`` adds the traceback); 3 an internal error (a bug:
please report it); 128 + N when signal N (Ctrl-C, SIGTERM, SIGHUP) ended the run.
"""

from __future__ import annotations

import contextlib
from typing import Any

from veil.cli._common import err
from veil.exceptions import one_line


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings (a leak, a collision) as one line a person reads, not a source excerpt."""
    err.print(f"veil: warning: {one_line(str(message))}")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwound like Ctrl-C, so every partial output is removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOPPED_BY: list[int] = []  # the signal that stopped the run (typer hides the exception)


def _terminate(signum: int, _frame: Any) -> None:
    _STOPPED_BY.append(signum)
    raise Terminated(signum)


def _handle_termination() -> None:
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) in (
            signal.SIG_DFL,
            signal.default_int_handler,
            None,
        ):
            with contextlib.suppress(ValueError):  # not the main thread: leave it be
                signal.signal(number, _terminate)


def _os_error(e: OSError) -> str:
    """An operating-system error as what failed, where, and what to do (not a veil bug)."""
    from veil.io import explain_os_error

    where = f"{e.filename}: " if e.filename else ""
    return where + explain_os_error(e)


def _stopped(error: BaseException | None = None) -> int | None:
    """For a run stopped by Ctrl-C, SIGTERM or SIGHUP (which click and typer turn into
    Abort or an exit code): say so, and return 128 + the signal; else None."""
    import signal

    seen = error
    while seen is not None and not _STOPPED_BY:
        if isinstance(seen, KeyboardInterrupt):
            _STOPPED_BY.append(signal.SIGINT)
        seen = seen.__cause__ or seen.__context__
    if not _STOPPED_BY:
        return None
    signum = _STOPPED_BY[0]
    what = "interrupted" if signum == signal.SIGINT else "terminated"
    err.print(f"veil: {what}; no partial output was left")
    return 128 + signum


def _fail(message: str, code: int, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    err.print(message)
    return code
