"""Adult-like tables of 1M, 10M or 100M rows for bench_scale.py, grown from ARX's adult
(../shared/datasets/arx/adult, 30,162 rows) by resampling its real rows.

Resampled rows alone would repeat each person ~330 times at 10M rows, and every class would
be large at once (the search would have nothing to do). So each drawn row is moved a little,
within what the hierarchies cover: its age by up to 2 years either way (17 to 90), and with
probability 0.1 one quasi-identifier takes a value drawn from that column's marginal. Every
value stays in its column's hierarchy file (copied beside the table under its stem), so the
search and ARX's hierarchies apply unchanged.

    python bench/gen.py --rows 10000000 [--out bench/data] [--csv]

Writes ``adult_<rows>.parquet`` (row groups of 1M rows), and with ``--csv`` the same rows as
``adult_<rows>.csv``; written to temporary names and renamed when complete.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "datasets" / "arx" / "adult"
QUASI = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
]
CHUNK = 1_000_000


def stem(rows: int) -> str:
    """The file stem of a table of ``rows`` rows (``adult_10m``)."""
    for size, unit in ((1_000_000_000, "g"), (1_000_000, "m"), (1_000, "k")):
        if rows % size == 0:
            return f"adult_{rows // size}{unit}"
    return f"adult_{rows}"


def grow(base: pd.DataFrame, rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """``rows`` rows resampled from ``base`` and moved a little (see the module's note)."""
    out = base.iloc[rng.integers(0, len(base), rows)].reset_index(drop=True)
    age = out["age"].to_numpy() + rng.integers(-2, 3, rows)
    out["age"] = np.clip(age, 17, 90)
    moved = rng.random(rows) < 0.1
    which = rng.integers(0, len(QUASI), rows)
    for j, column in enumerate(QUASI):
        hit = moved & (which == j)
        if column == "age" or not hit.any():
            continue
        values = out[column].to_numpy(dtype=object)
        values[hit] = base[column].to_numpy(dtype=object)[rng.integers(0, len(base), hit.sum())]
        out[column] = values
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--csv", action="store_true", help="also write the rows as CSV")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (ADULT / "adult.csv").exists():
        print(f"needs {ADULT}: the datasets beside the clone", file=sys.stderr)
        return 2
    base = pd.read_csv(ADULT / "adult.csv", sep=";")
    args.out.mkdir(parents=True, exist_ok=True)
    name = stem(args.rows)
    for tree in ADULT.glob("adult_hierarchy_*.csv"):
        shutil.copy(tree, args.out / tree.name.replace("adult_", f"{name}_", 1))
    parquet = args.out / f"{name}.parquet"
    csv = args.out / f"{name}.csv"
    tmp_parquet = parquet.with_name(f".{parquet.name}.{os.getpid()}.tmp")
    tmp_csv = csv.with_name(f".{csv.name}.{os.getpid()}.tmp")
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    writer = None
    try:
        with (
            open(tmp_csv, "w", encoding="utf-8", newline="")
            if args.csv
            else open(os.devnull, "w") as handle
        ):
            for first in range(0, args.rows, CHUNK):
                part = grow(base, min(CHUNK, args.rows - first), rng)
                table = pa.Table.from_pandas(part, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(tmp_parquet, table.schema)
                writer.write_table(table)
                if args.csv:
                    part.to_csv(handle, index=False, header=first == 0)
                print(f"  {first + len(part):,} rows", end="\r", file=sys.stderr)
        assert writer is not None
        writer.close()
        os.replace(tmp_parquet, parquet)
        if args.csv:
            os.replace(tmp_csv, csv)
    finally:
        for tmp in (tmp_parquet, tmp_csv):
            tmp.unlink(missing_ok=True)
    sizes = ", ".join(
        f"{p.name} {p.stat().st_size / 1e6:,.0f} MB" for p in (parquet, csv) if p.exists()
    )
    print(f"{args.rows:,} rows in {time.perf_counter() - start:.0f} s: {sizes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
