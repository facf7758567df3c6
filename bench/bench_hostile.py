"""Bounded work on hostile input: `veil anonymize` (whole process) of a 2-row CSV with one cell of
10 MB, beside the same table without it, measured in the same run (target: within twice the
time). Cells of letters, digits, separators and words; a free-text column is searched for names,
phones and e-mail addresses, which is where a quadratic pattern would show. Then the same cells
redacted (a policy whose step is ``redact``: names, numbers, places and dates found and
replaced), with cells of repeated names and place names too, where overlapping finds would show.

    python bench/bench_hostile.py [--megabytes 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHAPES = {
    "none (the floor)": "x",
    "letters": "a",
    "digits": "1",
    "separators": "a-",
    "words": "ab1 -.@",
}
#: Cells only a redaction's search meets: every word a find, each overlapping the next.
REDACTED = {
    **SHAPES,
    "names": "Jane Wanjiku ",
    "place names": "Nairobi ",
    "dates and phones": "2024-01-05 0712345678 ",
}
REDACT_POLICY = """columns:
  id: {steps: [drop: {}]}
  age: {role: insensitive}
  note: {role: insensitive, steps: [redact: {}]}
"""


def run(data: Path, out: Path, *how: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "veil",
            "--quiet",
            "anonymize",
            str(data),
            *(how or ("-k", "2")),
            "-o",
            str(out),
            "--force",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=float, default=10)
    args = parser.parse_args()
    size = int(args.megabytes * 1024 * 1024)
    os.environ.setdefault("VEIL_KEY", "0" * 64)
    print(f"veil anonymize -k 2 of a 2-row CSV with one cell of {args.megabytes:g} MB")
    print(f"{'cell':<18} {'wall s':>8} {'CPU s':>8} {'x floor':>8}")
    floor = None
    with tempfile.TemporaryDirectory() as scratch:
        data, out = Path(scratch, "data.csv"), Path(scratch, "out.csv")
        for name, unit in SHAPES.items():
            data.write_text(_table(name, unit, size))
            wall, cpu = run(data, out)
            floor = floor or wall
            print(f"{name:<18} {wall:>8.2f} {cpu:>8.2f} {wall / floor:>8.2f}")
        policy = Path(scratch, "redact.yaml")
        policy.write_text(REDACT_POLICY)
        print("\nthe same with the cell redacted (veil anonymize -p, a redact step)")
        print(f"{'cell':<18} {'wall s':>8} {'CPU s':>8} {'x floor':>8}")
        floor = None
        for name, unit in REDACTED.items():
            data.write_text(_table(name, unit, size))
            wall, cpu = run(data, out, "-p", str(policy))
            floor = floor or wall
            print(f"{name:<18} {wall:>8.2f} {cpu:>8.2f} {wall / floor:>8.2f}")


def _table(name: str, unit: str, size: int) -> str:
    cell = unit if name.startswith("none") else unit * (size // len(unit))
    return f'id,note,age\n1,"{cell}",34\n2,short note here,45\n'


if __name__ == "__main__":
    main()
