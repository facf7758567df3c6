"""Report speed: `veil.build_report` on a release and its original, against ydata-profiling
(what the original material's users reached for) profiling the original alone, in the same run.

    make bench-report
    python bench/bench_report.py --ydata-python .venv-ydata/bin/python

Tables: the bundled Kenyan insurance sample (1,001 rows) and the 30% slice of the health
insurance cross-sell data (114,333 rows) from ../shared/datasets. veil's report covers two
tables (before and after), risk, associations, a cross-validated model on each and column
profiles; ydata-profiling profiles one table. Both write one self-contained HTML file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

import veil
from veil.demo import TARGET, demo_data
from veil.report import build_report

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
CROSS_SELL = SHARED / "health_insurance_cross_sell" / "train_subset_30pct_original_encoding.csv"

POLICIES = {
    "kenya_insurance": {
        "columns": {
            "id": {"role": "identifier", "steps": ["drop"]},
            "ID_number": {"role": "identifier", "steps": ["drop"]},
            "Tax_id": {"role": "identifier", "steps": ["drop"]},
            "Age": {
                "role": "quasi_identifier",
                "steps": [{"generalize": {"bins": [0, 30, 45, 60, 200]}}],
            },
            "County": {"role": "quasi_identifier"},
            "Gender": {"role": "quasi_identifier"},
            "Illness_category": {"role": "sensitive"},
        },
        "privacy": {"k": 5, "max_suppression": 0.5},
    },
    "cross_sell": {
        "columns": {
            "id": {"role": "identifier", "steps": ["drop"]},
            "Age": {
                "role": "quasi_identifier",
                "steps": [{"generalize": {"bins": [0, 30, 45, 60, 200]}}],
            },
            "Gender": {"role": "quasi_identifier"},
            "Region_Code": {"role": "quasi_identifier"},
        },
        "privacy": {"k": 5},
    },
}
# progress messages -> the part of the report they start (anything else is the scan)
PARTS = (
    ("re-identification", "risk"),
    ("associations", "associations"),
    ("training", "model"),
    ("profiling", "profiles"),
    ("writing", "html"),
)
TARGETS = {"kenya_insurance": TARGET, "cross_sell": "Response"}


def veil_report(name: str, frame: pd.DataFrame, folder: Path) -> dict[str, float]:
    release = veil.anonymize(frame, POLICIES[name])
    parts: dict[str, float] = {}
    last = [time.perf_counter(), "scan"]

    def say(message: str) -> None:
        now = time.perf_counter()
        step = next((part for key, part in PARTS if key in str(last[1])), "scan")
        parts[step] = parts.get(step, 0.0) + now - float(last[0])
        last[0], last[1] = now, message

    start = time.perf_counter()
    report = build_report(release, original=frame, aligned=True, target=TARGETS[name], progress=say)
    path = folder / f"veil_{name}.html"
    say("writing")
    report.write(path, force=True)
    say("done")
    return {
        "seconds": time.perf_counter() - start,
        "bytes": path.stat().st_size,
        "figures": len(report.figures),
        **{f"part:{k}": v for k, v in parts.items()},
    }


def ydata_report(python: str, frame: pd.DataFrame, folder: Path, name: str, mode: str) -> dict:
    table = folder / f"{name}.parquet"
    frame.to_parquet(table)
    done = subprocess.run(
        [
            python,
            str(Path(__file__).parent / "ydata_runner.py"),
            str(table),
            str(folder / f"ydata_{name}_{mode}.html"),
            mode,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ydata-python", default=".venv-ydata/bin/python")
    args = parser.parse_args()
    tables = {"kenya_insurance": demo_data()}
    if CROSS_SELL.exists():
        tables["cross_sell"] = veil.read(CROSS_SELL)
    console = Console(width=200)
    grid = Table("table", "rows", "tool", "seconds", "HTML size", "notes")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, frame in tables.items():
            ours = veil_report(name, frame, folder)
            parts = ", ".join(
                f"{k[5:]} {v:.1f}s" for k, v in ours.items() if k.startswith("part:") and v >= 0.1
            )
            grid.add_row(
                name,
                f"{len(frame):,}",
                "veil report (2 tables + risk + model)",
                f"{ours['seconds']:.1f}",
                f"{ours['bytes'] / 1e6:.2f} MB",
                f"{ours['figures']} figures; {parts}",
            )
            for mode in ("minimal", "default"):
                peer = ydata_report(args.ydata_python, frame, folder, name, mode)
                grid.add_row(
                    name,
                    f"{len(frame):,}",
                    f"ydata-profiling {mode} (1 table)",
                    f"{peer['seconds']:.1f}",
                    f"{peer['bytes'] / 1e6:.2f} MB",
                    "",
                )
    console.print(grid)


if __name__ == "__main__":
    main()
