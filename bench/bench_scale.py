"""Scaling from 1M to 100M rows: ``veil check`` (k, l, t) and ``veil anonymize`` (k = 5, 4%
suppression, the 8 adult quasi-identifiers) in memory, streaming, and on Dask (a LocalCluster of
1 and of 2 worker processes, from Parquet), and ``veil scan`` the same ways (its JSON compared
with the first way's), each a process of its own, printing wall time, rows/s, peak memory
(RSS) and, for the streamed runs, the time of each pass (what bounds it: parsing/typing,
counting, search, apply, shuffle-write). Beside them, in the same run: pandas', DuckDB's and
Polars' group-by k check on the same file (the columnar engines in their own environment,
.venv-duckdb): the floor the counting is compared with, and the measurement that chose
between the two engines.

Targets (issue 21, this 2-core, 24 GB machine kind): 10M rows anonymized end to end in <= 60 s
with peak RSS <= 4 GB; 100M rows complete streaming with peak RSS <= 8 GB; Dask within 1.5x of
streaming on the same cores. (Peak RSS is the largest of the run's processes, as wait4 reports
it: the veil process, or a LocalCluster's worker once it has been reaped.)

    python bench/bench_scale.py [--sizes 1m,10m] [--huge] [--csv] [--duckdb-python PATH]

The tables come from bench/gen.py (made here when missing, under bench/data/).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
VEIL = [sys.executable, "-m", "veil"]
QUASI = "sex,age,race,marital-status,education,native-country,workclass,occupation"
POLICY = """columns:
  salary-class: {role: insensitive}
privacy:
  models: [{model: k_anonymity, k: 5}]
  max_suppression: 0.04
"""
SIZES = {"1m": 1_000_000, "10m": 10_000_000, "100m": 100_000_000}


def measured(command: list[str], cwd: Path) -> tuple[float, float, float, str, int]:
    """(wall seconds, CPU seconds (user and system, its children's included), peak RSS in GB,
    its output (errors, then standard output), exit code) of
    ``command`` as a process of its own (its own peak: wait4 on it, not the running maximum of
    all children)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    chunks: dict[str, str] = {}

    def drain(name: str, stream: object) -> None:
        chunks[name] = stream.read()  # type: ignore[attr-defined]

    threads = [
        threading.Thread(target=drain, args=(n, s))
        for n, s in (("out", child.stdout), ("err", child.stderr))
    ]
    for thread in threads:
        thread.start()
    _, status, usage = os.wait4(child.pid, 0)
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1e6, chunks.get("err", "") + chunks.get("out", ""), code


def passes(log: str) -> str:
    """The streamed passes' times from veil's progress lines."""
    found = []
    for line in log.splitlines():
        match = re.match(r"veil: (.*?)(?: \(.*?\))?: done in ([\d.]+) s", line)
        if match and float(match.group(2)) >= 0.05:
            name = match.group(1)
            short = (
                "typing"
                if "typing" in name
                else "counting"
                if "counting" in name
                else "search"
                if "search" in name
                else "apply"
                if "applying" in name
                else "shuffle-write"
                if "random order" in name
                else "confirm"
                if "confirming" in name
                else "scan"
                if "scan" in name
                else "verify"
                if "verifying" in name
                else name[:20]
            )
            found.append(f"{short} {float(match.group(2)):.1f}")
    return ", ".join(found)


def line(label: str, rows: int, seconds: float, cpu: float, rss: float, extra: str = "") -> None:
    print(
        f"  {label:<44} {seconds:7.1f} s  CPU {cpu:6.1f} s  {rows / seconds / 1e6:6.2f}M rows/s  "
        f"peak RSS {rss:5.2f} GB  {extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1m,10m")
    parser.add_argument(
        "--huge", action="store_true", help="also 100M rows (streaming and 2 Dask workers)"
    )
    parser.add_argument("--csv", action="store_true", help="also read the tables as CSV")
    parser.add_argument("--duckdb-python", default=str(ROOT / ".venv-duckdb" / "bin" / "python"))
    args = parser.parse_args()
    sizes = [s for s in args.sizes.split(",") if s] + (["100m"] if args.huge else [])
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "scale_policy.yaml").write_text(POLICY, encoding="utf-8")
    print(
        f"machine: {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB"
    )
    for size in sizes:
        rows = SIZES[size]
        stem = f"adult_{size}"
        missing = [
            p
            for p in (f"{stem}.parquet", *([f"{stem}.csv"] if args.csv else []))
            if not (DATA / p).exists()
        ]
        if missing:
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "bench" / "gen.py"),
                    "--rows",
                    str(rows),
                    *(["--csv"] if args.csv else []),
                ],
                check=True,
            )
        files = [f"{stem}.parquet", *([f"{stem}.csv"] if args.csv else [])]
        for name in files:
            mb = (DATA / name).stat().st_size / 1e6
            print(f"{name}: {rows:,} rows, {mb:,.0f} MB on disk")
            ways = ["--streaming"] if size == "100m" else ["--in-memory", "--streaming"]
            if name.endswith(".parquet"):  # a cluster reads Parquet parts
                ways += [
                    *(["--backend dask --workers 1"] if size != "100m" else []),
                    "--backend dask --workers 2",
                ]
            for way in ways:
                seconds, cpu, rss, log, code = measured(
                    [
                        *VEIL,
                        "check",
                        name,
                        "-q",
                        QUASI,
                        "--sensitive",
                        "salary-class",
                        "-k",
                        "5",
                        "--l",
                        "2",
                        "--t",
                        "0.3",
                        *way.split(),
                    ],
                    DATA,
                )
                if code not in (0, 1):
                    print(f"  check {way} failed ({code}): {log.strip().splitlines()[-1:]}")
                    continue
                line(f"check k,l,t {way}", rows, seconds, cpu, rss, passes(log))
            for way in ways:
                out = f"release_{stem}_{way.split()[-1].strip('-')}"
                # a cluster writes a folder of parts; a CSV is released as CSV (its text made
                # as pandas' to_csv makes it), a Parquet file as Parquet
                out += "" if "dask" in way else Path(name).suffix
                seconds, cpu, rss, log, code = measured(
                    [
                        *VEIL,
                        "anonymize",
                        name,
                        "-p",
                        "scale_policy.yaml",
                        "--hierarchies",
                        ".",
                        "-o",
                        out,
                        "--force",
                        *way.split(),
                    ],
                    DATA,
                )
                if code != 0:
                    print(f"  anonymize {way} failed ({code}): {log.strip().splitlines()[-1:]}")
                    continue
                line(f"anonymize k=5 4% {way}", rows, seconds, cpu, rss, passes(log))
                if (DATA / out).is_dir():
                    shutil.rmtree(DATA / out)
                (DATA / out).unlink(missing_ok=True)
            scanned: dict[str, str] = {}  # each way's JSON, compared with the first
            for way in ways:
                seconds, cpu, rss, log, code = measured(
                    [*VEIL, "scan", name, "--format", "json", *way.split()], DATA
                )
                if code != 0:
                    print(f"  scan {way} failed ({code}): {log.strip().splitlines()[-1:]}")
                    continue
                scanned[way] = log[log.index("{") :] if "{" in log else ""
                base = next(iter(scanned))
                same = (
                    ""
                    if way == base
                    else (
                        f"same JSON as {base}"
                        if scanned[way] == scanned[base]
                        else f"DIFFERS from {base}"
                    )
                )
                timed = ", ".join(filter(None, [passes(log), same]))
                line(f"scan {way}", rows, seconds, cpu, rss, timed)
            # peers, the same k check on the same file
            if name.endswith(".parquet") and size != "100m":
                script = (
                    "import sys,time,pandas as pd; t=time.perf_counter(); "
                    f"f=pd.read_parquet(sys.argv[1], columns={QUASI.split(',')!r}); "
                    f"r=time.perf_counter(); n=f.groupby({QUASI.split(',')!r}, "
                    "dropna=False, sort=False).size(); "
                    "print(int(n.min()), len(n), time.perf_counter()-t, "
                    "time.perf_counter()-r)"
                )
                seconds, cpu, rss, log, code = measured([sys.executable, "-c", script, name], DATA)
                k, classes, _, groupby = log.split()[-4:]
                line(
                    "pandas group-by k (peer)",
                    rows,
                    seconds,
                    cpu,
                    rss,
                    f"k {k}, {int(classes):,} classes; group-by alone {float(groupby):.1f} s",
                )
            if Path(args.duckdb_python).exists():
                for engine, extra in (("DuckDB", []), ("Polars", ["polars"])):
                    seconds, cpu, rss, log, code = measured(
                        [
                            args.duckdb_python,
                            str(ROOT / "bench" / "duckdb_runner.py"),
                            name,
                            QUASI,
                            *extra,
                        ],
                        DATA,
                    )
                    if code != 0:
                        print(f"  {engine} failed ({code}): {log.strip().splitlines()[-1:]}")
                        continue
                    got = json.loads(log.strip().splitlines()[-1])
                    line(
                        f"{engine} group-by k (peer)",
                        rows,
                        seconds,
                        cpu,
                        rss,
                        f"k {got['k']}, {got['classes']:,} classes; query alone "
                        f"{got['seconds']:.1f} s",
                    )
            else:
                print(
                    f"  (DuckDB peer not run: no {args.duckdb_python}; make bench-scale "
                    "installs it)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
