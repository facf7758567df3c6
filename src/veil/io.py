"""Reading tables from files, databases and DataFrames; writing releases atomically.

Every read error names the file (and line or column where known) and the fix. Every write goes
to a temporary file beside the target and is renamed into place, so a failure never leaves a
half-written output, and an input file is never overwritten.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import hashlib
import io
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.exceptions import InputError, OutputError, ParameterError, UnknownColumnError

__all__ = [
    "SUPPORTED_OUTPUTS",
    "atomic_path",
    "check_output",
    "fingerprint",
    "read",
    "write",
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
    if dates:
        frame = _parse_dates(frame, dates, dayfirst=dayfirst, date_format=date_format)
    return frame


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: no such file; check the path (relative to {Path.cwd()})")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a data file; name a file inside it")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; a table needs at least a header row")


def _read_sql(url: str, *, table: str | None, query: str | None) -> pd.DataFrame:
    import sqlalchemy as sa

    if (table is None) == (query is None):
        raise ParameterError(
            f"a SQL source needs exactly one of table or query, got table={table!r}, "
            f"query={query!r}; pass --table NAME or --query 'SELECT ...'"
        )
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as err:
        raise InputError(
            f"{url}: not a usable SQLAlchemy URL ({err}); e.g. sqlite:///data.db"
        ) from err
    try:
        with engine.connect() as conn:
            if table is not None:
                if not sa.inspect(conn).has_table(table):
                    names = sa.inspect(conn).get_table_names()
                    raise InputError(
                        f"{url}: table {table!r} does not exist; tables: {', '.join(names)}"
                    )
                return pd.read_sql_table(table, conn)
            return pd.read_sql_query(sa.text(query or ""), conn)
    except sa.exc.SQLAlchemyError as err:
        msg = str(err).splitlines()[0]
        raise InputError(f"{url}: the database refused the read: {msg}") from err
    finally:
        engine.dispose()


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({err})") from err


def _read_excel(path: Path, *, sheet: str | int | None) -> pd.DataFrame:
    try:
        # dtype=object: a text cell "0712345678" must stay text, as in CSV; the numbers in
        # numeric cells are already numbers and infer_objects gives them their dtype.
        frame = pd.read_excel(path, sheet_name=0 if sheet is None else sheet, dtype=object)
    except ValueError as err:  # unknown sheet
        raise InputError(f"{path}: {err}; pass --sheet with an existing sheet name") from err
    except Exception as err:  # openpyxl raises many types for corrupt files
        raise InputError(f"{path}: not a readable Excel workbook ({err})") from err
    return frame.infer_objects()


def _detect_encoding(path: Path, data: bytes) -> str:
    if b"\x00" in data[:_SAMPLE_BYTES]:
        raise InputError(
            f"{path}: contains NUL bytes, so it is not a text (CSV) file; "
            "give Parquet files a .parquet and Excel files an .xlsx extension"
        )
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
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
        text_head = data[:_SAMPLE_BYTES].decode(encoding, errors="strict")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"{path}: line {line}: byte {data[err.start]:#04x} is not valid {encoding}; "
            "pass the file's real --encoding (e.g. cp1252, latin-1)"
        ) from err
    if len(data) > _SAMPLE_BYTES:  # a sample may end inside a multi-byte character or a row
        text_head = text_head.rsplit("\n", 1)[0]
    if not text_head.strip():
        raise InputError(f"{path}: holds no data (only blank lines); a table needs a header row")
    if sep is None:
        sep = _sniff_delimiter(text_head)
    elif len(sep) != 1:
        raise ParameterError(f"sep must be one character, got {sep!r}; e.g. --sep ';'")

    header = next(csv.reader(io.StringIO(text_head), delimiter=sep))
    header = [h.strip() for h in header]
    _check_header(path, header)

    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(encoding=encoding, use_threads=True),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid as err:
        raise _explain_parse_error(path, data, encoding, sep, len(header), err) from err
    table = table.rename_columns(header)
    if table.num_rows == 0:
        raise InputError(f"{path}: has a header but no data rows")
    return pd.DataFrame({name: _infer_column(table.column(name)) for name in header})


def _check_header(path: Path, header: list[str]) -> None:
    if any(not h for h in header):
        pos = [i + 1 for i, h in enumerate(header) if not h]
        raise InputError(
            f"{path}: line 1: header field(s) {pos} are empty; every column needs a name"
        )
    dupes = sorted(name for name, count in Counter(header).items() if count > 1)
    if dupes:
        raise InputError(f"{path}: line 1: duplicate column name(s) {dupes}; rename them")


def _explain_parse_error(
    path: Path, data: bytes, encoding: str, sep: str, width: int, err: Exception
) -> InputError:
    """Find the first row whose field count differs from the header's (pyarrow does not say)."""
    text = data.decode(encoding, errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    for fields in reader:
        if fields and len(fields) != width:
            return InputError(
                f"{path}: line {reader.line_num} has {len(fields)} fields but the header has "
                f"{width} (delimiter {sep!r}); fix that row, quote values containing {sep!r}, "
                "or pass --sep if the delimiter is wrong"
            )
    return InputError(f"{path}: cannot be parsed as CSV with delimiter {sep!r}: {err}")


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
            raise InputError(
                f"column {name!r} cannot be parsed as dates ({err}); pass {hint}, "
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
    if out.exists() and not force:
        raise OutputError(f"output {out} already exists; pass --force to overwrite it")
    if not out.parent.exists():
        raise OutputError(f"output folder {out.parent} does not exist; create it first")
    return out


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, permissions: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    ``permissions`` (e.g. 0o600 for a key) is set before the file appears under its name.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp makes the file private (0600); give it the mode a plain open() would have
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
    if permissions is not None:
        mode = permissions
    try:
        yield tmp_path
        tmp_path.chmod(mode)
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "w", *, permissions: int | None = None
) -> Iterator[IO[Any]]:
    """Open a file for writing that appears at ``path`` only when fully written."""
    with (
        atomic_path(path, permissions=permissions) as tmp,
        open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh,
    ):
        yield fh


def output_format(path: str | os.PathLike[str], format: str | None = None) -> OutputFormat:
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


def write(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    force: bool = False,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Write ``frame`` atomically; the format follows the extension unless given."""
    fmt = output_format(path, format)
    out = check_output(path, inputs=inputs, force=force)
    with atomic_path(out) as tmp:
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        elif fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        elif fmt == "xlsx":
            frame.to_excel(tmp, index=False, engine="openpyxl")
        else:
            frame.to_json(tmp, orient="records", date_format="iso", force_ascii=False)
    return out


def fingerprint(frame: pd.DataFrame, *, sample: int = 10_000) -> str:
    """A content hash of a table (values, column names, order): names a dataset in ledgers and
    certificates without revealing it. Beyond ``sample`` rows, evenly spaced rows and the row
    count are hashed, so naming a 10M-row table costs milliseconds, not a full pass."""
    if len(frame) > sample:
        picked = frame.iloc[np.linspace(0, len(frame) - 1, sample).astype(np.int64)]
        rows = pd.util.hash_pandas_object(picked, index=False).to_numpy()
        digest = hashlib.sha256(rows.tobytes())
        digest.update(f"{len(frame)}\x1f".encode())
        digest.update("\x1f".join(map(str, frame.columns)).encode())
        return digest.hexdigest()[:16]
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256(rows.tobytes())
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    return digest.hexdigest()[:16]


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
    elif pd.api.types.is_integer_dtype(series):
        values = series.fillna(0).to_numpy(dtype=np.int64).astype(str)
    elif pd.api.types.is_float_dtype(series):
        values = _numbers(series.to_numpy(dtype=np.float64, na_value=np.nan))
    elif pd.api.types.is_datetime64_any_dtype(series):
        values = _timestamps(series)
    else:
        items = series.tolist()
        try:
            arrow = pa.array(items, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: canonical cell by cell
            arrow = pa.array([None if m else _cell(v) for v, m in zip(items, missing, strict=True)],
                             type=pa.string())  # fmt: skip
        # CSV cannot tell an empty text from a missing one
        return pc.if_else(pc.equal(arrow, ""), pa.scalar(None, pa.string()), arrow)
    return pa.array(np.asarray(values, dtype=object), type=pa.string(), mask=missing)


def _numbers(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    finite = np.isfinite(values)
    integral = finite & (values == np.floor(np.where(finite, values, 0))) & (np.abs(values) < 2**63)
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
