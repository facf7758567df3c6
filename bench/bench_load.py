"""Load: the health-insurance cross-sell table grown to 5M rows, anonymized through the command
line with the policy `veil scan` suggests for it, as a user runs it. Prints the wall time, the
peak memory (RSS) against the input's size, and where the memory goes: each step's time, the
memory it starts with and its peak.

    python bench/bench_load.py [--rows 5000000] [--plot bench/out/load_memory.png]

The table is ../shared/datasets/health_insurance_cross_sell (114,333 real rows), repeated
with fresh ids to the size asked for. The run is `veil anonymize` in its own process; a thread
in that process samples its RSS every 10 ms and notes the step the progress reports.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SOURCE = (
    Path(__file__).resolve().parents[1].parent
    / "shared/datasets/health_insurance_cross_sell/train_subset_30pct_original_encoding.csv"
)
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE


def child(args: list[str], record: Path) -> int:
    """Run `veil ARGS` here, sampling memory per progress step; write the steps to ``record``."""
    from veil import cli
    from veil.progress import LineProgress

    steps: list[dict[str, float | str]] = []
    current = {"step": "start-up", "t0": time.perf_counter(), "rss0": rss(), "peak": rss()}
    lock = threading.Lock()

    def close_step() -> None:
        steps.append(
            {
                "step": current["step"],
                "seconds": time.perf_counter() - current["t0"],
                "rss_start": current["rss0"],
                "rss_peak": current["peak"],
            }
        )

    def sample() -> None:
        while True:
            now = rss()
            with lock:
                current["peak"] = max(current["peak"], now)
            time.sleep(0.01)

    original = LineProgress.step

    def step(self: LineProgress, description: str) -> None:
        with lock:
            close_step()
            now = rss()
            current.update(step=description, t0=time.perf_counter(), rss0=now, peak=now)
        original(self, description)

    LineProgress.step = step  # type: ignore[method-assign]
    threading.Thread(target=sample, daemon=True).start()
    code = cli.main(args)
    with lock:
        close_step()
    record.write_text(json.dumps(steps))
    return code


def build(rows: int, folder: Path) -> Path:
    import numpy as np
    import pandas as pd

    source = pd.read_csv(SOURCE)
    repeats = -(-rows // len(source))
    big = pd.concat([source] * repeats, ignore_index=True).iloc[:rows].copy()
    big["id"] = np.arange(1, rows + 1)
    path = folder / f"cross_sell_{rows}.csv"
    big.to_csv(path, index=False)
    return path


def plot(steps: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [s["step"][:48] for s in steps]
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(steps) + 1.5))
    ax.barh(names, [s["rss_peak"] / 1e9 for s in steps], color="#c0504d", label="peak")
    ax.barh(names, [s["rss_start"] / 1e9 for s in steps], color="#4f81bd", label="at start")
    ax.invert_yaxis()
    ax.set_xlabel("resident memory (GB)")
    ax.set_title("veil anonymize: memory by step")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--child", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.child:
        sys.exit(child(args.child[1:], Path(args.child[0])))

    env = {**os.environ, "VEIL_KEY": "bench-key-" + "x" * 32, "VEIL_QUIET": ""}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        data = build(args.rows, folder)
        size = data.stat().st_size
        print(
            f"{args.rows:,} rows x 12 columns, {size / 1e6:.0f} MB CSV "
            f"(built in {time.perf_counter() - start:.0f} s)"
        )
        policy = folder / "policy.yaml"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "veil",
                "--quiet",
                "scan",
                str(SOURCE),
                "--suggest-policy",
                str(policy),
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        record = folder / "steps.json"
        command = [
            sys.executable,
            __file__,
            "--child",
            str(record),
            "anonymize",
            str(data),
            "-p",
            str(policy),
            "-o",
            str(folder / "release.csv"),
        ]
        start = time.perf_counter()
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if run.returncode != 0:
            sys.exit(f"veil anonymize failed ({run.returncode}): {run.stderr[-2000:]}")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        steps = json.loads(record.read_text())
    print(
        f"veil anonymize: {wall:.1f} s, peak RSS {peak / 1e9:.2f} GB "
        f"({peak / size:.1f}x the input's size)"
    )
    print(f"{'step':<58}{'seconds':>9}{'RSS at start':>14}{'peak':>9}")
    for s in steps:
        print(
            f"{s['step'][:57]:<58}{s['seconds']:>9.1f}{s['rss_start'] / 1e9:>12.2f} GB"
            f"{s['rss_peak'] / 1e9:>7.2f} GB"
        )
    if args.plot is not None:
        plot(steps, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
