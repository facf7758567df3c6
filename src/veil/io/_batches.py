"""Tables larger than memory, a batch of rows at a time: CSV through Arrow's streaming reader
(every column typed as ``read`` types it, decided over all rows: in a reading of their own, or
presumed from the first batch and confirmed as the first pass reads every row), Parquet
(one file, a folder or a glob of them) through Arrow's batch reader; and the writer that puts
a release's batches into one CSV or Parquet file.

A batch is a pandas DataFrame with the dtypes ``read`` would give the whole table, so the
transforms, hierarchies and hashes veil applies to a table give the same result batch by batch.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import glob
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.exceptions import InputError, ParameterError, one_line
from veil.io._content import dictionary_codes, remember_codes
from veil.io._csvout import write_any
from veil.io._files import (
    _ISO_DATE_RE,
    _ISO_FORMS,
    _PANDAS_DATE_FORMS,
    _TRANSCODE_BYTES,
    PARQUET_SUFFIXES,
    TEXT_FORMATS,
    all_match,
    any_not_plain,
    arrow_source,
    cast_values,
    check_header,
    check_readable,
    csv_dialect,
    is_streamable,
    may_quote,
    packing,
)
from veil.io._formulas import escape_formulas
from veil.io._pieces import CodedParquet, decoded
from veil.io._write import _as_written

__all__ = ["BatchWriter", "TableStream", "is_streamable"]

#: Bytes of a CSV file read to detect its encoding and delimiter.
_HEAD_BYTES = 1 << 24
#: Arrow's block: rows are parsed this many bytes at a time, a row longer than it stopping
#: the reading (``_LongRowError``). The first reading starts with 4 MB blocks and, at a longer row,
#: starts again with blocks 4x as large, up to 256 MB. (Arrow reads blocks ahead: 10M rows of
#: adult streamed from CSV peaked at 2.9 GB with 16 MB blocks, at 2.0 GB with 4 MB blocks.)
_BLOCK_BYTES = 1 << 22
_LARGEST_BLOCK_BYTES = 1 << 28


class _LongRowError(InputError):
    """A CSV row longer than the block Arrow parsed it in."""


class UnsettledTypesError(InputError):
    """A CSV file's types presumed from its first batch (``TableStream.presume``), then met
    a batch that types a column otherwise, or a row longer than the block: the reading stops,
    to be made again after a reading that types every row (``typed_as_read``)."""


@dataclass
class _Column:
    """What a column's text allows over every row so far (``read``'s rules, kept per batch)."""

    values: int = 0
    nulls: int = 0
    integers: bool = True
    not_plain: bool = False  # a value reading it as a number would change (read keeps text)
    floats: bool = True
    dates: bool = True
    decimals: int | None = None  # of the first value: a float column written with them
    decimals_kept: bool = True
    date_pattern: str | None = None  # the ISO form of the first value
    date_kept: bool = True

    def see(self, col: pa.Array) -> None:
        valid = col.drop_null()
        self.nulls += len(col) - len(valid)
        if not len(valid):
            return
        first = self.values == 0
        self.values += len(valid)
        if first:
            text = str(valid[0].as_py())
            match = re.fullmatch(r"-?\d+\.(\d+)", text)
            self.decimals = len(match.group(1)) if match else 0
            self.date_pattern = next((p for p, _ in _ISO_FORMS if re.match(p, text)), None)
        if self.integers:
            self.integers = cast_values(valid, pa.int64()) is not None
            if self.integers:
                self.not_plain |= bool(any_not_plain(valid))
        if not self.integers and self.floats:
            self.floats = cast_values(valid, pa.float64()) is not None
            if self.floats:
                self.not_plain |= bool(any_not_plain(valid))
        if self.decimals and self.decimals >= 2 and self.decimals_kept:
            pattern = rf"^-?\d+\.\d{{{self.decimals}}}$"
            self.decimals_kept = all_match(valid, pattern)
        if self.dates:
            self.dates = all_match(valid, _ISO_DATE_RE)
            if self.dates:
                try:
                    pd.to_datetime(valid.to_pandas(), format="ISO8601")
                except ValueError:
                    self.dates = False
        if self.date_pattern is not None and self.date_kept:
            self.date_kept = all_match(valid, self.date_pattern)

    @property
    def decision(self) -> tuple[str, str | None]:
        """The column's type and text form, as decided so far (``kind``, ``form``)."""
        return self.kind, self.form

    @property
    def kind(self) -> str:
        """null, int, float, date or text: what ``read`` makes of the whole column."""
        if self.values == 0:
            return "null"
        if self.integers:
            return "text" if self.not_plain else "int"
        if self.floats:
            return "text" if self.not_plain else "float"
        return "date" if self.dates else "text"

    @property
    def form(self) -> str | None:
        """The column's text form for ``TEXT_FORMATS`` (as ``read`` records it)."""
        kind = self.kind
        if kind == "int":
            return "%d" if self.nulls else None
        if kind == "float" and self.decimals and self.decimals >= 2 and self.decimals_kept:
            return f"%.{self.decimals}f"
        if kind == "date" and self.date_pattern is not None and self.date_kept:
            form = dict(_ISO_FORMS)[self.date_pattern]
            return None if form in _PANDAS_DATE_FORMS else form
        return None


def _utf8_pieces(
    raw: pa.NativeFile, encoding: str, sep: str, quoted: bool, block: int
) -> Iterator[bytes]:
    """The text of ``raw`` (in ``encoding``) as UTF-8, about 16 MB at a time, each piece
    ending where a row ends (``_row_end``). A row longer than Arrow's ``block`` stops the
    reading there, as it stops a UTF-8 stream: held on to, a quote left open would hold the
    rest of the file in memory, read again with each piece."""
    decoder = codecs.getincrementaldecoder(encoding)()
    carry = b""
    with raw:
        while True:
            read = raw.read(_TRANSCODE_BYTES)
            text = carry + decoder.decode(read, final=not read).encode("utf-8")
            if not read:
                if text:
                    yield text
                return
            cut = _row_end(text, sep, quoted)
            if not cut and len(text) > block:  # as Arrow stops a UTF-8 stream there
                raise pa.ArrowInvalid(f"straddling: no row ends within {block:,} bytes")
            carry = text[cut:]
            if cut:
                yield text[:cut]


def _row_end(text: bytes, sep: str, quoted: bool) -> int:
    """Where the last row that ends in ``text`` (which starts a row) ends, after its line break;
    0 when none does. Without quoted values (``quoted`` false) every line break ends a row.
    Otherwise the rows are read as Arrow's parser reads them (``_rows``)."""
    if not quoted:
        return max(text.rfind(b"\n"), text.rfind(b"\r")) + 1
    counted = _row_end_by_quotes(text, sep)
    if counted is not None:
        return counted
    found = _rows(sep).match(text)
    return found.end() if found else 0


def _row_end_by_quotes(text: bytes, sep: str) -> int | None:
    """``_row_end`` from the quotes counted before each line break (an even count: no value
    open), where that count is Arrow's reading: where every quote met outside a value opens
    one (it starts a value) or is the second of a doubled quote. None where a quote is plain
    (``5" tall``, or after a closing quote), for ``_rows`` to read. Twice as fast."""
    if len(sep.encode("utf-8")) != 1:
        return None
    if not text:
        return 0
    data = np.frombuffer(text, dtype=np.uint8)
    quote = data == ord('"')
    after = np.bitwise_xor.accumulate(quote)  # a value open after each byte
    before = np.empty_like(data)  # the byte before each (a line break before the first)
    before[0], before[1:] = ord("\n"), data[:-1]
    starts = (before == ord(sep)) | (before == ord("\n")) | (before == ord("\r"))
    if (quote & ~(after ^ quote) & ~(starts | (before == ord('"')))).any():
        return None
    breaks = np.flatnonzero(((data == ord("\n")) | (data == ord("\r"))) & ~after)
    return int(breaks[-1]) + 1 if len(breaks) else 0


@functools.cache
def _rows(sep: str) -> re.Pattern[bytes]:
    """Whole rows of CSV text as Arrow's parser reads them: a value opens quotes only where it
    starts with one; inside them a doubled quote is a quote and line breaks are the value's;
    after the closing quote, the value goes on unquoted to the delimiter, its quotes plain; a
    row ends at a newline, a carriage return, or both. Each part is atomic (possessive), so a
    row cut off by the piece's end is never read as a shorter row that ends inside quotes.
    (A count of quotes would be thrown by a plain quote inside a value: ``5" tall``.)"""
    d = re.escape(sep.encode("utf-8"))
    value = (
        rb'(?>"(?:[^"]|"")*+"[^' + d + rb"\r\n]*+|(?:[^\"" + d + rb"\r\n][^" + d + rb"\r\n]*+)?)"
    )
    row = value + rb"(?:" + d + value + rb")*+(?:\r\n|\n|\r)"
    return re.compile(rb"(?:" + row + rb")*+")


@dataclass
class TableStream:
    """A CSV file, or Parquet files, read a batch of rows at a time.

    ``prepare`` reads a CSV file once to type its columns as ``read`` would type the whole table
    (and counts the rows); Parquet files carry their types and row counts. Then ``batches``
    yields DataFrames of ``batch_rows`` rows, as many times as asked (each a new reading).
    """

    source: str
    sep: str | None = None
    encoding: str | None = None
    paths: list[Path] = field(default_factory=list)
    kind: str = "csv"
    columns: list[str] = field(default_factory=list)
    rows: int | None = None
    formats: dict[str, str] = field(default_factory=dict)
    _kinds: dict[str, str] = field(default_factory=dict)
    _nulls: dict[str, int] = field(default_factory=dict)
    #: whether the CSV file may quote a value (looked for once, on the first reading)
    _quoted: bool | None = None
    _block: int | None = None  # Arrow's block (``_BLOCK_BYTES``), as the first reading found it
    #: the CSV file's compression, Arrow's codec name (None: plain text)
    codec: str | None = None
    #: each column's type and form as ``presume`` decided them on the first rows, and how many
    #: rows those were, until the first reading of every row confirms them (None: decided
    #: over every row, or not yet)
    _presumed: tuple[dict[str, tuple[str, str | None]], int] | None = None

    def __post_init__(self) -> None:
        text = str(self.source)
        if glob.has_magic(text):
            self.paths = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
            if not self.paths:
                raise InputError(f"{text}: no file matches; check the pattern")
        elif Path(text).is_dir():
            self.paths = sorted(
                p for p in Path(text).iterdir() if p.suffix.lower() in PARQUET_SUFFIXES
            )
            if not self.paths:
                raise InputError(f"{text}: the folder holds no .parquet files")
        else:
            path = Path(text)
            check_readable(path)
            self.paths = [path]
        parquet = [p.suffix.lower() in PARQUET_SUFFIXES for p in self.paths]
        if len(self.paths) > 1 and not all(parquet):
            raise InputError(
                f"{text}: several files stream only as Parquet; convert the CSV files, or give one"
            )
        self.kind = "parquet" if all(parquet) else "csv"
        if self.kind == "parquet":
            self._open_parquet()
        else:
            self.codec = _streamed_codec(self.paths[0])
            try:
                with self._opened() as stream:
                    head = stream.read(_HEAD_BYTES)
            except OSError as err:
                raise self._not_unpacked(err) from err
            complete = len(head) < _HEAD_BYTES
            self.encoding, self.sep, self.columns = csv_dialect(
                self.paths[0], head, sep=self.sep, encoding=self.encoding, complete=complete
            )

    @property
    def size(self) -> int:
        """Bytes on disk."""
        return sum(p.stat().st_size for p in self.paths)

    def _open_parquet(self) -> None:
        import pyarrow.parquet as pq

        schema = None
        rows = 0
        for path in self.paths:
            try:
                meta = pq.ParquetFile(path)
            except (pa.ArrowInvalid, OSError) as err:
                raise InputError(
                    f"{path}: not a readable Parquet file ({one_line(str(err))})"
                ) from err
            check_header(path, meta.schema_arrow.names, "the Parquet schema")
            nested = [
                f"{f.name} ({f.type})" for f in meta.schema_arrow if pa.types.is_nested(f.type)
            ]
            if nested:
                raise InputError(
                    f"{path}: nested column(s) {', '.join(nested)}; veil reads "
                    "tables of plain values: flatten them into columns first"
                )
            if schema is not None and meta.schema_arrow.names != schema.names:
                raise InputError(
                    f"{path}: its columns {meta.schema_arrow.names} differ from "
                    f"{self.paths[0]}'s {schema.names}; one table, one schema"
                )
            schema = meta.schema_arrow if schema is None else schema
            rows += meta.metadata.num_rows
        assert schema is not None
        self.columns = [n for n in schema.names if not n.startswith("__index_level_")]
        self.rows = rows

    def prepare(
        self, *, batch_rows: int = 1_000_000, progress: Callable[[int], None] | None = None
    ) -> TableStream:
        """Type a CSV file's columns over all its rows (a first reading); a no-op for Parquet."""
        _check_batch_rows(batch_rows)
        if self.kind == "parquet" or self.rows is not None:
            return self
        self._settle(*self._seen(batch_rows, progress, first_only=False))
        return self

    def presume(
        self, *, batch_rows: int = 1_000_000, progress: Callable[[int], None] | None = None
    ) -> TableStream:
        """Type a CSV file's columns on its first batch of ``batch_rows`` rows, for the first
        reading of every row (``batches``) to confirm as it goes: that reading raises
        ``UnsettledTypesError`` at the first batch whose texts type a column otherwise (the caller
        ``prepare``s and reads again: ``typed_as_read``), and when it ends the types are
        those ``prepare`` decides. A file of one batch is typed whole here; a no-op for
        Parquet."""
        _check_batch_rows(batch_rows)
        if self.kind == "parquet" or self.rows is not None:
            return self
        seen, rows = self._seen(batch_rows, progress, first_only=True)
        if rows < batch_rows:  # the whole file
            self._settle(seen, rows)
        else:
            self._decide(seen)
            self._presumed = {name: c.decision for name, c in seen.items()}, rows
        return self

    def _seen(
        self, batch_rows: int, progress: Callable[[int], None] | None, first_only: bool
    ) -> tuple[dict[str, _Column], int]:
        """What each column's texts allow over every row (``first_only``: the first batch's),
        and how many rows were read; again with larger blocks where a row is longer than
        Arrow's block."""
        while True:
            seen, rows = {name: _Column() for name in self.columns}, 0  # a file of no rows
            try:
                for read in self._seeing(batch_rows):
                    table, seen, rows = read
                    if progress is not None:
                        progress(table.num_rows)
                    if first_only:
                        break
                return seen, rows
            except _LongRowError:
                block = (self._block or _BLOCK_BYTES) * 4
                if block > _LARGEST_BLOCK_BYTES:
                    raise
                self._block = block

    def _seeing(self, batch_rows: int) -> Iterator[tuple[pa.Table, dict[str, _Column], int]]:
        """Each text table of the file, with what each column's texts allow and how many rows
        were read, up to it and with it."""
        seen = {name: _Column() for name in self.columns}
        rows = 0
        for table in self._csv_tables(batch_rows):
            for name, column in seen.items():
                for chunk in table.column(name).chunks:
                    column.see(chunk)
            rows += table.num_rows
            yield table, seen, rows

    def _settle(self, seen: dict[str, _Column], rows: int) -> None:
        """The types decided over every row (``rows`` of them)."""
        if rows == 0:
            raise InputError(f"{self.paths[0]}: has a header but no data rows")
        self._decide(seen)
        self.rows, self._presumed = rows, None

    def _decide(self, seen: dict[str, _Column]) -> None:
        self._kinds = {name: c.kind for name, c in seen.items()}
        self._nulls = {name: c.nulls for name, c in seen.items()}
        self.formats = {name: form for name, c in seen.items() if (form := c.form) is not None}

    def _opened(self) -> Any:
        """The CSV file's bytes as Arrow reads them: unpacked by Arrow's own codec as they are
        read, so a compressed file streams in the memory of a batch (Arrow reads from its own
        streams only: see ``arrow_source``)."""
        path = str(self.paths[0])
        if self.codec is None:
            return pa.OSFile(path)
        return pa.CompressedInputStream(pa.OSFile(path), self.codec)

    def _not_unpacked(self, err: OSError) -> InputError:
        """What to say of a file whose reading failed: a compressed one that does not unpack
        (cut short in a copy), or a file that cannot be read."""
        said = one_line(str(err))
        if self.codec is None:
            return InputError(f"{self.paths[0]}: cannot be read ({said})")
        return InputError(
            f"{self.paths[0]}: a {self.codec} file that does not unpack ({said}); check it "
            "was copied whole"
        )

    def _csv_tables(self, batch_rows: int) -> Iterator[pa.Table]:
        """The CSV file as text tables of ``batch_rows`` rows (the last one shorter)."""
        path = self.paths[0]
        names = [f"c{i}" for i in range(len(self.columns))]
        if self._quoted is None:  # a compressed file is not searched for a quote: it may hold one
            self._quoted = self.codec is not None or may_quote(path, self.encoding or "utf-8")
        parse = pacsv.ParseOptions(delimiter=self.sep, newlines_in_values=self._quoted)
        convert = pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=True
        )
        try:
            if codecs.lookup(self.encoding or "utf-8").name == "utf-8":
                reader: Iterator[pa.RecordBatch] = pacsv.open_csv(
                    self._opened(),
                    read_options=pacsv.ReadOptions(
                        block_size=self._block or _BLOCK_BYTES, skip_rows=1, column_names=names
                    ),
                    parse_options=parse,
                    convert_options=convert,
                )
            else:  # decoded here, never through a Python codec Arrow calls (``arrow_source``)
                reader = self._transcoded_batches(names, parse, convert)
            pending: list[pa.RecordBatch] = []
            held = 0
            for batch in reader:
                pending.append(batch)
                held += batch.num_rows
                while held >= batch_rows:
                    table = pa.Table.from_batches(pending)
                    yield table.slice(0, batch_rows).rename_columns(self.columns)
                    rest = table.slice(batch_rows)
                    pending, held = rest.to_batches(), rest.num_rows
            if held:
                yield pa.Table.from_batches(pending).rename_columns(self.columns)
        except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as err:
            if not isinstance(err, pa.ArrowInvalid | UnicodeDecodeError):
                raise self._not_unpacked(err) from err
            if "straddling" in str(err):
                block = self._block or _BLOCK_BYTES
                raise _LongRowError(
                    f"{path}: a row is longer than {block / 2**20:g} MB (a quoted value left "
                    "open?); fix that row"
                ) from err
            raise InputError(
                f"{path}: cannot be read as CSV with delimiter {self.sep!r} and "
                f"encoding {self.encoding} ({one_line(str(err))}); fix that row, "
                "or pass --sep/--encoding"
            ) from err

    def _transcoded_batches(
        self, names: list[str], parse: pacsv.ParseOptions, convert: pacsv.ConvertOptions
    ) -> Iterator[pa.RecordBatch]:
        """The rows of a CSV file in another encoding than UTF-8: decoded by veil a piece at a
        time into UTF-8 in Arrow's memory, each piece ending where a row ends, and parsed by
        Arrow from there. (pyarrow would decode through a Python codec it calls from its own
        threads: the source a process exiting aborts on, ``arrow_source``.)"""
        first = True
        encoding, sep, block = (
            self.encoding or "utf-8",
            self.sep or ",",
            self._block or _BLOCK_BYTES,
        )
        for piece in _utf8_pieces(self._opened(), encoding, sep, bool(self._quoted), block):
            table = pacsv.read_csv(
                arrow_source(piece),
                read_options=pacsv.ReadOptions(
                    block_size=block, skip_rows=1 if first else 0, column_names=names
                ),
                parse_options=parse,
                convert_options=convert,
            )
            first = False
            yield from table.to_batches()

    def batches(
        self, batch_rows: int, columns: Sequence[str] | None = None
    ) -> Iterator[pd.DataFrame]:
        """The table, ``batch_rows`` rows at a time (``columns``: only those)."""
        _check_batch_rows(batch_rows)
        wanted = list(self.columns if columns is None else columns)
        if self.kind == "parquet":
            yield from self._parquet_batches(batch_rows, wanted)
            return
        if self.rows is None and self._presumed is not None:
            yield from self._confirmed(batch_rows, wanted, self._presumed)
            return
        self.prepare(batch_rows=batch_rows)
        for table in self._csv_tables(batch_rows):
            yield self._frame(table, wanted)

    def _frame(self, table: pa.Table, wanted: list[str]) -> pd.DataFrame:
        frame = pd.DataFrame({name: self._typed(name, table.column(name)) for name in wanted})
        frame.attrs[TEXT_FORMATS] = {k: v for k, v in self.formats.items() if k in wanted}
        return frame

    def _confirmed(
        self,
        batch_rows: int,
        wanted: list[str],
        presumed: tuple[dict[str, tuple[str, str | None]], int],
    ) -> Iterator[pd.DataFrame]:
        """``batches`` while the types are presumed (``presume``): each batch's texts seen as
        ``prepare`` sees them, and the batch typed only while every column is typed as
        presumed (a column's type only widens as rows come: once the rows read cover those
        the types were presumed on, any other type is a wider one); a reading to the end
        settles the types."""
        decided, first = presumed
        seen, rows = {name: _Column() for name in self.columns}, 0
        try:
            for table, seen, rows in self._seeing(batch_rows):
                changed = [n for n, c in seen.items() if c.decision != decided[n]]
                if changed and rows >= first:
                    raise UnsettledTypesError(
                        f"{self.paths[0]}: past its first rows, column(s) "
                        f"{', '.join(map(repr, changed))} hold texts of another type"
                    )
                yield self._frame(table, wanted)
        except _LongRowError as err:  # ``prepare`` reads with larger blocks
            raise UnsettledTypesError(
                f"{self.paths[0]}: past its first rows, a row is longer than Arrow's block"
            ) from err
        if self._presumed is presumed:
            self._settle(seen, rows)

    def pandas_reading(self) -> dict[str, Any]:
        """How pandas (a Dask cluster's blocks) reads this CSV file as ``batches`` types it:
        the delimiter, the encoding, each column's dtype as decided over every row (a first
        reading), the dates to parse, and Arrow's texts for a missing value, no others."""
        self.prepare()
        dtypes = {
            "int": lambda name: "float64" if self._nulls[name] else "int64",
            "float": lambda name: "float64",
        }
        return {
            "sep": self.sep,
            "encoding": self.encoding,
            "dtype": {
                name: dtypes[kind](name) if kind in dtypes else "str"
                for name, kind in self._kinds.items()
                if kind != "date"
            },
            "parse_dates": [name for name, kind in self._kinds.items() if kind == "date"],
            "date_format": "ISO8601",
            "keep_default_na": False,
            "na_values": pacsv.ConvertOptions().null_values,
        }

    def _typed(self, name: str, col: pa.ChunkedArray) -> Any:
        kind = self._kinds[name]
        if kind == "int":
            ints = pc.cast(col, pa.int64()).to_pandas()
            return ints.astype("float64") if self._nulls[name] else ints
        if kind == "float":
            return pc.cast(col, pa.float64()).to_pandas()
        if kind == "date":
            return pd.to_datetime(col.to_pandas(), format="ISO8601")
        return col.to_pandas()

    def _parquet_batches(self, batch_rows: int, columns: list[str]) -> Iterator[pd.DataFrame]:
        import pyarrow.parquet as pq

        for path in self.paths:
            schema = pq.read_schema(path)
            texts = text_fields(schema, columns)
            if any(pa.types.is_dictionary(f.type) for f in schema if f.name in columns):
                texts = {}  # Arrow then ends a batch at each row group, as it always did
            # text columns read with the file's own dictionaries: each batch's texts made from
            # them, and their codes kept for the passes (no text hashed to code it again); the
            # batches cut where a plain reading cuts them (it does not stop at a row group)
            with contextlib.closing(pq.ParquetFile(path, read_dictionary=list(texts))) as handle:
                read = handle.iter_batches(batch_size=batch_rows, columns=columns)
                if not texts:
                    yield from (pa.Table.from_batches([b]).to_pandas() for b in read)
                    continue
                for pieces in _cut(read, batch_rows):
                    yield undictionaried(pieces, texts)

    def head(self, rows: int) -> pd.DataFrame:
        """The first ``rows`` rows (typed as every batch is)."""
        for batch in self.batches(rows):
            return batch
        raise InputError(f"{self.source}: has no rows")


def text_fields(schema: pa.Schema, columns: Sequence[str]) -> dict[str, pa.DataType]:
    """The text columns among ``columns`` of a Parquet file's Arrow ``schema``, by name, with
    their types: those read with the file's dictionaries (``undictionaried``)."""
    return {
        f.name: f.type
        for f in schema
        if f.name in columns and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
    }


def _cut(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[list[pa.RecordBatch]]:
    """``batches`` cut into runs of ``rows`` rows (the last one shorter), each as its pieces."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        while batch.num_rows:
            taken = min(rows - count, batch.num_rows)
            pending.append(batch.slice(0, taken))
            count += taken
            batch = batch.slice(taken)
            if count == rows:
                yield pending
                pending, count = [], 0
    if pending:
        yield pending


def undictionaried(
    pieces: list[pa.RecordBatch],
    texts: dict[str, pa.DataType],
    types_mapper: Callable[[pa.DataType], Any] | None = None,
) -> pd.DataFrame:
    """Parquet batches (read with ``texts``' columns as dictionaries, one dictionary per row
    group) as one batch pandas makes of the same rows read plainly (Arrow's ``to_pandas``, with
    ``types_mapper``), each text column's codes kept (``remember_codes``)."""
    batch = pieces[0]
    if len(pieces) > 1:  # one dictionary for the rows of every row group
        batch = pa.Table.from_batches(pieces).unify_dictionaries().combine_chunks().to_batches()[0]
    schema, arrays, coded = batch.schema, list(batch.columns), {}
    for i, name in enumerate(schema.names):
        array = arrays[i]
        if name not in texts or not isinstance(array, pa.DictionaryArray):
            continue
        arrays[i] = decoded(array, texts[name])
        schema = schema.set(i, schema.field(i).with_type(texts[name]))
        coded[name] = dictionary_codes(array)
    frame = pa.RecordBatch.from_arrays(arrays, schema=schema).to_pandas(types_mapper=types_mapper)
    for name, codes in coded.items():  # the same rows in the same order, however pandas holds them
        if codes is not None:
            remember_codes(frame[name], codes)
    return frame


def _streamed_codec(path: Path) -> str | None:
    """Arrow's codec for a CSV file compressed with gzip, bzip2 or zstd (told by its first
    bytes), None for plain text; an xz file, which Arrow cannot unpack as it reads, is an
    ``InputError`` saying what to do."""
    kind = packing(path)
    if kind is None:
        return None
    name, codec = kind
    if codec == "xz":
        raise InputError(
            f"{path}: an {name} file, which is read a batch at a time only unpacked (Arrow "
            "unpacks gzip, bzip2 and zstd as it reads, not xz); unpack it (unxz) or repack it "
            "with gzip or zstd, or use --in-memory"
        )
    return codec


def _check_batch_rows(batch_rows: int) -> None:
    if batch_rows < 1:
        raise ParameterError(f"--batch-rows must be at least 1, got {batch_rows}")


class BatchWriter:
    """Batches of a release appended to one CSV or Parquet file (a staged temporary path: the
    caller moves it into place when every batch is in). CSV columns keep the input's text forms
    (``formats``) and formula cells are escaped, as ``write_table`` does for a whole table."""

    def __init__(
        self, path: Path, fmt: str, *, formats: dict[str, str] | None = None, escape: bool = True
    ) -> None:
        if fmt not in {"csv", "parquet"}:
            raise InputError(f"a streamed release is written as CSV or Parquet, not {fmt}")
        self.path, self.fmt, self.formats, self.escape = path, fmt, dict(formats or {}), escape
        self.rows = 0
        self.escaped = 0
        self._parquet: Any = None
        self._schema: pa.Schema | None = None
        self._handle: Any = None

    def prepared(self, batch: pd.DataFrame) -> pd.DataFrame:
        """``batch`` as it will be written (formula cells escaped in a CSV): what to hash."""
        if self.escape and self.fmt == "csv":
            batch, escaped = escape_formulas(batch)
            self.escaped += escaped
        return batch

    def write(self, batch: pd.DataFrame, coded: pa.Table | None = None) -> None:
        """Append ``batch`` (from ``prepared``). ``coded``: its rows as an Arrow table whose
        text columns may be dictionaries of the same texts, whose codes a Parquet file takes
        as they are (``CodedParquet``)."""
        if self.fmt == "csv":
            if self._handle is None:
                self._handle = open(self.path, "wb")  # noqa: SIM115
            written = _as_written(batch, self.formats)
            write_any(written, self._handle, header=self.rows == 0)
        else:
            table = pa.Table.from_pandas(batch, preserve_index=False)
            if self._schema is None:
                fields = [
                    pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f
                    for f in table.schema
                ]
                self._schema = pa.schema(fields).remove_metadata()
                self._parquet = CodedParquet(self.path, self._schema, coded)
            try:
                table = table.cast(self._schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                raise InputError(
                    f"a batch of the release does not fit the columns' types of "
                    f"the first ({one_line(str(err))}); write .csv, or run "
                    "--in-memory"
                ) from err
            self._parquet.write(table, coded)
        self.rows += len(batch)

    def close(self, columns: Sequence[str]) -> None:
        """Finish the file (a header alone, or an empty Parquet file, when no row came)."""
        if self.fmt == "csv":
            if self._handle is None:
                pd.DataFrame(columns=list(columns)).to_csv(self.path, index=False)
            else:
                self._handle.close()
        elif self._parquet is not None:
            self._parquet.close()
        else:
            pd.DataFrame(columns=list(columns)).to_parquet(self.path, index=False)
