"""Reading a 1M-row personal-data CSV and applying the row-wise transforms, with the peer
(pandas) measured in the same run.

    python bench/bench_io.py [--rows 1000000]

Prints one line per task: veil's time, pandas' time for the same job, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import veil
from veil.transforms import Generalize, Mask, Pseudonymize


def make_table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "national_id": rng.integers(1_000_000, 40_000_000, rows),
            "kra_pin": [f"A{v:09d}Z" for v in rng.integers(0, 10**9, rows)],
            "phone": [f"07{v:08d}" for v in rng.integers(0, 10**8, rows)],
            "age": rng.integers(18, 95, rows),
            "county": rng.choice(["Nairobi", "Mombasa", "Kisumu", "Nakuru", "Lamu"], rows),
            "income": rng.lognormal(10, 0.7, rows).round(2),
        }
    )


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    os.environ.setdefault("VEIL_KEY", "bench-key-" + "x" * 32)
    table = make_table(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "people.csv"
        table.to_csv(path, index=False)
        size = path.stat().st_size / 1e6
        print(f"{args.rows:,} rows x {table.shape[1]} columns, {size:.0f} MB CSV")
        print(f"{'task':<44}{'veil':>9}{'pandas':>9}{'ratio':>8}")

        def row(task: str, ours: float, peer: float) -> None:
            print(f"{task:<44}{ours:>8.2f}s{peer:>8.2f}s{ours / peer:>7.2f}x")

        ours = best_of(lambda: veil.read(path))
        peer = best_of(lambda: pd.read_csv(path, dtype={"phone": str}))
        row("read CSV (types inferred, phones kept)", ours, peer)

        frame = veil.read(path)
        ours = best_of(
            lambda: Generalize("age", bins=[18, 30, 45, 60, 75, np.inf]).fit_transform(frame)
        )
        peer = best_of(
            lambda: pd.cut(frame["age"], [18, 30, 45, 60, 75, np.inf], right=False).astype(str)
        )
        row("generalize age into bands", ours, peer)

        ours = best_of(lambda: Mask("phone", keep_last=3).fit_transform(frame))
        peer = best_of(lambda: "*******" + frame["phone"].str[-3:])
        row("mask phone (keep last 3)", ours, peer)

        ours = best_of(lambda: Pseudonymize("kra_pin").fit_transform(frame), repeat=1)
        import hashlib
        import hmac

        key = os.environ["VEIL_KEY"].encode()
        peer = best_of(
            lambda: frame["kra_pin"].map(
                lambda v: hmac.new(key, v.encode(), hashlib.sha256).hexdigest()[:16]
            ),
            repeat=1,
        )
        row("pseudonymize KRA PIN (HMAC-SHA256)", ours, peer)

        out = Path(tmp) / "release.parquet"
        ours = best_of(lambda: veil.write(frame, out, force=True))
        peer = best_of(lambda: frame.to_parquet(out))
        row("write Parquet (atomic vs direct)", ours, peer)

        # CSV: veil's Arrow-made text against pandas' to_csv of the same frame; the bytes equal
        out, direct = Path(tmp) / "release.csv", Path(tmp) / "direct.csv"
        ours = best_of(lambda: veil.write(frame, out, force=True))
        peer = best_of(lambda: frame.to_csv(direct, index=False))
        same = "same bytes" if out.read_bytes() == direct.read_bytes() else "BYTES DIFFER"
        row(f"write CSV (atomic vs to_csv; {same})", ours, peer)


ADULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "arx" / "adult" / "adult.csv"
#: pycanon's own environment (made by `make test`): the peer of `veil check`
PYCANON = Path(__file__).resolve().parents[1] / ".venv-pycanon" / "bin" / "python"


def whole_process(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a command in a process of its own, children's CPU included."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return time.perf_counter() - start, cpu


def check_beside_arrow(rows: int) -> None:
    """``veil check`` of ``rows`` x 8 quasi-identifiers from CSV, as a whole process, beside
    pyarrow reading the same file in a process of its own (the floor: start-up and the read)
    (issue 38's target: at most twice that)."""
    import sys

    if not ADULT.exists():
        print(f"(no {ADULT}: the check-beside-Arrow figure needs ../shared)")
        return
    from bench_startup import compile_veil

    compile_veil()  # as installed: not compiled again in each process (bench_startup)
    adult = pd.read_csv(ADULT, sep=";")
    columns = list(adult.columns)[:8]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "adult.csv"
        adult[columns].sample(rows, replace=True, random_state=0).to_csv(path, index=False)
        veil_cli = [sys.executable, "-m", "veil", "check", str(path), "-q", ",".join(columns)]
        arrow = [sys.executable, "-c", f"import pyarrow.csv as c; c.read_csv({str(path)!r})"]
        ours = min((whole_process([*veil_cli, "-k", "5"]) for _ in range(3)), key=lambda t: t[0])
        floor = min((whole_process(arrow) for _ in range(3)), key=lambda t: t[0])
        print(f"\nveil check, {rows:,} rows x 8 quasi-identifiers from CSV, whole process")
        print(f"  {'':<40}{'wall':>9}{'CPU':>9}")
        print(f"  {'veil check -k 5':<40}{ours[0]:>8.2f}s{ours[1]:>8.2f}s")
        print(f"  {'pyarrow read_csv (start-up and read)':<40}{floor[0]:>8.2f}s{floor[1]:>8.2f}s")
        print(f"  ratio {ours[0] / floor[0]:.2f}x (target: at most 2x)")
        pycanon = PYCANON if PYCANON.exists() else None
        if pycanon is None:
            print(f"  (no {PYCANON}: `make test` builds pycanon's environment)")
            return
        program = (
            "import sys, pandas as pd; from pycanon import anonymity; "
            f"df = pd.read_csv({str(path)!r}); print(anonymity.k_anonymity(df, list(df.columns)))"
        )
        peer = min(
            (whole_process([str(pycanon), "-c", program]) for _ in range(3)), key=lambda t: t[0]
        )
        print(f"  {'pycanon (pandas read, k)':<40}{peer[0]:>8.2f}s{peer[1]:>8.2f}s")
        print(f"  veil {peer[0] / ours[0]:.1f}x faster than pycanon (target: at least 5x)")


if __name__ == "__main__":
    main()
    check_beside_arrow(1_000_000)
