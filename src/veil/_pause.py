"""Named points a test can stop veil at, to signal it exactly there.

With ``VEIL_PAUSE_AT=NAME`` in its environment, a veil process that reaches the point ``NAME``
stops itself (SIGSTOP); the test, waiting for the stop (``waitpid`` with ``WUNTRACED``: no
polling, no timing), then sends what it tests (SIGKILL, or SIGTERM and SIGCONT). Unset, a
point costs one environment look-up. The points:

- ``outputs written``: every file of a run staged in full, none moved into place yet;
- ``journal saved``: a rights request's journal written (the first time: the request began);
- ``journal step done``: a step of a rights request recorded done in its journal.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "point"]

ENV = "VEIL_PAUSE_AT"


def point(name: str) -> None:
    """Stop this process here when ``VEIL_PAUSE_AT`` names this point."""
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGSTOP)
