"""DuckDB's (or Polars') group-by k check, run in the columnar engines' own environment
(.venv-duckdb) by bench_scale.py: the smallest class over the quasi-identifiers of a Parquet or
CSV file, read by the engine itself. Prints one JSON line: seconds, k, classes.

    .venv-duckdb/bin/python bench/duckdb_runner.py FILE COLUMN[,COLUMN...] [polars]
"""

from __future__ import annotations

import json
import sys
import time


def polars_k(path: str, columns: list[str]) -> tuple[int, int]:
    import polars as pl

    scan = pl.scan_parquet(path) if path.endswith(".parquet") else pl.scan_csv(path)
    sizes = scan.group_by(columns).len().collect()["len"]
    return int(sizes.min()), len(sizes)


def main() -> int:
    path, columns = sys.argv[1], sys.argv[2].split(",")
    if sys.argv[3:] == ["polars"]:
        start = time.perf_counter()
        k, classes = polars_k(path, columns)
        print(json.dumps({"seconds": time.perf_counter() - start, "k": k, "classes": classes}))
        return 0
    import duckdb

    quoted = ", ".join(f'"{c}"' for c in columns)
    reader = "read_parquet" if path.endswith(".parquet") else "read_csv_auto"
    start = time.perf_counter()
    k, classes = duckdb.sql(
        f"SELECT min(n), count(*) FROM (SELECT count(*) AS n FROM {reader}('{path}') "
        f"GROUP BY {quoted})"
    ).fetchone()
    print(json.dumps({"seconds": time.perf_counter() - start, "k": k, "classes": classes}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
