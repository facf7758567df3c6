"""Bounded work on hostile input: `veil anonymize` (whole process) of a 2-row CSV with one cell of
10 MB, beside the same table without it, measured in the same run (target: within twice the
time). Cells of letters, digits, separators and words; a free-text column is searched for names,
phones and e-mail addresses, which is where a quadratic pattern would show.

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


def run(data: Path, out: Path) -> tuple[float, float]:
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
            "-k",
            "2",
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
        for name, unit in SHAPES.items():
            cell = unit if name.startswith("none") else unit * (size // len(unit))
            data = Path(scratch, "data.csv")
            data.write_text(f'id,note,age\n1,"{cell}",34\n2,short note here,45\n')
            wall, cpu = run(data, Path(scratch, "out.csv"))
            floor = floor or wall
            print(f"{name:<18} {wall:>8.2f} {cpu:>8.2f} {wall / floor:>8.2f}")


if __name__ == "__main__":
    main()
