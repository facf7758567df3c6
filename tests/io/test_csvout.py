"""A CSV release is written by Arrow's kernels, and is byte for byte what pandas' ``to_csv``
writes (the oracle): every kind of column made there, any text (delimiters, quotes, line
breaks, a lone carriage return, wide characters), missing values, a table of one column, and
rows in several pieces."""

from __future__ import annotations

import io
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.io import _csvout
from veil.io._csvout import write_csv

# (a lone carriage return is left out here: pandas on a Python before 3.11.9 writes it
# unquoted, veil quotes it; test_a_lone_carriage_return_is_quoted_and_reads_back)
TEXT = st.lists(st.sampled_from([*",\"\n\t 'a1é€\x00;", "\r\n"]), max_size=6).map("".join)
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


def _column(kind: str, rows: int, data: st.DataObject) -> pd.Series:
    """A column of ``kind`` and ``rows`` values drawn by hypothesis."""

    def draw(values: st.SearchStrategy[object], missing: bool = True) -> list[object]:
        each = st.one_of(st.none(), values) if missing else values
        return data.draw(st.lists(each, min_size=rows, max_size=rows))

    if kind == "str":  # pandas' own text (Arrow)
        return pd.Series(draw(TEXT), dtype="str")
    if kind == "arrow-text":
        return pd.Series(draw(TEXT), dtype=pd.ArrowDtype(pa.large_string()))
    if kind == "objects":
        return pd.Series(draw(st.one_of(TEXT, st.just(float("nan")))), dtype=object)
    if kind == "int64":
        return pd.Series(draw(st.integers(-(2**63), 2**63 - 1), missing=False), dtype="int64")
    if kind == "uint8":
        return pd.Series(draw(st.integers(0, 255), missing=False), dtype="uint8")
    if kind == "Int64":
        return pd.Series(draw(st.integers(-(2**40), 2**40)), dtype="Int64")
    if kind == "arrow-int":
        return pd.Series(draw(st.integers(-(2**31), 2**31 - 1)), dtype=pd.ArrowDtype(pa.int32()))
    if kind == "float64":
        return pd.Series(draw(FLOATS, missing=False), dtype="float64")
    if kind == "float32":
        return pd.Series(draw(st.floats(width=32), missing=False), dtype="float32")
    if kind == "bool":
        return pd.Series(draw(st.booleans(), missing=False), dtype=bool)
    if kind.startswith("datetime"):  # dates alone, or to the second, or finer
        unit = kind.split("-")[1]
        days = st.dates(date(1678, 1, 1), date(2261, 12, 31)).map(pd.Timestamp)
        moments = st.datetimes(datetime(1678, 1, 1), datetime(2261, 12, 31)).map(pd.Timestamp)
        fine = st.builds(lambda m, ns: m + pd.Timedelta(ns, "ns"), moments, st.integers(0, 999))
        values = draw(data.draw(st.sampled_from([days, moments, fine])))
        return pd.Series(pd.to_datetime(values).as_unit(unit))
    return pd.Series(draw(st.booleans()), dtype="boolean")


KINDS = [
    "str",
    "arrow-text",
    "objects",
    "int64",
    "uint8",
    "Int64",
    "arrow-int",
    "float64",
    "float32",
    "bool",
    "boolean",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(KINDS), min_size=1, max_size=4),
    st.lists(TEXT, min_size=4, max_size=4, unique=True),
    st.integers(0, 12),
    st.sampled_from([1, 2, 5, 1 << 18]),
    st.data(),
)
def test_each_kind_of_column_is_written_as_pandas_writes_it(
    kinds: list[str], names: list[str], rows: int, piece: int, data: st.DataObject
) -> None:
    frame = pd.DataFrame({n: _column(k, rows, data) for n, k in zip(names, kinds, strict=False)})
    written = io.BytesIO()
    old = _csvout._PIECE_ROWS
    _csvout._PIECE_ROWS = piece  # rows joined in several pieces, and in one
    try:
        made = write_csv(frame, written)
    finally:
        _csvout._PIECE_ROWS = old
    assert made, f"{kinds} not made by Arrow"
    assert written.getvalue() == frame.to_csv(index=False).encode("utf-8")
    written = io.BytesIO()
    assert write_csv(frame, written, header=False)
    assert written.getvalue() == frame.to_csv(index=False, header=False).encode("utf-8")


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02"])).dt.tz_localize("Africa/Nairobi"),
        pd.Series(["a", "b"], dtype="category"),
        pd.Series([1, "a"], dtype=object),
        pd.Series([b"x", "y"], dtype=object),  # pandas writes the bytes as b'x'
        pd.Series([1.5, None], dtype="Float64"),
    ],
)
def test_a_kind_pandas_alone_makes_is_left_to_it_and_nothing_is_written(column: object) -> None:
    frame = pd.DataFrame({"a": ["x", "y"], "b": column})
    written = io.BytesIO()
    assert not write_csv(frame, written)
    assert written.getvalue() == b""


def test_dates_take_the_form_pandas_gives_each_chunk_of_rows() -> None:
    # pandas formats 100,000 cells at a time, a date column in the form its dates need there
    rows = 120_000  # three chunks of 50,000 rows for two columns
    days = pd.Series(pd.date_range("2001-01-01", periods=rows, freq="h").normalize())
    days[60_000] = pd.Timestamp("2001-03-01 10:30:00.250")  # milliseconds: the second chunk
    days[110_000] = pd.Timestamp("2001-03-01 10:30:00.000001")  # microseconds: the third
    days[5] = pd.NaT
    frame = pd.DataFrame({"seen": days, "n": range(rows)})
    written = io.BytesIO()
    assert write_csv(frame, written)
    assert written.getvalue() == frame.to_csv(index=False).encode("utf-8")
    lines = written.getvalue().decode().splitlines()
    assert lines[1] == "2001-01-01,0"
    assert lines[50_001].endswith(".000,50000")
    assert lines[100_001].endswith(".000000,100000")


def test_a_lone_carriage_return_is_quoted_and_reads_back(tmp_path: Path) -> None:
    # CPython quotes a lone CR since 3.11.9 (gh-67044); before, pandas' file read back with
    # the row split in two. pandas' reader and veil's are the oracle, on any Python.
    from veil.io import read, write

    frame = pd.DataFrame({"note": ["a\rb", "plain", "x\r", None], "n": [1, 2, 3, 4]})
    for made in (frame, frame[["note"]]):
        out = write(made, tmp_path / "cr.csv", force=True)
        assert b'"a\rb"' in out.read_bytes()
        back = pd.read_csv(out, keep_default_na=False, na_values=[""])
        assert back["note"].tolist()[:3] == ["a\rb", "plain", "x\r"]
        assert len(back) == 4
        assert read(out)["note"].tolist()[:3] == ["a\rb", "plain", "x\r"]


def test_a_table_left_to_pandas_with_a_lone_carriage_return_is_refused_or_quoted(
    tmp_path: Path,
) -> None:
    # pandas writes a time zone's dates; on a Python whose csv module leaves a lone CR
    # unquoted the table is refused, naming the column, else it is written and reads back
    from veil.exceptions import OutputError
    from veil.io import write

    frame = pd.DataFrame(
        {
            "seen": pd.to_datetime(["2020-01-01", "2020-01-02"]).tz_localize("Africa/Nairobi"),
            "note": ["a\rb", "plain"],
        }
    )
    out = tmp_path / "tz.csv"
    if "\r" in _csvout._CSV_QUOTING:
        write(frame, out)
        assert pd.read_csv(out)["note"].tolist() == ["a\rb", "plain"]
    else:
        with pytest.raises(OutputError, match=r"column 'note' holds a carriage return"):
            write(frame, out)
        assert not out.exists()
        plain = frame.assign(note=["a b", "plain"])
        write(plain, out)  # without one, pandas writes it
        assert out.read_bytes() == plain.to_csv(index=False).encode("utf-8")


def test_a_release_written_as_csv_reads_back_as_pandas_wrote_it(tmp_path: Path) -> None:
    # through veil.write (a staged file moved into place), any kind left to pandas included
    from veil.io import write

    frame = pd.DataFrame(
        {
            "name": ['Wanjiku, "Jane"', "Otieno\nJohn", None],
            "age": [34, 45, 29],
            "score": [0.1, np.nan, 1e20],
        }
    )
    for extra in ({}, {"seen": pd.to_datetime(["2020-01-01", "2021-05-06", None])}):
        whole = frame.assign(**extra)
        out = write(whole, tmp_path / "release.csv", force=True)
        assert out.read_bytes() == whole.to_csv(index=False).encode("utf-8")
