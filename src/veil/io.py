"""Reading tables from files, databases and DataFrames; writing releases atomically.

Every read error names the file (and line or column where known) and the fix. Every write goes
to a temporary file beside the target and is renamed into place, so a failure never leaves a
half-written output, and an input file is never overwritten.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import errno
import hashlib
import io
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.exceptions import (
    CleanupNotice,
    InputError,
    MissingExtraError,
    OutputError,
    ParameterError,
    UnknownColumnError,
    VeilError,
    one_line,
    shown,
)

__all__ = [
    "SUPPORTED_OUTPUTS",
    "OutputSet",
    "atomic_open",
    "atomic_path",
    "check_output",
    "check_writable",
    "fingerprint",
    "read",
    "remove_stale_temps",
    "write",
    "write_table",
]

Source = str | os.PathLike[str] | pd.DataFrame
OutputFormat = Literal["csv", "parquet", "xlsx", "json"]
SUPPORTED_OUTPUTS: dict[str, OutputFormat] = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "xlsx",
    ".json": "json",
}
_EXCEL = {".xlsx", ".xlsm", ".xls"}
_PARQUET = {".parquet", ".pq"}
_DELIMITERS = ",;\t|"
_SAMPLE_BYTES = 1 << 16
_PREFERRED_ENCODINGS = ("cp1252", "latin_1", "iso8859_15")
_ISO_DATE_RE = r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$"

#: ``frame.attrs`` key of a table read from CSV: per column, the form its values were written
#: in (``%.2f``, ``%d``, ``%Y-%m-%dT%H:%M``), so that a column veil leaves as it is goes back
#: out as it came in (``62`` stays ``62`` in a column with gaps, ``1.50`` stays ``1.50``).
TEXT_FORMATS = "veil.text_formats"
#: the ISO date forms a column may share, each with the strftime format that writes it
_ISO_FORMS = (
    (r"^\d{4}-\d{2}-\d{2}$", "%Y-%m-%d"),
    (r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$", "%Y-%m-%d %H:%M"),
    (r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$", "%Y-%m-%dT%H:%M"),
    (r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", "%Y-%m-%d %H:%M:%S"),
    (r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$", "%Y-%m-%dT%H:%M:%S"),
)


# --------------------------------------------------------------------------------------- read


def read(
    source: Source,
    *,
    sep: str | None = None,
    encoding: str | None = None,
    dates: Sequence[str] = (),
    dayfirst: bool = False,
    date_format: str | None = None,
    sheet: str | int | None = None,
    table: str | None = None,
    query: str | None = None,
) -> pd.DataFrame:
    """Read a table from a CSV/Parquet/Excel file, a SQLAlchemy URL, or a DataFrame.

    CSV: the delimiter and encoding are detected unless given; numbers written with a leading
    zero (phone numbers, IDs such as ``0712345678``) stay text; ISO dates are parsed, and other
    date columns are parsed only when named in ``dates`` (with ``dayfirst`` or ``date_format``),
    because ``11/09/15`` is ambiguous. SQL: ``source`` is a URL such as ``sqlite:///x.db`` with
    ``table`` or ``query``.
    """
    if isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, str) and "://" in source:
        frame = _read_sql(source, table=table, query=query)
    else:
        path = Path(source)
        _check_readable(path)
        suffix = path.suffix.lower()
        if suffix in _PARQUET:
            frame = _read_parquet(path)
        elif suffix in _EXCEL:
            frame = _read_excel(path, sheet=sheet)
        else:
            frame = _read_csv(path, sep=sep, encoding=encoding)
    check_cells(frame, source if not isinstance(source, pd.DataFrame) else "the table")
    if dates:
        frame = _parse_dates(frame, dates, dayfirst=dayfirst, date_format=date_format)
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


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: no such file; check the path (relative to {Path.cwd()})")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a data file; name a file inside it")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; a table needs at least a header row")


def display_source(source: object) -> str:
    """A data source as messages show it: a database URL without its password."""
    text = str(source)
    if "://" not in text:
        return text
    import sqlalchemy as sa

    try:
        return str(sa.engine.make_url(text).render_as_string(hide_password=True))
    except sa.exc.ArgumentError:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", text)


def _read_sql(url: str, *, table: str | None, query: str | None) -> pd.DataFrame:
    """Read a table or one SELECT from a database, on a read-only connection: veil never
    changes its input, and a query that would (``DROP TABLE``, ``SELECT ... INTO``, a
    data-modifying ``WITH``) is refused before it reaches the database."""
    import sqlalchemy as sa

    if (table is None) == (query is None):
        raise ParameterError(
            f"a SQL source needs exactly one of table or query, got table={table!r}, "
            f"query={query!r}; pass --table NAME or --query 'SELECT ...'"
        )
    try:
        address = sa.engine.make_url(url)
    except sa.exc.ArgumentError as err:
        raise InputError(f"{url}: not a SQLAlchemy URL ({err}); e.g. sqlite:///data.db") from err
    backend = address.get_backend_name()
    url = display_source(url)  # messages never show the password
    if query is not None:
        _check_select(url, query, backend)
    try:
        engine = _read_only_engine(address)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as err:
        raise InputError(
            f"{url}: not a usable SQLAlchemy URL ({one_line(str(err))}); e.g. sqlite:///data.db"
        ) from err
    except ImportError as err:  # the database's driver
        raise MissingExtraError(
            f"{url}: reading {backend} needs its driver {err.name or ''}, which is not "
            f"installed; pip install the driver the URL names (e.g. postgresql+pg8000:// with "
            "`pip install pg8000`)"
        ) from err
    try:
        with engine.connect() as conn:
            _make_read_only(conn, backend)
            if table is not None:
                if not sa.inspect(conn).has_table(table):
                    names = sa.inspect(conn).get_table_names()
                    raise InputError(
                        f"{url}: table {table!r} does not exist; tables: {', '.join(names)}"
                    )
                frame = pd.read_sql_table(table, conn)
            else:
                frame = pd.read_sql_query(sa.text(query or ""), conn)
            conn.rollback()  # a read-only session has nothing to keep
            return frame
    except (sa.exc.SQLAlchemyError, pd.errors.DatabaseError) as err:
        raise InputError(f"{url}: the database refused the read: {_db_message(err)}") from err
    finally:
        engine.dispose()


def _db_message(err: BaseException) -> str:
    """The database's own words (pandas and SQLAlchemy wrap them, pg8000 in a dict)."""
    while isinstance(err.__cause__, Exception) and not hasattr(err, "orig"):
        err = err.__cause__
    orig = getattr(err, "orig", None) or err
    first = orig.args[0] if getattr(orig, "args", None) else orig
    if isinstance(first, dict) and "M" in first:
        return str(first["M"])
    return one_line(str(orig).split("\n[SQL:")[0])


#: SQLAlchemy backend -> the sqlglot dialect that parses its SQL
_SQL_DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql",
                 "mariadb": "mysql", "oracle": "oracle"}  # fmt: skip


def _check_select(url: str, query: str, backend: str) -> None:
    """Accept exactly one SELECT (or UNION, or WITH ... SELECT) that writes nothing."""
    import sqlglot
    import sqlglot.errors
    import sqlglot.expressions as exp

    if backend not in _SQL_DIALECTS:
        raise ParameterError(
            f"{url}: veil opens SQL sources read-only, and cannot make a {backend} session "
            "read-only; pass --table NAME, or export the query's result to CSV or Parquet"
        )
    try:
        statements = [s for s in sqlglot.parse(query, read=_SQL_DIALECTS[backend]) if s]
    except sqlglot.errors.SqlglotError as err:
        raise ParameterError(
            f"query is not SQL veil can read ({one_line(str(err))}); give a single SELECT"
        ) from err
    writes = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Into,
              exp.Alter, exp.Command, exp.Lock)  # fmt: skip
    if (
        len(statements) != 1
        or not isinstance(statements[0], exp.Query)
        or statements[0].find(*writes) is not None
    ):
        raise ParameterError(
            f"query must be a single SELECT that changes nothing, got {shown(query)}; veil "
            "only reads its input"
        )


def _read_only_engine(address: Any) -> Any:
    """An engine whose connections cannot write: SQLite opened with ``mode=ro`` (which also
    never creates a missing file), PostgreSQL and MySQL sessions set read-only on connect."""
    import sqlite3
    from urllib.parse import quote

    import sqlalchemy as sa

    backend = address.get_backend_name()
    if backend == "sqlite":
        database = address.database or ""
        if database in {"", ":memory:"}:
            return sa.create_engine("sqlite://")
        path = Path(database)
        if not path.is_file():
            raise InputError(f"{path}: no such SQLite database; check the path in the URL")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        return sa.create_engine(
            "sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
        )
    engine = sa.create_engine(address)
    if backend == "postgresql":

        @sa.event.listens_for(engine, "connect")
        def _postgres_read_only(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            cursor.close()
            dbapi_conn.commit()
    elif backend in {"mysql", "mariadb"}:

        @sa.event.listens_for(engine, "connect")
        def _mysql_read_only(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            cursor.close()

    return engine


def _make_read_only(conn: Any, backend: str) -> None:
    """Belt and braces inside the transaction the read runs in."""
    if backend == "sqlite":
        conn.exec_driver_sql("PRAGMA query_only = ON")
    elif backend in {"postgresql", "oracle"}:
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        nested = [f"{f.name} ({f.type})" for f in schema if pa.types.is_nested(f.type)]
        if nested:
            raise InputError(
                f"{path}: nested column(s) {', '.join(nested)}; veil reads tables of plain "
                "values: flatten them into columns first, or drop them"
            )
        return pd.read_parquet(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({one_line(str(err))})") from err


def _read_excel(path: Path, *, sheet: str | int | None) -> pd.DataFrame:
    try:
        # dtype=object: a text cell "0712345678" must stay text, as in CSV; the numbers in
        # numeric cells are already numbers and infer_objects gives them their dtype.
        # header=None: pandas would rename a repeated header "age.1"; CSV and Parquet refuse
        # one, and so does this.
        cells = pd.read_excel(
            path, sheet_name=0 if sheet is None else sheet, dtype=object, header=None
        )
    except ValueError as err:  # unknown sheet
        raise InputError(
            f"{path}: {one_line(str(err))}; pass --sheet with an existing sheet name"
        ) from err
    except Exception as err:  # openpyxl raises many types for corrupt files
        raise InputError(f"{path}: not a readable Excel workbook ({one_line(str(err))})") from err
    if cells.empty:
        raise InputError(f"{path}: the sheet is empty; a table needs a header row")
    header = ["" if pd.isna(h) else str(h).strip() for h in cells.iloc[0]]
    body = cells.iloc[1:].reset_index(drop=True)
    # a column with neither name nor values is formatting, not data
    kept = [i for i, h in enumerate(header) if h or body.iloc[:, i].notna().any()]
    header = [header[i] for i in kept]
    _check_header(path, header, where="row 1")
    body = body.iloc[:, kept]
    body.columns = header
    if body.empty:
        raise InputError(f"{path}: has a header but no data rows")
    return body.infer_objects()


#: Byte-order marks and the codec that reads past them (UTF-32 before UTF-16: its LE mark
#: starts with UTF-16's). Excel's "Unicode text" is UTF-16 with a BOM.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _detect_encoding(path: Path, data: bytes) -> str:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec
    if b"\x00" in data[:_SAMPLE_BYTES]:
        raise InputError(
            f"{path}: contains NUL bytes, so it is not a text (CSV) file; "
            "give Parquet files a .parquet and Excel files an .xlsx extension"
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        from charset_normalizer import from_bytes

        matches = [m for m in from_bytes(data) if m.encoding not in {"utf_8", "ascii"}]
        if not matches:
            line = data.count(b"\n", 0, err.start) + 1
            raise InputError(
                f"{path}: line {line}: byte {data[err.start]:#04x} cannot be decoded as UTF-8 "
                "and no other encoding fits; pass --encoding (e.g. cp1252, latin-1)"
            ) from err
        # Short files fit several single-byte code pages equally well; among the best, take
        # the one spreadsheets on Western/East-African machines write (cp1252).
        least_chaos = min(m.chaos for m in matches)
        tied = [m.encoding for m in matches if m.chaos <= least_chaos + 1e-9]
        for preferred in _PREFERRED_ENCODINGS:
            if preferred in tied:
                return preferred
        return str(tied[0])
    return "utf-8"


def _sniff_delimiter(text: str) -> str:
    try:
        return csv.Sniffer().sniff(text, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _read_csv(path: Path, *, sep: str | None, encoding: str | None) -> pd.DataFrame:
    data = path.read_bytes()
    if encoding is None:
        encoding = _detect_encoding(path, data)
    else:
        try:
            codecs.lookup(encoding)
        except LookupError as err:
            raise ParameterError(
                f"encoding must be a known codec, got {encoding!r}; e.g. utf-8, cp1252, latin-1"
            ) from err
    try:
        # incremental: a sample may end inside a multi-byte character, which is no error
        text_head = codecs.getincrementaldecoder(encoding)().decode(
            data[:_SAMPLE_BYTES], final=len(data) <= _SAMPLE_BYTES
        )
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"{path}: line {line}: byte {data[err.start]:#04x} is not valid {encoding}; "
            "pass the file's real --encoding (e.g. cp1252, latin-1)"
        ) from err
    if len(data) > _SAMPLE_BYTES:  # ... or inside a row
        text_head = text_head.rsplit("\n", 1)[0]
    if not text_head.strip():
        raise InputError(f"{path}: holds no data (only blank lines); a table needs a header row")
    if sep is not None:  # what a shell passes for a tab: the two characters \t, or a word
        sep = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(sep, sep)
    if sep is None:
        sep = _sniff_delimiter(text_head)
    elif len(sep) != 1:
        raise ParameterError(f"sep must be one character, got {sep!r}; e.g. --sep ';'")

    header = next(csv.reader(io.StringIO(text_head), delimiter=sep))
    header = [h.strip() for h in header]
    _check_separator(path, header, sep)
    _check_header(path, header)

    try:
        table = _parse_csv(data, encoding, sep, header)
    except pa.ArrowInvalid as err:
        raise _explain_parse_error(path, data, encoding, sep, len(header), err) from err
    table = table.rename_columns(header)
    if table.num_rows == 0:
        raise InputError(f"{path}: has a header but no data rows")
    frame = pd.DataFrame({name: _infer_column(table.column(name)) for name in header})
    formats = {}
    for name in header:
        form = _text_format(table.column(name), frame[name])
        if form is not None:
            formats[name] = form
    frame.attrs[TEXT_FORMATS] = formats
    return frame


def _text_format(col: pa.ChunkedArray, series: pd.Series) -> str | None:
    """The format that writes ``series`` back as the text ``col`` it was read from, when the
    default writer would not (integers with gaps read as floats, a fixed number of decimals,
    an ISO form other than pandas'); None when the default writes it back already or no one
    format fits every value."""
    valid = col.drop_null()
    if len(valid) == 0:
        return None
    if pd.api.types.is_float_dtype(series):
        if series.isna().any() and pc.all(pc.match_substring_regex(valid, r"^-?\d+$")).as_py():
            return "%d"  # whole numbers with gaps: pandas holds them as floats
        first = str(valid[0].as_py())
        decimals = len(first.split(".", 1)[1]) if "." in first else -1
        pattern = rf"^-?\d+\.\d{{{decimals}}}$"
        if decimals > 0 and pc.all(pc.match_substring_regex(valid, pattern)).as_py():
            return f"%.{decimals}f"
        return None
    if pd.api.types.is_datetime64_any_dtype(series):
        for pattern, form in _ISO_FORMS:
            if pc.all(pc.match_substring_regex(valid, pattern)).as_py():
                return form
    return None


def _parse_csv(data: bytes, encoding: str, sep: str, header: list[str]) -> pa.Table:
    """Arrow's parser, every column as text. A row longer than Arrow's block (1 MB by
    default: a cell holding a document) is read again with blocks large enough for it."""
    block = 1 << 20
    while True:
        try:
            return pacsv.read_csv(
                io.BytesIO(data),
                read_options=pacsv.ReadOptions(
                    encoding=encoding, use_threads=True, block_size=block
                ),
                parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(
                    column_types=dict.fromkeys(header, pa.string()),
                    strings_can_be_null=True,
                ),
            )
        except pa.ArrowInvalid as err:
            if "straddling" not in str(err) or block >= len(data):
                raise
            block = min(block * 8, len(data) + 1)


def _check_separator(path: Path, header: list[str], sep: str) -> None:
    """A header read as one column that holds another delimiter: the separator is wrong."""
    if len(header) != 1:
        return
    for other in _DELIMITERS:
        if other != sep and header[0].count(other) >= 1:
            shown_sep = {"\t": "\\t"}.get(other, other)
            raise InputError(
                f"{path}: with the separator {sep!r} the header is one column, "
                f"{shown(header[0], 60)}, which holds {other!r}: the separator looks like "
                f"{other!r}; pass --sep '{shown_sep}', or leave --sep out to detect it"
            )


def _check_header(path: Path, header: list[str], where: str = "line 1") -> None:
    if any(not h for h in header):
        pos = [i + 1 for i, h in enumerate(header) if not h]
        raise InputError(
            f"{path}: {where}: header field(s) {pos} are empty; every column needs a name"
        )
    dupes = sorted(name for name, count in Counter(header).items() if count > 1)
    if dupes:
        raise InputError(f"{path}: {where}: duplicate column name(s) {dupes}; rename them")


def _explain_parse_error(
    path: Path, data: bytes, encoding: str, sep: str, width: int, err: Exception
) -> InputError:
    """Find the first row whose field count differs from the header's (pyarrow does not say)."""
    text = data.decode(encoding, errors="replace")
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # a cell may be huge
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    for fields in reader:
        if fields and len(fields) != width:
            return InputError(
                f"{path}: line {reader.line_num} has {len(fields)} fields but the header has "
                f"{width} (delimiter {sep!r}); fix that row, quote values containing {sep!r}, "
                "or pass --sep if the delimiter is wrong"
            )
    return InputError(
        f"{path}: cannot be parsed as CSV with delimiter {sep!r} ({one_line(str(err))})"
    )


def _infer_column(col: pa.ChunkedArray) -> pd.Series | np.ndarray:
    """Pick int, float, ISO datetime or text for a column read as text.

    Integers written with a leading zero stay text: ``0712345678`` is a phone number, and
    turning it into 712345678 would lose it. Casts fail fast on the first value that does not
    fit, so text columns cost little.
    """
    if col.null_count == len(col):
        return col.to_pandas()
    with contextlib.suppress(pa.ArrowInvalid):
        ints = pc.cast(col, pa.int64())
        if pc.any(_leading_zero(col)).as_py():
            return col.to_pandas()
        return ints.to_pandas()  # nulls make it float64, as pandas does
    with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
        floats = pc.cast(col, pa.float64())
        return floats.to_pandas()
    valid = col.drop_null()
    sample = valid.slice(0, 1000)
    if (
        pc.all(pc.match_substring_regex(sample, _ISO_DATE_RE)).as_py()
        and pc.all(pc.match_substring_regex(valid, _ISO_DATE_RE)).as_py()
    ):
        with contextlib.suppress(ValueError):
            return pd.to_datetime(col.to_pandas(), format="ISO8601")
    return col.to_pandas()


def _leading_zero(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """True where an integer-looking text starts with 0 and has more digits (``007``)."""
    return pc.match_substring_regex(col, r"^\s*[+-]?0\d")


def _parse_dates(
    frame: pd.DataFrame, dates: Sequence[str], *, dayfirst: bool, date_format: str | None
) -> pd.DataFrame:
    out = frame.copy()
    for name in dates:
        if name not in out.columns:
            raise UnknownColumnError(name, list(map(str, out.columns)), where="dates")
        series = out[name]
        if pd.api.types.is_datetime64_any_dtype(series):
            continue
        try:
            if date_format is not None:
                out[name] = pd.to_datetime(series, format=date_format)
            else:
                out[name] = pd.to_datetime(series, dayfirst=dayfirst, format="mixed")
        except (ValueError, TypeError) as err:
            hint = "--date-format" if date_format is None else "a --date-format that fits"
            reason = one_line(str(err)).split(". You might want to try")[0]  # pandas' own advice
            raise InputError(
                f"column {name!r} cannot be parsed as dates ({reason}); pass {hint}, "
                "e.g. '%d/%m/%y %H:%M' for day-first Kenyan dates"
            ) from err
    return out


# -------------------------------------------------------------------------------------- write


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (), force: bool
) -> Path:
    """Refuse an output path that would destroy data; call it before doing expensive work.

    An input is never overwritten, not even with ``force``; another existing file only with it.
    The file is still created exclusively when it is written (``OutputSet``): a file another
    process makes meanwhile is not replaced either.
    """
    out = Path(path)
    for source in inputs:
        if isinstance(source, str) and "://" in source:
            continue
        if _same_file(out, Path(source)) or out.resolve() == Path(source).resolve():
            raise OutputError(
                f"output {out} is the input file; veil never overwrites its input, "
                "choose another -o path"
            )
    if out.is_dir():
        raise OutputError(f"output {out} is a directory; name a file, e.g. {out}/release.csv")
    if out.exists() and not out.is_file():  # /dev/null, a pipe: never replaced by a file
        raise OutputError(f"output {out} is not a regular file; name a file, e.g. release.csv")
    if out.exists() and not force:
        raise OutputError(f"output {out} already exists; pass --force to overwrite it")
    folder = out.parent
    if not folder.is_dir():
        raise OutputError(f"output folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"output folder {folder} is not writable (permission denied); choose another "
            "folder, or change its permissions"
        )
    return out


# Temporary files are named ".{target}.veil-{pid}.{random}.tmp" beside their target: hidden,
# recognisably veil's, and with the process that owns them, so that the next run can remove
# what a killed run (kill -9, a power cut) left behind without touching a running one's.
_TEMP_MARK = ".veil-"


def _temp_glob(target: Path) -> str:
    import glob

    return f".{glob.escape(target.name)}{_TEMP_MARK}*.tmp"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(path: str | os.PathLike[str]) -> list[Path]:
    """Remove veil's temporary files of ``path`` whose process no longer runs (a run killed
    by kill -9 cannot clean up after itself); warn about each, since they held released rows."""
    target = Path(path)
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    for tmp in target.parent.glob(_temp_glob(target)):
        pid_text = tmp.name[len(target.name) + 1 + len(_TEMP_MARK) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _running(int(pid_text)):
            continue
        with contextlib.suppress(FileNotFoundError):
            size = tmp.stat().st_size
            tmp.unlink()
            removed.append(tmp)
            warnings.warn(
                f"removed {tmp} ({_size(size)}), a partial {target.name} left by a veil run "
                f"that was killed (process {pid_text})",
                CleanupNotice,
                stacklevel=2,
            )
    return removed


def _size(n: int) -> str:
    if n < 1024:
        return f"{n:,} bytes"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_NO_RIGHTS = {errno.EACCES, errno.EPERM, errno.EROFS}


def explain_os_error(err: OSError) -> str:
    """What the operating system said, and what to do about it."""
    why = err.strerror or str(err) or type(err).__name__
    if err.errno in _NO_SPACE:
        return f"{why}; free some space (or raise the file-size limit), or use another folder"
    if err.errno in _NO_RIGHTS:
        return f"{why}; choose another folder, or change its permissions"
    return why


def output_failure(target: Path, err: OSError) -> OutputError:
    """One line with what failed, where, and what to do."""
    return OutputError(f"cannot write {target}: {explain_os_error(err)}")


class OutputSet:
    """The files of one run, written as a set.

    Each file is written to a temporary name beside its target (``stage``); when the block
    ends without an error, all are moved into place together, each created exclusively unless
    ``force`` (two runs writing the same output cannot both succeed). When anything fails
    (disk full, an error, SIGTERM), no file of the set appears and every temporary one is
    removed::

        with OutputSet(force=False, inputs=["data.csv"]) as outputs:
            write_table(release, outputs.stage("release.csv"))
            outputs.stage("certificate.json").write_text(text)
    """

    def __init__(
        self, *, force: bool = False, inputs: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        self.force = force
        self.inputs = list(inputs)
        self._staged: dict[Path, Path] = {}

    def check(self, path: str | os.PathLike[str]) -> Path:
        """Refuse a bad output before the work (``check_output``) and remove the stale
        temporary files a killed run left for it."""
        target = check_output(path, inputs=self.inputs, force=self.force)
        remove_stale_temps(target)
        return target

    def stage(self, path: str | os.PathLike[str], *, permissions: int | None = None) -> Path:
        """A new, empty temporary file to write ``path``'s content into."""
        target = Path(path)
        if target in self._staged:
            raise OutputError(f"{target} is written twice in one run; give distinct outputs")
        self.check(target)
        mode = 0o666 if permissions is None else permissions
        for _ in range(100):
            tmp = target.with_name(
                f".{target.name}{_TEMP_MARK}{os.getpid()}.{os.urandom(4).hex()}.tmp"
            )
            try:
                # created with its final mode (the umask applies, as for a plain open);
                # a key is never readable by others, not even for a moment
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                continue
            except OSError as err:
                raise output_failure(target, err) from err
            os.close(fd)
            if permissions is not None:
                os.chmod(tmp, permissions)
            elif self.force and target.exists():
                os.chmod(tmp, target.stat().st_mode & 0o777)
            self._staged[target] = tmp
            return tmp
        raise OutputError(f"cannot make a temporary file beside {target}")

    def open(self, path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> IO[Any]:
        """``open`` on the staged file of ``path``."""
        encoding = None if "b" in mode else "utf-8"
        return open(self.stage(path, **kwargs), mode, encoding=encoding)

    def commit(self) -> list[Path]:
        """Move every staged file into place; on a failure, remove the ones already placed."""
        placed: list[Path] = []
        try:
            for tmp in self._staged.values():
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
            for target, tmp in self._staged.items():
                _place(tmp, target, force=self.force)
                placed.append(target)
            for folder in {t.parent for t in placed}:
                _fsync_folder(folder)
        except BaseException as err:
            for target in placed:
                with contextlib.suppress(OSError):
                    target.unlink()
            self.discard()
            if isinstance(err, OSError):
                raise output_failure(target, err) from err
            raise
        self._staged.clear()
        return placed

    def discard(self) -> None:
        """Remove every staged file: nothing of this run is placed."""
        for tmp in self._staged.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        self._staged.clear()

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: Any, error: Any, _tb: Any) -> None:
        if kind is not None:
            written = list(self._staged)
            self.discard()
            if isinstance(error, OSError) and not isinstance(error, VeilError):
                where = written[-1] if written else Path(error.filename or "the output")
                raise output_failure(where, error) from error
            return
        self.commit()


def _place(tmp: Path, target: Path, *, force: bool) -> None:
    if force:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # fails if target exists: no check-then-write race
    except FileExistsError as err:
        raise OutputError(
            f"output {target} already exists (another run made it meanwhile?); pass --force "
            "to overwrite it"
        ) from err
    except OSError as err:
        if err.errno not in {errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}:
            raise
        # a file system without hard links: take the name exclusively, then fill it
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError as exists:
            raise OutputError(
                f"output {target} already exists (another run made it meanwhile?); pass "
                "--force to overwrite it"
            ) from exists
        os.replace(tmp, target)
        return
    tmp.unlink()


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike[str],
    *,
    permissions: int | None = None,
    force: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it onto ``path`` only if the block
    succeeds (an existing file is replaced only with ``force``, an input never).

    ``permissions`` (e.g. 0o600 for a key) is set before the file appears under its name.
    """
    with OutputSet(force=force, inputs=inputs) as outputs:
        yield outputs.stage(path, permissions=permissions)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    permissions: int | None = None,
    force: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Iterator[IO[Any]]:
    """Open a file for writing that appears at ``path`` only when fully written."""
    with (
        atomic_path(path, permissions=permissions, force=force, inputs=inputs) as tmp,
        open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh,
    ):
        yield fh


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
    options = {"strings_to_formulas": False, "strings_to_urls": False,
               "strings_to_numbers": False}  # fmt: skip
    out.to_excel(path, index=False, engine="xlsxwriter", engine_kwargs={"options": options})


def write_table(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    fmt: str,
    *,
    formats: dict[str, str] | None = None,
) -> None:
    """Write ``frame`` to ``path`` as ``fmt`` (csv, parquet, xlsx, json), in place: the caller
    gives a staged path (``OutputSet.stage``). A CSV writes each column in ``formats``
    (default: ``frame.attrs[TEXT_FORMATS]``, the form ``read`` found) in that form wherever
    every value fits it exactly, so untransformed columns keep the input's formatting."""
    if fmt == "csv":
        given = frame.attrs.get(TEXT_FORMATS, {}) if formats is None else formats
        _as_written(frame, given).to_csv(path, index=False)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    elif fmt == "xlsx":
        _write_excel(frame, Path(path))
    else:
        frame.to_json(path, orient="records", date_format="iso", force_ascii=False)


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
        decimals = 0 if form == "%d" else int(form[2:-1])
        shown = values[present]
        if not np.all(np.isfinite(shown)) or not np.array_equal(np.round(shown, decimals), shown):
            return None
        if decimals == 0:
            return series.astype("Int64")
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
) -> Path:
    """Write ``frame`` atomically; the format follows the extension unless given. An existing
    file is replaced only with ``force``; an input never."""
    fmt = output_format(path, format)
    check_writable(fmt, path, rows=len(frame), columns=frame.shape[1])
    with OutputSet(force=force, inputs=inputs) as outputs:
        write_table(frame, outputs.stage(path), fmt)
    return Path(path)


def fingerprint(frame: pd.DataFrame, *, sample: int | None = None) -> str:
    """A content hash of a table (values, column names, order) that names it without revealing
    it: SHA-256 over every row, full length. With ``sample``, only that many evenly spaced rows
    and the row count are hashed (milliseconds for 10M rows): a cheap name for a budget
    ledger's dataset, never a certificate's."""
    digest = hashlib.sha256()
    if sample is not None and len(frame) > sample:
        picked = frame.iloc[np.linspace(0, len(frame) - 1, sample).astype(np.int64)]
        digest.update(pd.util.hash_pandas_object(picked, index=False).to_numpy().tobytes())
        digest.update(f"{len(frame)}\x1f".encode())
        digest.update("\x1f".join(map(str, frame.columns)).encode())
        return digest.hexdigest()[:16]
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    return digest.hexdigest() if sample is None else digest.hexdigest()[:16]


def content_sha256(frame: pd.DataFrame) -> str:
    """SHA-256 of every cell of ``frame`` (one pass, full digest), in a canonical text form
    that survives a CSV or Parquet round trip through ``write`` and ``read``: numbers as their
    shortest decimal (12 and 12.0 alike), dates ISO, empty text as missing. A certificate pins
    its release with it, so ``verify`` notices any changed, added or removed cell."""
    digest = hashlib.sha256(f"veil-content-v1\x1f{len(frame)}\x1f{frame.shape[1]}".encode())
    for name in frame.columns:
        digest.update(f"\x1d{len(str(name))}:{name}".encode())
        cells = _canonical_cells(frame[name])
        # offsets (lengths) + bytes + the missing mask: unambiguous, and no Python loop
        missing = cells.is_null().to_numpy(zero_copy_only=False)
        text = pc.fill_null(cells, "")
        digest.update(np.packbits(missing).tobytes())
        for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
            chunk = chunk.cast(pa.large_string())
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64)
            offsets = offsets[chunk.offset : chunk.offset + len(chunk) + 1]
            digest.update(np.diff(offsets).tobytes())
            data = chunk.buffers()[2]
            if data is not None:
                digest.update(memoryview(data)[offsets[0] : offsets[-1]])
    return digest.hexdigest()


def _canonical_cells(series: pd.Series) -> pa.Array:
    """The column as Arrow text, one canonical string (or null) per cell."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    missing = series.isna().to_numpy()
    if pd.api.types.is_bool_dtype(series):
        values = np.where(series.fillna(False).to_numpy(dtype=bool), "True", "False")
    elif pd.api.types.is_integer_dtype(series):  # Arrow's decimal text is str(int)'s
        ints = series.fillna(0).to_numpy(dtype=np.int64)
        return pa.array(ints, mask=missing).cast(pa.string())
    elif pd.api.types.is_float_dtype(series):
        return _float_cells(series.to_numpy(dtype=np.float64, na_value=np.nan), missing)
    elif pd.api.types.is_datetime64_any_dtype(series):
        values = _timestamps(series)
    else:
        try:  # Arrow-backed text passes without a copy
            arrow = pa.array(series, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: canonical cell by cell
            items = series.tolist()
            arrow = pa.array([None if m else _cell(v) for v, m in zip(items, missing, strict=True)],
                             type=pa.string())  # fmt: skip
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        # CSV cannot tell an empty text from a missing one
        return pc.if_else(pc.equal(arrow, ""), pa.scalar(None, pa.string()), arrow)
    return pa.array(np.asarray(values, dtype=object), type=pa.string(), mask=missing)


def _float_cells(values: np.ndarray, missing: np.ndarray) -> pa.Array:
    """``_numbers`` as Arrow text: whole numbers cast in Arrow, the rest by ``repr``."""
    integral = _integral(values)
    whole = pa.array(np.where(integral, values, 0).astype(np.int64)).cast(pa.string())
    if integral.all():
        return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), whole)
    rest = np.full(len(values), None, dtype=object)
    others = ~integral & ~missing
    rest[others] = [repr(float(v)) for v in values[others]]
    cells = pc.if_else(pa.array(integral), whole, pa.array(rest, type=pa.string()))
    return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), cells)


def _integral(values: np.ndarray) -> np.ndarray:
    """Where a float holds a whole number an int64 can hold (written as that integer)."""
    finite = np.isfinite(values)
    return finite & (values == np.floor(np.where(finite, values, 0))) & (np.abs(values) < 2**63)


def _numbers(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    integral = _integral(values)
    out[integral] = values[integral].astype(np.int64).astype(str)
    rest = ~integral
    out[rest] = [repr(float(v)) for v in values[rest]]
    return out


def _timestamps(series: pd.Series) -> np.ndarray:
    stamps = series.dt.tz_localize(None) if series.dt.tz is not None else series
    midnight = (stamps == stamps.dt.normalize()).to_numpy() & (series.dt.tz is None)
    out = series.astype(str).to_numpy(dtype=object)
    out[midnight] = stamps[midnight].dt.strftime("%Y-%m-%d").to_numpy(dtype=object)
    return out


def _cell(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return str(_numbers(np.array([float(value)]))[0])
    if isinstance(value, pd.Timestamp | np.datetime64) or hasattr(value, "isoformat"):
        with contextlib.suppress(ValueError, TypeError):
            return str(_timestamps(pd.Series(pd.to_datetime([value])))[0])
    return str(value)
