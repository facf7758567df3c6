"""Reading files: CSV (encoding and delimiter detected, types inferred, each column's
text form kept), Parquet and Excel."""

from __future__ import annotations

import codecs
import contextlib
import csv
import glob
import io
import mmap
import os
import re
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.csv as pacsv  # pyarrow.compute is imported where text is typed, not to read

from veil.exceptions import (
    InputError,
    ParameterError,
    UnknownColumnError,
    one_line,
    shown,
)
from veil.io._packed import PACKED_SUFFIXES

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: Arrow alone reads and types
    import numpy as np
    import pandas as pd

EXCEL_SUFFIXES = {".xlsx", ".xlsm", ".xls"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
_DELIMITERS = ",;\t|"
_SAMPLE_BYTES = 1 << 16
#: The start of a CSV file whose UTF-8 decides its encoding (Arrow checks the rest as it parses)
_UTF8_HEAD = 1 << 20
_PREFERRED_ENCODINGS = ("cp1252", "latin_1", "iso8859_15")
_ISO_DATE_RE = r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$"

#: ``frame.attrs`` key of a table read from CSV: per column, the form its values were written
#: in (``%.2f``, ``%d``, ``%Y-%m-%dT%H:%M``), so that a column veil leaves as it is goes back
#: out as it came in (``62`` stays ``62`` in a column with gaps, ``1.50`` stays ``1.50``).
TEXT_FORMATS = "veil.text_formats"
#: the forms pandas writes dates in by itself (date only when every time is midnight)
_PANDAS_DATE_FORMS = {"%Y-%m-%d", "%Y-%m-%d %H:%M:%S"}
#: the ISO date forms a column may share, each with the strftime format that writes it
_ISO_FORMS = (
    (r"^\d{4}-\d{2}-\d{2}$", "%Y-%m-%d"),
    (r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$", "%Y-%m-%d %H:%M"),
    (r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$", "%Y-%m-%dT%H:%M"),
    (r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", "%Y-%m-%d %H:%M:%S"),
    (r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$", "%Y-%m-%dT%H:%M:%S"),
)


# --------------------------------------------------------------------------------------- read


#: The suffixes of a CSV file read a batch at a time (none: a file named without one).
_CSV_SUFFIXES = frozenset({".csv", ".txt", ".tsv", ""})
#: The suffixes of a compressed file Arrow unpacks as it reads (gzip, bzip2, zstd: its own
#: codecs; an xz file it cannot, and is unpacked whole, in memory).
_STREAMED_PACKINGS = frozenset(s for s, codec in PACKED_SUFFIXES.items() if codec != "xz")


def is_streamable(source: object) -> bool:
    """Whether ``source`` names files veil can read a batch at a time (CSV, Parquet; a CSV
    compressed with gzip, bzip2 or zstd too)."""
    if not isinstance(source, str | os.PathLike) or "://" in str(source):
        return False
    text = str(source)
    if glob.has_magic(text) or Path(text).is_dir():
        return True
    suffixes = [s.lower() for s in Path(text).suffixes[-2:]]
    if suffixes and suffixes[-1] in _STREAMED_PACKINGS:
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    return last in {*PARQUET_SUFFIXES, *_CSV_SUFFIXES}


def check_readable(path: Path) -> None:
    """Refuse a path that is missing, a folder or empty, saying which and what to do."""
    if not path.exists():
        raise InputError(f"{path}: no such file; check the path (relative to {Path.cwd()})")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a data file; name a file inside it")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; a table needs at least a header row")


def read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file as a DataFrame; a file that is not Parquet is an ``InputError``."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        check_header(path, schema.names, "the Parquet schema")  # Arrow's words do not say it
        nested = [f"{f.name} ({f.type})" for f in schema if pa.types.is_nested(f.type)]
        if nested:
            raise InputError(
                f"{path}: nested column(s) {', '.join(nested)}; veil reads tables of plain "
                "values: flatten them into columns first, or drop them"
            )
        import pandas as pd

        return pd.read_parquet(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({one_line(str(err))})") from err


#: bytes of a file decoded at a time when veil transcodes it to UTF-8 for Arrow
_TRANSCODE_BYTES = 1 << 24


def arrow_source(data: bytes | pa.Buffer | Path, encoding: str = "utf-8") -> pa.NativeFile:
    """What Arrow reads ``data`` (bytes or a file, in ``encoding``) from, as UTF-8, holding
    only Arrow's own objects.

    Arrow's threaded readers drop their last reference to their source on one of Arrow's own
    threads. A source holding a Python object (a file object, a bytes object, the Python codec
    pyarrow transcodes through) then takes the GIL there, and if the interpreter is exiting by
    then the process aborts ("terminate called without an active exception": 2 of 180
    ``veil budget init`` processes, six at a time, with pyarrow 26). So a UTF-8 file is Arrow's
    own file, bytes are copied into Arrow's memory (Arrow's own buffer is read where it is),
    and another encoding is decoded here into Arrow's memory (the whole file as UTF-8: what a
    read into memory holds anyway)."""
    utf8 = codecs.lookup(encoding).name == "utf-8"
    if isinstance(data, Path) and utf8:
        return pa.OSFile(str(data))
    if isinstance(data, pa.Buffer) and utf8:
        return pa.BufferReader(data)
    sink = pa.BufferOutputStream()
    if utf8:
        sink.write(data)
    else:
        decoder = codecs.getincrementaldecoder(encoding)()
        for piece in _pieces(data, _TRANSCODE_BYTES):
            sink.write(decoder.decode(piece).encode("utf-8"))
        sink.write(decoder.decode(b"", final=True).encode("utf-8"))
    return pa.BufferReader(sink.getvalue())


def _pieces(data: bytes | pa.Buffer | Path, size: int) -> Iterator[bytes]:
    """``data`` (bytes, Arrow's buffer or a file) ``size`` bytes at a time."""
    if isinstance(data, pa.Buffer):
        for start in range(0, data.size, size):
            yield data.slice(start, min(size, data.size - start)).to_pybytes()
        return
    with open(data, "rb") if isinstance(data, Path) else io.BytesIO(data) as file:
        while piece := file.read(size):
            yield piece


def parquet_frame(data: bytes) -> pd.DataFrame:
    """A Parquet file's bytes as a DataFrame (read from Arrow's memory: ``arrow_source``)."""
    import pandas as pd

    return pd.read_parquet(arrow_source(data))


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as a Parquet file's bytes (without its index), written into Arrow's memory."""
    sink = pa.BufferOutputStream()
    frame.to_parquet(sink, index=False)
    return sink.getvalue().to_pybytes()


def read_excel(path: Path, *, sheet: str | int | None) -> pd.DataFrame:
    """A sheet of an Excel workbook (the first unless ``sheet``) as a DataFrame."""
    import pandas as pd

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
    check_header(path, header, where="row 1")
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


def _detect_encoding(path: Path, data: bytes, complete: bool = True) -> str:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec
    if b"\x00" in data[:_SAMPLE_BYTES]:
        raise InputError(
            f"{path}: contains NUL bytes, so it is not a text (CSV) file; "
            "give Parquet files a .parquet and Excel files an .xlsx extension"
        )
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=complete)
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


def csv_dialect(
    path: Path, data: bytes, *, sep: str | None, encoding: str | None, complete: bool = True
) -> tuple[str, str, list[str]]:
    """(encoding, delimiter, header) of a CSV file whose bytes are ``data`` (only its start
    when not ``complete``: a file streamed in batches): detected unless given, the header
    checked (one column that holds another delimiter, empty or repeated names)."""
    if encoding is None:
        encoding = _detect_encoding(path, data, complete)
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
            data[:_SAMPLE_BYTES], final=complete and len(data) <= _SAMPLE_BYTES
        )
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"{path}: line {line}: byte {data[err.start]:#04x} is not valid {encoding}; "
            "pass the file's real --encoding (e.g. cp1252, latin-1)"
        ) from err
    if len(data) > _SAMPLE_BYTES or not complete:  # ... or inside a row
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
    check_header(path, header)
    return encoding, sep, header


def read_csv(path: Path, *, sep: str | None, encoding: str | None) -> pd.DataFrame:
    """A CSV file as a DataFrame: encoding and delimiter detected unless given, every column
    read as text and then typed (integers, floats, ISO dates; leading-zero numbers stay text),
    and each column's text form recorded in ``frame.attrs[TEXT_FORMATS]``.
    """
    import pandas as pd

    columns, formats = {}, {}
    for name, column in read_csv_typed(path, sep=sep, encoding=encoding).items():
        columns[name], form = column.to_pandas()
        if form is not None:
            formats[name] = form
    frame = pd.DataFrame(columns)
    frame.attrs[TEXT_FORMATS] = formats
    return frame


def read_csv_typed(path: Path, *, sep: str | None, encoding: str | None) -> dict[str, Typed]:
    """A CSV file's columns read and typed by Arrow (``read_csv`` without pandas): each
    column's kind and values, by name in the header's order."""
    header, table = read_csv_text(path, sep=sep, encoding=encoding)
    return {name: typed_column(table.column(name)) for name in header}


#: The first bytes of each kind of compressed file a CSV may come in, its name, and its codec
#: (``unpack``'s).
_COMPRESSED = (
    (b"\x1f\x8b", "gzip", "gzip"),
    (b"BZh", "bzip2", "bz2"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd"),
    (b"\xfd7zXZ\x00", "xz", "xz"),
)


def decompressed(path: Path, *, most: int | None = None) -> pa.Buffer | None:
    """A compressed CSV file's bytes unpacked (gzip, bzip2, zstd or xz, told by its first
    bytes, whatever its name), or None for a file that is not compressed. Arrow unpacks into
    its own memory, on the caller's thread (``arrow_source`` says why). A ZIP archive may hold
    several files: it is refused, saying to extract the one meant. A file that unpacks to more
    than ``most`` bytes (a quarter of this machine's memory: as a table the text takes several
    times its size) is refused as soon as it has, so a small hostile file (a "zip bomb")
    cannot fill the memory."""
    kind = packing(path)
    if kind is None:
        return None
    name, codec = kind
    most = memory_bytes() // 4 if most is None else most
    try:
        unpacked = unpack(path, codec, most)
    except (OSError, EOFError, pa.ArrowException) as err:
        raise InputError(
            f"{path}: a {name} file that does not unpack ({one_line(str(err))}); check it "
            "was copied whole"
        ) from err
    if unpacked is None:
        raise InputError(
            f"{path}: unpacks to more than {most / 1e9:,.1f} GB, a quarter of this machine's "
            "memory (a table takes several times its text); give --streaming"
            + (
                " (unpack an xz file first, or repack it with gzip or zstd)"
                if codec == "xz"
                else ""
            )
        )
    return unpacked


def packing(path: Path) -> tuple[str, str] | None:
    """(name, codec) of the compression of a file, told by its first bytes whatever its name,
    or None for a file that is not compressed. A ZIP archive, which may hold several files, is
    an ``InputError`` saying to extract the one meant."""
    with open(path, "rb") as file:
        magic = file.read(6)
    if magic.startswith(b"PK\x03\x04"):
        raise InputError(
            f"{path}: a ZIP archive, which may hold several files; extract the CSV file "
            f"meant (unzip {path.name}) and give that"
        )
    kind = next((k for k in _COMPRESSED if magic.startswith(k[0])), None)
    return None if kind is None else (kind[1], kind[2])


def unpack(source: bytes | Path, codec: str, most: int) -> pa.Buffer | None:
    """``source`` (a file, or its bytes) unpacked by ``codec`` (gzip, bz2, zstd or xz) into
    Arrow's memory, ``_UNPACK_BYTES`` at a time on the caller's thread; None once it passes
    ``most`` bytes, so a small hostile file cannot fill the memory. Bytes that do not unpack
    raise ``OSError``, ``EOFError`` or Arrow's error. The text stays in Arrow's buffer, which
    Arrow parses where it is (a Python copy of it held the text twice more)."""
    import lzma

    sink = pa.BufferOutputStream()
    if codec == "xz":  # Python's lzma, as Arrow has no codec for it
        decoder = lzma.LZMADecompressor()
        with open(source, "rb") if isinstance(source, Path) else io.BytesIO(source) as file:
            while not decoder.eof:
                packed = b"" if decoder.needs_input is False else file.read(_UNPACK_BYTES)
                if not packed and decoder.needs_input:
                    raise EOFError("the file ends before its compressed stream")
                try:
                    sink.write(decoder.decompress(packed, max_length=_UNPACK_BYTES))
                except lzma.LZMAError as err:
                    raise OSError(str(err)) from err
                if sink.tell() > most:
                    return None
    else:
        raw = pa.OSFile(str(source)) if isinstance(source, Path) else pa.BufferReader(source)
        with pa.CompressedInputStream(raw, codec) as stream:
            while piece := stream.read(_UNPACK_BYTES):
                sink.write(piece)
                if sink.tell() > most:
                    return None
    return sink.getvalue()


def memory_bytes() -> int:
    """This machine's physical memory in bytes."""
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


#: bytes of a compressed file's text unpacked at a time
_UNPACK_BYTES = 1 << 24


def read_csv_text(
    path: Path,
    *,
    sep: str | None,
    encoding: str | None,
    columns: Sequence[str] | None = None,
    where: str = "",
    dictionary: bool = False,
) -> tuple[list[str], pa.Table]:
    """A CSV file's header and its columns as text, as ``read_csv`` reads them before typing
    them: only ``columns`` when given (one the header lacks is an ``UnknownColumnError``
    naming ``where`` it was asked for); with ``dictionary``, each column dictionary-encoded
    as it is parsed (its chunks' dictionaries unified), for a caller that counts values."""
    unpacked = decompressed(path)  # Arrow's buffer, parsed where it is
    size = path.stat().st_size if unpacked is None else unpacked.size
    large = size > _UTF8_HEAD  # parsed by Arrow from the file (or the unpacked buffer) itself
    source: bytes | pa.Buffer | Path
    if unpacked is not None:
        data = unpacked.slice(0, min(size, _UTF8_HEAD)).to_pybytes()
        source = unpacked if large else data
    else:
        with open(path, "rb") as file:
            data = file.read(_UTF8_HEAD) if large else file.read()
        source = path if large else data
    # an encoding to detect is judged on the file's first MB: UTF-8 there, Arrow's parser
    # checks the rest (a file that is no UTF-8 further on is then judged whole, as before)
    head = large and encoding is None
    given = encoding
    encoding, sep, header = csv_dialect(path, data, sep=sep, encoding=encoding, complete=not large)
    missing = [name for name in columns or () if name not in header]
    if missing:
        raise UnknownColumnError(missing[0], header, where=where)
    try:
        table = _parse_csv(source, encoding, sep, header, columns, dictionary)
    except pa.ArrowInvalid as err:
        whole = (
            (path.read_bytes() if unpacked is None else unpacked.to_pybytes()) if large else data
        )
        if head and encoding == "utf-8" and "UTF8" in str(err):
            detected = csv_dialect(path, whole, sep=sep, encoding=given)[0]
            if detected != "utf-8":
                return read_csv_text(
                    path,
                    sep=sep,
                    encoding=detected,
                    columns=columns,
                    where=where,
                    dictionary=dictionary,
                )
        raise _explain_parse_error(path, whole, encoding, sep, len(header), err) from err
    if table.num_rows == 0:
        raise InputError(f"{path}: has a header but no data rows")
    return header, table.unify_dictionaries() if dictionary else table


def _decimals_form(col: pa.ChunkedArray) -> str | None:
    """``%.2f`` when every value of a float column has the same 2+ decimals (``1.50``), which
    the default writer would shorten (``1.5``); None otherwise (one decimal it keeps)."""
    import pyarrow.compute as pc

    valid = col.drop_null()
    first = str(valid[0].as_py()) if len(valid) else ""
    decimals = len(first.split(".", 1)[1]) if re.fullmatch(r"-?\d+\.\d+", first) else 0
    if decimals < 2:
        return None
    every = pc.all(pc.match_substring_regex(valid, rf"^-?\d+\.\d{{{decimals}}}$")).as_py()
    return f"%.{decimals}f" if every else None


def _date_form(valid: pa.ChunkedArray) -> str | None:
    """The ISO form every value of a date column shares, when the default writer would write
    another (``2021-04-04T12:05``, ``2013-11-14 01:12``); None for pandas' own forms."""
    import pyarrow.compute as pc

    first = str(valid[0].as_py())
    for pattern, form in _ISO_FORMS:
        if re.match(pattern, first):
            if form in _PANDAS_DATE_FORMS:
                return None
            every = pc.all(pc.match_substring_regex(valid, pattern)).as_py()
            return form if every else None
    return None


#: bytes of a file mapped at a time when looking for a quote in it
_QUOTE_SCAN_BYTES = 1 << 24


def may_quote(data: bytes | pa.Buffer | Path, encoding: str) -> bool:
    """Whether a CSV text may hold a quoted value, so a line break inside a value: False only
    when the quote character is a byte ``"`` in ``encoding`` (UTF-8, Latin, UTF-16, ...) and
    no such byte is in ``data`` (or the file). Without a quote every line break ends a row, and
    Arrow's parser may split its blocks at line breaks, which is faster than lexing quotes."""
    try:
        quote = '"'.encode(encoding)
    except (LookupError, UnicodeError):
        return True
    if b'"' not in quote:  # an EBCDIC page: the byte search would say nothing
        return True
    if isinstance(data, bytes):
        return b'"' in data
    if isinstance(data, pa.Buffer):  # a window at a time: no copy of the whole text
        return any(b'"' in piece for piece in _pieces(data, _QUOTE_SCAN_BYTES))
    with open(data, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        try:  # mapped a window at a time: no copy, and no more memory than a window
            for start in range(0, size, _QUOTE_SCAN_BYTES):
                length = min(_QUOTE_SCAN_BYTES, size - start)
                with mmap.mmap(file.fileno(), length, offset=start, access=mmap.ACCESS_READ) as m:
                    if m.find(b'"') >= 0:
                        return True
        except (OSError, ValueError):  # not a file that maps (a pipe): lex the quotes
            return True
    return False


def _parse_csv(
    data: bytes | pa.Buffer | Path,
    encoding: str,
    sep: str,
    header: list[str],
    columns: Sequence[str] | None = None,
    dictionary: bool = False,
) -> pa.Table:
    """Arrow's parser, every column as text (only ``columns`` when given; dictionary-encoded
    text with ``dictionary``). A row longer than Arrow's block (4 MB at first: a cell
    holding a document) is read again with blocks large enough for it."""
    text = pa.dictionary(pa.int32(), pa.string()) if dictionary else pa.string()
    block = 1 << 22
    quoted = may_quote(data, encoding)
    while True:
        # a large file in UTF-8 is read by Arrow from the file itself (no copy in memory first)
        source = arrow_source(data, encoding)
        try:
            with source:
                return pacsv.read_csv(
                    source,
                    # the header's names as veil reads them (spaces trimmed: " State-gov"), so
                    # every column is read as text whatever its header holds
                    read_options=pacsv.ReadOptions(
                        encoding="utf-8",  # arrow_source's
                        use_threads=True,
                        block_size=block,
                        skip_rows=1,
                        column_names=header,
                    ),
                    parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=quoted),
                    convert_options=pacsv.ConvertOptions(
                        column_types=dict.fromkeys(header, text),
                        strings_can_be_null=True,
                        include_columns=list(columns) if columns is not None else None,
                    ),
                )
        except pa.ArrowInvalid as err:
            size = data.stat().st_size if isinstance(data, Path) else len(data)
            if "straddling" not in str(err) or block >= size:
                raise
            block = min(block * 8, size + 1)


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


def check_header(path: Path, header: list[str], where: str = "line 1") -> None:
    if any(not h for h in header):
        pos = [i + 1 for i, h in enumerate(header) if not h]
        # a spreadsheet's export often ends every line with a delimiter: an unnamed last column
        trailing = pos == [len(header)] and where == "line 1"
        raise InputError(
            f"{path}: {where}: header field(s) {pos} are empty; every column needs a name"
            + (": name it, or remove the delimiter that ends every line" if trailing else "")
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
            # a title above the table ("Claims export 2026-01-01") read as its header
            above = width == 1 and len(fields) > 1
            return InputError(
                f"{path}: line {reader.line_num} has {len(fields)} fields but the header has "
                f"{width} (delimiter {sep!r}); fix that row, quote values containing {sep!r}, "
                + (
                    "or, if the header is further down, remove the lines above it"
                    if above
                    else "or pass --sep if the delimiter is wrong"
                )
            )
    return InputError(
        f"{path}: cannot be parsed as CSV with delimiter {sep!r} ({one_line(str(err))})"
    )


#: What ``typed_column`` makes of a column read as text.
Kind = Literal["empty", "int", "float", "date", "text"]


@dataclass(frozen=True)
class Typed:
    """A CSV column as read typed (``typed_column``): its kind, its values in Arrow (int64,
    float64, or the text itself for dates and text) and the form that writes it back as it was
    read where the default writer would not (``TEXT_FORMATS``)."""

    kind: Kind
    values: pa.ChunkedArray
    form: str | None = None

    def to_pandas(self) -> tuple[pd.Series | np.ndarray, str | None]:
        """The column as pandas holds it (ints with gaps as float64, as pandas does; ISO
        dates as datetimes, or text when pandas cannot parse them), and its form."""
        if self.kind == "date":
            import pandas as pd

            with contextlib.suppress(ValueError):
                return pd.to_datetime(self.values.to_pandas(), format="ISO8601"), self.form
            return self.values.to_pandas(), None
        return self.values.to_pandas(), self.form


def typed_column(col: pa.ChunkedArray) -> Typed:
    """Pick int, float, ISO datetime or text for a column read as text, and the form that
    writes it back as it was read where the default writer would not (``TEXT_FORMATS``).

    A value that is not a plain number keeps its column text (``any_not_plain``):
    ``0712345678`` and ``+254712345678`` are phone numbers, and 712345678 or 254712345678.0
    would lose what they are. Each cast and pattern is tried on the first 1,000 values before
    the whole column (``cast_values``).
    """
    if col.null_count == len(col):
        return Typed("empty", col)
    ints = cast_values(col, pa.int64())
    if ints is not None:
        if any_not_plain(col):
            return Typed("text", col)
        # nulls make it float64, as pandas does: written back as whole numbers
        return Typed("int", ints, "%d" if col.null_count else None)
    floats = cast_values(col, pa.float64())
    if floats is not None:
        if any_not_plain(col):
            return Typed("text", col)
        return Typed("float", floats, _decimals_form(col))
    valid = col.drop_null()
    if all_match(valid, _ISO_DATE_RE):
        return Typed("date", col, _date_form(valid))
    return Typed("text", col)


#: the values a column's text is tried on before all of it (``cast_values``, ``all_match``)
_HEAD = 1000


def _head_first(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | pa.ChunkedArray, ...]:
    return (values.slice(0, _HEAD), values) if len(values) > _HEAD else (values,)


def cast_values(values: pa.Array | pa.ChunkedArray, to: pa.DataType) -> Any:
    """``values`` (text) cast to ``to``, or None when one of them does not read as it. The
    cast is tried on the first 1,000 values before all of them: Arrow's cast reads every value
    before it fails (0.23 s for 1M distinct texts), and a value that does not fit fails the
    whole cast, so a text column costs little."""
    import pyarrow.compute as pc

    cast = None
    for part in _head_first(values):
        try:
            cast = pc.cast(part, to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return cast


def all_match(values: pa.Array | pa.ChunkedArray, pattern: str) -> bool:
    """Whether every one of ``values`` (text, no nulls) matches ``pattern``: tried on the
    first 1,000 values before all of them, as ``cast_values``."""
    import pyarrow.compute as pc

    return all(
        pc.all(pc.match_substring_regex(part, pattern)).as_py() for part in _head_first(values)
    )


def as_kind(kind: Kind, col: pa.ChunkedArray | pa.Array) -> Typed:
    """Text of a column whose kind ``typed_column`` decided (on these values or on more), as
    that kind holds it."""
    import pyarrow.compute as pc

    chunked = col if isinstance(col, pa.ChunkedArray) else pa.chunked_array([col])
    if kind == "int":
        return Typed("int", pc.cast(chunked, pa.int64()))
    if kind == "float":
        return Typed("float", pc.cast(chunked, pa.float64()))
    return Typed(kind, chunked)


#: A number written so that reading it as one would change it: a leading ``+`` (a country
#: code), a leading zero before more digits (``007``, a trunk prefix), or more than 15
#: digits before the point (beyond what a float keeps exactly; card and account numbers).
_NOT_PLAIN = r"^\s*\+|^\s*-?0\d|^\s*-?\d{16}"


def text_buffers(chunk: pa.Array) -> tuple[np.ndarray, memoryview]:
    """An Arrow text array's cells as Arrow holds them, without a Python loop over them: where
    each one ends (int64, one more than the cells, the first 0) and their bytes one after
    another (either offset width; a slice read from its own offset)."""
    import numpy as np

    _, offsets, data = chunk.buffers()
    if offsets is None or data is None or len(chunk) == 0:
        return np.zeros(len(chunk) + 1, dtype=np.int64), memoryview(b"")
    wide = "<i8" if pa.types.is_large_string(chunk.type) else "<i4"
    ends = np.frombuffer(offsets, dtype=wide)[chunk.offset : chunk.offset + len(chunk) + 1]
    ends = ends.astype(np.int64)
    return ends - ends[0], memoryview(data)[int(ends[0]) : int(ends[-1])]


def any_not_plain(col: pa.ChunkedArray | pa.Array) -> bool:
    """Whether one of a number column's texts is not a plain number (``_NOT_PLAIN``): such a
    column stays text, as written. Only a text that may be one is matched: its first byte a
    sign, a zero, a space or not ASCII, or 16 bytes or more (a gather over Arrow's offsets,
    where the expression read every text: 0.04 s of 0.05 s typing 500,000 rows of adult)."""
    import numpy as np
    import pyarrow.compute as pc

    signs = np.frombuffer(_MAY_NOT_BE_PLAIN, dtype=np.uint8)
    for chunk in col.chunks if isinstance(col, pa.ChunkedArray) else [col]:
        ends, data = text_buffers(chunk)
        starts, lengths = ends[:-1], np.diff(ends)
        first = np.frombuffer(data, dtype=np.uint8)[starts[lengths > 0]]
        may = np.zeros(len(lengths), dtype=bool)
        may[lengths > 0] = np.isin(first, signs) | (first >= 0x80)
        may |= lengths >= 16
        if may.any():
            maybe = chunk.filter(pa.array(may & chunk.is_valid().to_numpy(zero_copy_only=False)))
            if pc.any(pc.match_substring_regex(maybe, _NOT_PLAIN)).as_py():
                return True
    return False


#: First bytes a text ``_NOT_PLAIN`` matches may begin with (beside digits of long texts):
#: ASCII spaces, ``+``, ``-`` and ``0``.
_MAY_NOT_BE_PLAIN = b"\t\n\v\f\r +-0"


def parse_dates(
    frame: pd.DataFrame,
    dates: Sequence[str],
    *,
    dayfirst: bool | None,
    date_format: str | None,
    coerce: bool = False,
) -> pd.DataFrame:
    """``frame`` with the columns ``dates`` parsed as dates (``_dates.parse_dates_column``:
    the order detected unless ``dayfirst`` or ``date_format`` say it); what reading decided
    (mixed orders, values read as missing) is a ``DateNotice`` warning."""
    from veil.io._dates import DateNotice, parse_dates_column

    out = frame.copy()
    for name in dates:
        if name not in out.columns:
            raise UnknownColumnError(name, list(map(str, out.columns)), where="dates")
        out[name], reading = parse_dates_column(
            out[name], name, dayfirst=dayfirst, date_format=date_format, coerce=coerce
        )
        for note in reading.notes():
            warnings.warn(note, DateNotice, stacklevel=3)
    return out


# -------------------------------------------------------------------------------------- write
