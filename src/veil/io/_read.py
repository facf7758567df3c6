"""``read``: a table from a file, a database or a DataFrame, its cells checked."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from veil.exceptions import InputError, shown
from veil.io._files import (
    EXCEL_SUFFIXES,
    PARQUET_SUFFIXES,
    check_readable,
    parse_dates,
    read_csv,
    read_excel,
    read_parquet,
)
from veil.io._sql import read_sql

__all__ = ["Readable", "check_cells", "read"]

#: What ``read`` takes: a file path, a SQLAlchemy URL or a DataFrame.
Readable = str | os.PathLike[str] | pd.DataFrame


def read(
    source: Readable,
    *,
    sep: str | None = None,
    encoding: str | None = None,
    dates: Sequence[str] = (),
    dayfirst: bool | None = None,
    date_format: str | None = None,
    coerce_dates: bool = False,
    sheet: str | int | None = None,
    table: str | None = None,
    query: str | None = None,
) -> pd.DataFrame:
    """Read a table from a CSV/Parquet/Excel file, a SQLAlchemy URL, or a DataFrame.

    CSV: the delimiter and encoding are detected unless given; numbers written with a leading
    zero (phone numbers, IDs such as ``0712345678``) stay text; ISO dates are parsed, and other
    date columns only when named in ``dates``: spaces trimmed, the day/month order detected
    from values that read only one way (``dayfirst`` or ``date_format`` to say it; a column of
    only ambiguous ``11/09/15`` needs one), values that are no dates an error naming the row,
    or missing and counted with ``coerce_dates`` (a ``DateNotice`` says what was decided).
    SQL: ``source`` is a URL such as ``sqlite:///x.db`` with ``table`` or ``query``.

    Parameters
    ----------
    source : str, path or DataFrame
        A file, a SQLAlchemy URL, or a DataFrame (its cells checked).
    sep, encoding : str, optional
        CSV delimiter and text encoding (detected when omitted).
    dates : list of str
        Columns to parse as dates.
    dayfirst : bool, optional
        Dates are day-first (True) or month-first (False); detected when omitted.
    date_format : str, optional
        A strptime format for the dates.
    coerce_dates : bool
        Read values of ``dates`` columns that are no dates as missing (counted).
    sheet : str or int, optional
        The Excel sheet (default: the first).
    table, query : str, optional
        The SQL table, or a read-only query, when ``source`` is a URL.

    Returns
    -------
    DataFrame
        The table, its columns typed (each CSV column's text form in
        ``frame.attrs["veil.text_formats"]``).
    """
    if isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, str) and "://" in source:
        frame = read_sql(source, table=table, query=query)
    else:
        path = Path(source)
        check_readable(path)
        suffix = path.suffix.lower()
        if suffix in PARQUET_SUFFIXES:
            frame = read_parquet(path)
        elif suffix in EXCEL_SUFFIXES:
            frame = read_excel(path, sheet=sheet)
        else:
            frame = read_csv(path, sep=sep, encoding=encoding)
    check_cells(frame, source if not isinstance(source, pd.DataFrame) else "the table")
    if dates:
        frame = parse_dates(
            frame, dates, dayfirst=dayfirst, date_format=date_format, coerce=coerce_dates
        )
    return frame


_NESTED = (dict, list, set, tuple, np.ndarray)


def check_cells(frame: pd.DataFrame, where: object) -> None:
    """Refuse columns whose cells are records or lists (JSON columns, nested Parquet): veil
    releases tables of plain values, and a nested cell can hide anything."""
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object or pd.api.types.infer_dtype(column, skipna=True) not in {
            "mixed",
            "unknown-array",
        }:
            continue
        nested = next((v for v in column if isinstance(v, _NESTED)), None)
        if nested is not None:
            raise InputError(
                f"{where}: column {name!r} holds nested values ({type(nested).__name__}, e.g. "
                f"{shown(nested, 60)}); veil reads tables of plain values: flatten it into "
                "columns first (pandas.json_normalize), or drop it"
            )
