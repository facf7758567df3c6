"""DuckDB's group-by k check, run in DuckDB's own environment (.venv-duckdb) by
bench_scale.py: the smallest class over the quasi-identifiers of a Parquet or CSV file, read by
DuckDB itself. Prints one JSON line: seconds, k, classes.

    .venv-duckdb/bin/python bench/duckdb_runner.py FILE COLUMN[,COLUMN...]
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    import duckdb

    path, columns = sys.argv[1], sys.argv[2].split(",")
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
