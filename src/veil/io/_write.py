"""Writing tables: CSV (each untouched column in its input form), Parquet, Excel, JSON."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from veil.exceptions import (
    OutputError,
    ParameterError,
)
from veil.io._content import whole_numbers
from veil.io._csvout import write_any
from veil.io._files import TEXT_FORMATS
from veil.io._formulas import escape_formulas as _escape
from veil.io._outputs import OutputSet

OutputFormat = Literal["csv", "parquet", "xlsx", "json"]
SUPPORTED_OUTPUTS: dict[str, OutputFormat] = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "xlsx",
    ".json": "json",
}
#: The formats a spreadsheet opens, whose formula cells are escaped (``escape_formulas``).
SPREADSHEETS = frozenset({"csv", "xlsx"})


def output_format(path: str | os.PathLike[str], format: str | None = None) -> OutputFormat:
    """The format to write ``path`` in (``format`` if given, else its extension); an unknown
    one is a ``ParameterError`` naming the formats veil writes.
    """
    if format is not None:
        if format not in SUPPORTED_OUTPUTS.values():
            allowed = sorted(set(SUPPORTED_OUTPUTS.values()))
            raise ParameterError(f"format must be one of {allowed}, got {format!r}")
        return format  # type: ignore[return-value]
    suffix = Path(path).suffix.lower()
    if suffix not in SUPPORTED_OUTPUTS:
        raise ParameterError(
            f"output extension must be one of {sorted(SUPPORTED_OUTPUTS)}, got {suffix!r} "
            f"({path}); rename the output, e.g. release.csv"
        )
    return SUPPORTED_OUTPUTS[suffix]


#: Excel's sheet: 1,048,576 rows (one is the header), 16,384 columns, 32,767 characters a cell.
EXCEL_ROWS = 1_048_575
EXCEL_COLUMNS = 16_384
EXCEL_CELL_CHARS = 32_767


def check_writable(
    fmt: str, path: str | os.PathLike[str], *, rows: int, columns: int | None = None
) -> None:
    """Refuse before the work what a format cannot hold (a sheet's size)."""
    if fmt != "xlsx":
        return
    if rows > EXCEL_ROWS:
        raise OutputError(
            f"{path}: an Excel sheet holds at most {EXCEL_ROWS:,} rows, and this table has "
            f"{rows:,}; write .csv or .parquet instead"
        )
    if columns is not None and columns > EXCEL_COLUMNS:
        raise OutputError(
            f"{path}: an Excel sheet holds at most {EXCEL_COLUMNS:,} columns, and this table "
            f"has {columns:,}; write .csv or .parquet instead"
        )


def _write_excel(frame: pd.DataFrame, path: Path) -> None:
    """Every cell a value: a text such as ``=HYPERLINK(...)`` stays text, never a formula or
    a link that runs when the sheet opens. Dates with a time zone (which Excel cannot hold)
    are written as ISO 8601 text with their offset; text longer than a cell holds is refused
    (Excel would drop it)."""
    check_writable("xlsx", path, rows=len(frame), columns=frame.shape[1])
    out = frame.copy(deep=False)
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.DatetimeTZDtype):
            out[name] = column.map(lambda t: t.isoformat() if pd.notna(t) else None)
        elif column.dtype == object or pd.api.types.is_string_dtype(column):
            longest = column.astype("string").str.len().max()
            if pd.notna(longest) and longest > EXCEL_CELL_CHARS:
                raise OutputError(
                    f"{path}: column {name!r} holds text of {int(longest):,} characters, more "
                    f"than an Excel cell holds ({EXCEL_CELL_CHARS:,}); write .csv or .parquet"
                )
    # (not constant_memory: pandas writes column by column, and that mode drops every cell
    # not written in row order)
    options = {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}
    out.to_excel(path, index=False, engine="xlsxwriter", engine_kwargs={"options": options})


def write_table(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    fmt: str,
    *,
    formats: dict[str, str] | None = None,
    escape_formulas: bool = True,
) -> int:
    """Write ``frame`` to ``path`` as ``fmt`` (csv, parquet, xlsx, json), in place: the caller
    gives a staged path (``OutputSet.stage``). A CSV writes each column in ``formats``
    (default: ``frame.attrs[TEXT_FORMATS]``, the form ``read`` found) in that form wherever
    every value fits it exactly, so untransformed columns keep the input's formatting.

    In a CSV or Excel file, text cells a spreadsheet would run as formulas are written with a
    leading apostrophe unless ``escape_formulas`` is false (``veil.io.escape_formulas``);
    returns how many were."""
    escaped = 0
    if escape_formulas and fmt in SPREADSHEETS:
        frame, escaped = _escape(frame)
    if fmt == "csv":
        given = frame.attrs.get(TEXT_FORMATS, {}) if formats is None else formats
        written = _as_written(frame, given)
        with open(path, "wb") as handle:
            write_any(written, handle)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    elif fmt == "xlsx":
        _write_excel(frame, Path(path))
    else:
        frame.to_json(path, orient="records", date_format="iso", force_ascii=False)
    return escaped


def _as_written(frame: pd.DataFrame, formats: dict[str, str]) -> pd.DataFrame:
    """``frame`` with each column in ``formats`` as text in that form, where every value fits
    the form exactly (a column veil changed, noised or binned, no longer does and is written
    as usual): what is written reads back as the same values."""
    out = frame
    for name, form in formats.items():
        if name not in frame.columns:
            continue
        written = _in_form(frame[name], form)
        if written is not None:
            if out is frame:
                out = frame.copy(deep=False)
            out[name] = written
    return out


def _in_form(series: pd.Series, form: str) -> pd.Series | None:
    present = series.notna().to_numpy()
    if pd.api.types.is_float_dtype(series) and form.startswith("%"):
        values = series.to_numpy(dtype=float)
        shown = values[present]
        if form == "%d":  # whole numbers, as the certificate's hash writes them
            return series.astype("Int64") if whole_numbers(shown).all() else None
        decimals = int(form[2:-1])
        if not np.isfinite(shown).all() or not np.array_equal(np.round(shown, decimals), shown):
            return None
        text = np.full(len(values), None, dtype=object)
        text[present] = np.char.mod(form, shown)
        return pd.Series(text, index=series.index, name=series.name)
    if pd.api.types.is_datetime64_any_dtype(series) and "%Y" in form:
        stamps = series[present]
        if "%S" not in form and (stamps.dt.second != 0).any():
            return None
        if "%H" not in form and (stamps != stamps.dt.normalize()).any():
            return None
        if (stamps.dt.microsecond != 0).any() or (stamps.dt.nanosecond != 0).any():
            return None
        return series.dt.strftime(form)
    return None


def write(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    force: bool = False,
    inputs: Sequence[str | os.PathLike[str]] = (),
    escape_formulas: bool = True,
) -> Path:
    """Write ``frame`` atomically; the format follows the extension unless given. An existing
    file is replaced only with ``force``; an input never. In CSV and Excel, cells that a
    spreadsheet would run as formulas get a leading apostrophe unless ``escape_formulas`` is
    false.

    Parameters
    ----------
    frame : DataFrame
        The table to write.
    path : str or path
        Where (.csv, .parquet, .xlsx or .json).
    format : str, optional
        The format, when not the extension's.
    force : bool
        Replace an existing file.
    inputs : list of paths
        Files this run read: never written over, even with ``force``.
    escape_formulas : bool
        Prefix cells a spreadsheet would run with an apostrophe (CSV and Excel).

    Returns
    -------
    Path
        The file written.
    """
    fmt = output_format(path, format)
    check_writable(fmt, path, rows=len(frame), columns=frame.shape[1])
    with OutputSet(force=force, inputs=inputs) as outputs:
        write_table(frame, outputs.stage(path), fmt, escape_formulas=escape_formulas)
    return Path(path)
