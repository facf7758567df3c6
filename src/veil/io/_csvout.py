"""A table written as CSV by Arrow's kernels, byte for byte what ``DataFrame.to_csv`` writes.

pandas writes a CSV through Python's ``csv`` module, a row at a time, after turning every
column into Python objects: 1.6 s for a release of 1M rows x 9 columns, three times the rest
of ``veil anonymize``. Here each column's cells are made as Arrow text the way pandas makes
them (a text as it is, an integer in decimal, a float as NumPy's ``str`` gives it, a date as
pandas' ``astype(str)`` gives it for each chunk of rows pandas formats at once, a missing
value empty), quoted where the ``csv`` module would quote them, and joined into lines by
Arrow. A column of another kind (dates with a time zone, categories, objects other than text)
leaves the whole table to pandas, so what is written is always what pandas writes.

Which characters make the ``csv`` module quote a cell is asked of the module itself, once,
and a carriage return and a newline are quoted whatever it says: CPython quotes both since
3.11.9 (gh-67044), but before it left a lone carriage return unquoted when lines end in a
newline, and that file reads back with the row split in two (pandas GH#10018). On such a
Python a table left to pandas that holds one is refused (``write_any``).
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.exceptions import OutputError
from veil.io._content import arrow_text
from veil.io._files import text_buffers

__all__ = ["write_any", "write_csv"]

#: pandas' defaults: a comma, lines ended as the system ends them, minimal quoting
_SEP = ","
_LINE = os.linesep
#: rows joined by Arrow at a time (each piece's text is written before the next is made)
_PIECE_ROWS = 1 << 18


def _csv_writer(handle: IO[str]) -> Any:
    """The ``csv`` writer pandas writes with (``to_csv``'s defaults)."""
    return csv.writer(handle, lineterminator=_LINE, delimiter=_SEP, quoting=csv.QUOTE_MINIMAL)


def _quoted(text: str) -> str:
    """One cell as the ``csv`` module writes it (``_QUOTING``)."""
    if any(c in _QUOTING for c in text):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_any(frame: pd.DataFrame, handle: IO[bytes], *, header: bool = True) -> None:
    """Write ``frame`` to ``handle`` as ``write_csv`` does, or by pandas where a column is of a
    kind only pandas makes. There, on a Python whose ``csv`` module leaves a lone carriage
    return unquoted, a text holding one is refused (an ``OutputError`` naming its column):
    the file would not read back as written."""
    if write_csv(frame, handle, header=header):
        return
    if "\r" not in _CSV_QUOTING:  # this Python's csv module leaves a lone one unquoted
        held = [f"column {n!r}" for n in frame.columns if _holds_carriage_return(frame[n])]
        if header and any("\r" in str(n) for n in frame.columns):
            held.insert(0, "its header")
        if held:
            raise OutputError(
                f"{held[0]} holds a carriage return, which this Python's csv module (before "
                "3.11.9) writes unquoted, so the CSV would not read back; write .parquet, or "
                "upgrade Python"
            )
    frame.to_csv(handle, index=False, header=header)


def _holds_carriage_return(column: pd.Series) -> bool:
    """Whether a cell of ``column`` (as text: numbers never hold one) holds a carriage return."""
    if pd.api.types.is_numeric_dtype(column) and not isinstance(column.dtype, pd.CategoricalDtype):
        return False
    held = column.astype("string").str.contains("\r", regex=False)
    return bool(held.fillna(False).any())


def _quoting_characters() -> str:
    """The ASCII characters whose presence makes the ``csv`` module quote a cell (asked of it:
    no other character is special to it)."""
    found = []
    for code in range(128):
        line = io.StringIO()
        _csv_writer(line).writerow([f"a{chr(code)}b"])
        if line.getvalue().startswith('"'):
            found.append(chr(code))
    return "".join(found)


_CSV_QUOTING = _quoting_characters()
_QUOTING = "".join(sorted(set(_CSV_QUOTING) | {"\r", "\n"}))
#: those characters' bytes (ASCII: in UTF-8 no other character's bytes hold one)
_QUOTING_BYTES = tuple(_QUOTING.encode())
_NEEDS_QUOTES = "[" + re.escape(_QUOTING) + "]"


def write_csv(frame: pd.DataFrame, handle: IO[bytes], *, header: bool = True) -> bool:
    """Write ``frame`` to the binary ``handle`` as ``frame.to_csv(handle, index=False,
    header=header)`` would, in UTF-8, but for a lone carriage return, quoted here whatever the
    Python (``_QUOTING``); False (nothing written) when a column is of a kind made by pandas
    only, for the caller to write with pandas (``write_any``)."""
    names = list(frame.columns)
    if not names or not frame.columns.is_unique or not all(isinstance(n, str) for n in names):
        return False
    found = [_kind(frame[n]) for n in names]
    kinds = [k for k in found if k is not None]
    if len(kinds) < len(names):
        return False
    if header:
        quoted = [_quoted(n) for n in names]
        handle.write((_SEP.join(quoted if quoted != [""] else ['""']) + _LINE).encode("utf-8"))
    dates = {
        n: _date_cells(frame[n], len(names))
        for n, k in zip(names, kinds, strict=True)
        if k == _DATES
    }
    for start in range(0, len(frame), _PIECE_ROWS):
        piece = frame.iloc[start : start + _PIECE_ROWS]
        made = [
            dates[n].slice(start, _PIECE_ROWS) if n in dates else _cells(piece[n], k)
            for n, k in zip(names, kinds, strict=True)
        ]
        handle.write(_lines(made))
    return True


def _date_cells(series: pd.Series, columns: int) -> pa.Array:
    """A date column's cells as pandas writes them in a table of ``columns`` columns: each
    chunk of its rows in the form that chunk's dates need (``2020-01-01`` when all are at
    midnight, else to the second, millisecond... the finest any needs), as pandas' own
    ``astype(str)`` makes them; a missing date empty."""
    rows = max(_PANDAS_CHUNK_CELLS // columns, 1)
    made = []
    for start in range(0, len(series), rows):
        shown = series.iloc[start : start + rows].astype(str)
        present = series.iloc[start : start + rows].notna()
        made.append(pa.array(shown.where(present, ""), type=pa.large_string()))
    return pa.chunked_array(made, pa.large_string()).combine_chunks()


def _lines(columns: list[pa.Array]) -> memoryview:
    """The CSV lines of ``columns`` (their cells made and quoted): the last cell of each row
    ended, then Arrow joins each row's cells with the delimiter (a pass over the rows' text
    once: ending the joined rows instead took as long again), and the lines are one run of
    its text buffer."""
    if len(columns) == 1:  # a line of one empty cell is written quoted, or it would be blank
        only = columns[0]
        columns = [pc.if_else(pc.equal(pc.binary_length(only), 0), _large('""'), only)]
    last = pc.binary_join_element_wise(columns[-1], _large(_LINE), _large(""))
    ended = pc.binary_join_element_wise(*columns[:-1], last, _large(_SEP))
    return text_buffers(ended)[1]


def _may_need_quotes(text: pa.Array) -> bool:
    """Whether a cell of ``text`` holds a character the ``csv`` module quotes: its bytes
    compared with each such character's in one pass each (a regular expression over every
    cell took twice as long as making the cells)."""
    data = np.frombuffer(text_buffers(text)[1], dtype=np.uint8)
    return any(bool((data == byte).any()) for byte in _QUOTING_BYTES)


def _large(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.large_string())


#: the kinds of column made here (any other is written by pandas)
_TEXT, _OBJECTS, _INTEGERS, _FLOATS, _BOOLS, _NULLABLE_BOOLS, _DATES = range(7)
#: pandas' ``to_csv`` formats its rows in chunks of this many cells (``_save_chunk``), and a
#: date column's form (dates only, or times to the millisecond...) is decided chunk by chunk
_PANDAS_CHUNK_CELLS = 100_000


def _kind(series: pd.Series) -> int | None:
    """Which of the kinds made here ``series`` is, or None (pandas writes the table)."""
    dtype = series.dtype
    if arrow_text(series) is not None:
        return _TEXT
    if pd.api.types.is_object_dtype(
        dtype
    ):  # texts only (a bytes object or a number is written by str or repr)
        return _OBJECTS if pd.api.types.infer_dtype(series, skipna=True) in _ALL_TEXT else None
    if isinstance(dtype, np.dtype):
        kinds = {"i": _INTEGERS, "u": _INTEGERS, "f": _FLOATS, "b": _BOOLS, "M": _DATES}
        return kinds.get(dtype.kind)
    if isinstance(dtype, pd.BooleanDtype):
        return _NULLABLE_BOOLS
    if pd.api.types.is_integer_dtype(dtype):  # pandas' Int64, Arrow's integers
        return _INTEGERS
    return None


_ALL_TEXT = {"string", "empty"}


def _cells(series: pd.Series, kind: int) -> pa.Array:
    """``series``' cells (of ``kind``) as the text pandas writes for them, one large string
    each: a missing value empty, a text quoted as the ``csv`` module quotes it."""
    if kind in {_TEXT, _OBJECTS}:
        held = arrow_text(series) if kind == _TEXT else None
        if held is None:
            held = pa.chunked_array([pa.array(series.to_numpy(), pa.string(), from_pandas=True)])
        text = pc.fill_null(held.cast(pa.large_string()), _large("")).combine_chunks()
        if not _may_need_quotes(text):
            return text
        doubled = pc.replace_substring(text, '"', '""')
        quoted = pc.binary_join_element_wise(_large('"'), doubled, _large('"'), _large(""))
        return pc.if_else(pc.match_substring_regex(text, _NEEDS_QUOTES), quoted, text)
    if kind == _FLOATS:
        values = series.to_numpy()
        shown = values.astype(str)  # a float as pandas writes it (NumPy's shortest form)
        return pa.array(np.where(np.isnan(values), "", shown), type=pa.large_string())
    if kind == _BOOLS:
        return pc.if_else(pa.array(series.to_numpy()), _large("True"), _large("False"))
    if kind == _NULLABLE_BOOLS:
        shown = pc.if_else(pa.array(series.array), _large("True"), _large("False"))
        return pc.fill_null(shown, _large(""))
    numbers = pa.array(series.array)  # NumPy's, pandas' Int64 or Arrow's integers
    return pc.fill_null(numbers.cast(pa.large_string()), _large(""))
