"""The demo report's JSON against a golden file: any change in what the report says shows up
here. Only what must differ between runs is normalized: the version, the time, and the values
drawn from DP noise (OpenDP's randomness is not seedable, on purpose) — the answers, and their
error bounds, which a DP mean derives from its noisy count.

After an intended change: VEIL_UPDATE_GOLDEN=1 pytest tests/report/test_golden.py, then read
the diff of golden/demo_report.json before committing it.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from veil.demo import DemoResult

GOLDEN = Path(__file__).parent / "golden" / "demo_report.json"
NOISY = "<drawn with DP noise>"


def normalize(report: dict[str, Any]) -> dict[str, Any]:
    report = json.loads(json.dumps(report))
    report["created"] = "<time>"
    report["veil_version"] = "<version>"
    dp = next(s for s in report["sections"] if s["id"] == "dp")
    for table in dp["tables"]:
        for name in ("answer", "± (95%)"):
            if name in table["columns"]:
                column = table["columns"].index(name)
                for row in table["rows"]:
                    row[column] = NOISY
    for figure in dp["figures"]:
        if figure["id"].startswith("curve-"):
            figure["data"]["mean_abs_error"] = NOISY
            figure["data"]["error95_bound"] = NOISY
    return report


def mismatches(got: Any, want: Any, where: str = "$") -> list[str]:
    """Paths where ``got`` differs from ``want``; floats agree to 1e-3 (BLAS and solver
    versions move model scores in the last digits, nothing else)."""
    if isinstance(want, float) or isinstance(got, float):
        if isinstance(got, (int, float)) and isinstance(want, (int, float)):
            return [] if math.isclose(got, want, rel_tol=1e-3, abs_tol=1e-3) else [where]
        return [where]
    if isinstance(want, dict) and isinstance(got, dict):
        if set(got) != set(want):
            return [f"{where}: keys {sorted(set(got) ^ set(want))}"]
        return [m for k in want for m in mismatches(got[k], want[k], f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{where}: length {len(got)} != {len(want)}"]
        return [
            m
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for m in mismatches(g, w, f"{where}[{i}]")
        ]
    return [] if got == want else [f"{where}: {got!r} != {want!r}"]


def test_demo_report_matches_the_golden_file(demo_run: DemoResult) -> None:
    got = normalize(json.loads(demo_run.files["report_json"].read_text()))
    if os.environ.get("VEIL_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert mismatches(got, want) == []


def test_normalizing_hides_only_what_varies(demo_run: DemoResult) -> None:
    """The golden comparison must still catch a change: alter one number and it fails."""
    got = normalize(json.loads(demo_run.files["report_json"].read_text()))
    privacy = next(s for s in got["sections"] if s["id"] == "privacy")
    privacy["figures"][0]["data"]["release"][4] += 1
    assert mismatches(got, json.loads(GOLDEN.read_text())) != []
    assert NOISY not in json.dumps(privacy)
