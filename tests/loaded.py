"""Which modules a ``veil`` command loads: the command run in a process of its own, its exit
code checked, then the names asked for that are in ``sys.modules``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: runs ``veil ARGS`` as ``python -m veil`` would, then prints the names loaded (last line)
_PROBE = (
    "import sys, runpy; names = sys.argv[1].split(','); sys.argv = ['veil', *sys.argv[2:]]\n"
    "try:\n    runpy.run_module('veil', run_name='__main__')\n"
    "except SystemExit as done:\n    assert not done.code, done.code\n"
    "print('loaded:' + ','.join(sorted(m for m in names if m in sys.modules)))"
)


def loaded_by(
    argv: Sequence[object],
    names: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[list[str], str]:
    """The ``names`` that ``veil ARGV`` loaded, and what it printed before them."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(names), *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.rstrip("\n").split("\n")
    assert last.startswith("loaded:"), done.stdout
    return [m for m in last.removeprefix("loaded:").split(",") if m], "\n".join(printed)
