"""Start-up: how long `veil --help`, `veil --version` and `import veil` take in a new process
(targets: 0.3 s and 0.5 s), beside the bare interpreter and `import pandas` measured in the
same run, and what `import veil` loads.

    python bench/bench_startup.py [--repeat 7]

Each figure is the median of ``--repeat`` fresh processes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def timed(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    cases = [
        ("python -c pass (the interpreter)", [python, "-c", "pass"], None),
        ("import pandas (for scale)", [python, "-c", "import pandas"], None),
        ("import veil", [python, "-c", "import veil"], 0.5),
        ("veil --version", [python, "-m", "veil", "--version"], 0.3),
        ("veil --help", [python, "-m", "veil", "--help"], 0.3),
        ("veil scan --help", [python, "-m", "veil", "scan", "--help"], 0.3),
    ]
    print(f"{'':<36}{'median':>9}{'target':>9}")
    for name, command, target in cases:
        seconds = timed(command, args.repeat)
        goal = f"{target:.1f} s" if target else ""
        mark = "" if target is None else ("  ok" if seconds <= target else "  OVER")
        print(f"{name:<36}{seconds:>7.3f} s{goal:>9}{mark}")
    heavy = ("pandas", "numpy", "sklearn", "scipy", "matplotlib", "pyarrow", "opendp")
    probe = f"import sys, veil; print(' '.join(m for m in {heavy!r} if m in sys.modules) or 'none')"
    loaded = subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True)
    print(f"heavy modules loaded by import veil: {loaded.stdout.strip()}")


if __name__ == "__main__":
    main()
