"""The second process a copula mixture fits its groups in: veil's own loky executor of one
worker, kept for the next fit (its worker leaves after ``IDLE_SECONDS`` idle and comes back on
the next fit).

loky, unlike multiprocessing's spawn and forkserver, never runs the caller's ``__main__``
again: a script that fits at its top level, without a main guard, broke multiprocessing's pool
(tested). The executor is veil's own, not joblib's reusable one: that one is shared with the
caller's ``joblib.Parallel``, and resizing it to one worker while the caller's work ran broke
that work (tested).

This module imports nothing heavy, so that ``veil synth`` can start the worker before this
process has imported pandas and scipy: the worker's own imports (0.9 s) then overlap them.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

#: seconds the second process's worker waits for the next fit before it leaves
IDLE_SECONDS = 300
#: what the worker imports as soon as it starts (the copula's fits and their scipy)
WARM = "veil.synth._copula"
_EXECUTOR: Any = None
_EXECUTOR_LOCK = threading.Lock()


def executor() -> Any:
    """The running executor, started (and its worker sent to import ``WARM``) if it is not;
    None if it cannot start."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        for _ in range(2):  # a pool whose worker was killed is replaced once
            if _EXECUTOR is None:
                from joblib.externals.loky.process_executor import ProcessPoolExecutor

                _EXECUTOR = ProcessPoolExecutor(max_workers=1, timeout=IDLE_SECONDS)
            try:
                _EXECUTOR.submit(_warm, WARM)
                return _EXECUTOR
            except RuntimeError:  # broken (a BrokenProcessPool) or shut down
                _EXECUTOR = None
    return None


def _warm(module: str) -> None:
    """The worker's first task: import ``module`` there."""
    importlib.import_module(module)
