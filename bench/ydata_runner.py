"""Runs in ydata-profiling's own environment (.venv-ydata: it pins pandas < 3): time a
profile report of a table to one HTML file.

    python ydata_runner.py TABLE.parquet OUT.html minimal|default

Prints one JSON line: {"mode", "seconds", "bytes"}.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pandas as pd
from ydata_profiling import ProfileReport


def main() -> None:
    table = pd.read_parquet(sys.argv[1])
    out, mode = sys.argv[2], sys.argv[3]
    start = time.perf_counter()
    report = ProfileReport(table, minimal=mode == "minimal", progress_bar=False)
    report.to_file(out, silent=True)
    seconds = time.perf_counter() - start
    print(json.dumps({"mode": mode, "seconds": seconds, "bytes": os.path.getsize(out)}))


if __name__ == "__main__":
    main()
