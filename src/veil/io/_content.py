"""Content hashes: a table's fingerprint and the canonical cell hash certificates pin."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref
from collections.abc import Collection, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.io._files import text_buffers


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


def content_sha256(frame: pd.DataFrame, *, version: int = 2) -> str:
    """SHA-256 of every cell of ``frame``, in a canonical text form that survives a CSV or
    Parquet round trip through ``write`` and ``read``: numbers as their shortest decimal (12
    and 12.0 alike), dates ISO, empty text as missing. A certificate pins its release with it,
    so ``verify`` notices any changed, added or removed cell. Version 2 (``ContentHash``) is
    the same whether the rows come at once or in batches; version 1 is what certificates before
    format 6 pinned."""
    if version == 1:
        return _content_sha256_v1(frame)
    return ContentHash(list(frame.columns)).update(frame).hexdigest()


class ContentHash:
    """``content_sha256`` of a table fed in batches of rows (a release written as it streams):
    three running SHA-256 per column (over the cells' missing flags, their texts' lengths and
    the texts), then one over the row count and the columns' names and digests. Any split of
    the rows into batches gives the same digest as the whole table at once."""

    def __init__(self, columns: list[Any]) -> None:
        self.columns = list(columns)
        self.rows = 0
        self._digests = [[hashlib.sha256() for _ in range(3)] for _ in self.columns]

    def update(self, batch: pd.DataFrame) -> ContentHash:
        """Add ``batch``'s rows (its columns those the hash was made for, in that order)."""
        if list(batch.columns) != self.columns:
            raise ValueError(f"a batch has columns {list(batch.columns)}, not {self.columns}")
        self.rows += len(batch)
        for (flags, sizes, texts), name in zip(self._digests, batch.columns, strict=True):
            held = arrow_text(batch[name])
            parts = None if held is None else _held_parts(held)
            if parts is None:
                parts = _canonical_parts(_canonical_cells(batch[name]))
            for missed, lengths, data in parts:
                flags.update(missed)
                sizes.update(lengths)
                texts.update(data)
        return self

    def hexdigest(self) -> str:
        """The digest of every row fed so far."""
        total = hashlib.sha256(f"veil-content-v2\x1f{self.rows}\x1f{len(self.columns)}".encode())
        for name, parts in zip(self.columns, self._digests, strict=True):
            total.update(f"\x1d{len(str(name))}:{name}\x1e".encode())
            for part in parts:
                total.update(part.digest())
        return total.hexdigest()


#: a text column's chunk as ``ContentHash`` feeds it: missing flags, lengths, bytes
_Part = tuple[bytes, bytes, memoryview | bytes]


def _held_parts(text: pa.ChunkedArray) -> list[_Part] | None:
    """The missing flags, lengths and bytes ``ContentHash`` feeds of a text column, chunk by
    chunk, read from the column as Arrow holds it rather than from the canonical copy
    ``_canonical_cells`` makes, which copied every text twice (2M rows of adult, eight text
    columns and one of integers, hashed in 0.48 CPU s rather than 0.66, most of it now SHA-256's
    own): an empty text counts as missing, so a cell's flag is its length being 0, and
    the bytes are the buffer's from the chunk's first offset to its last. None where a
    missing cell spans bytes (Arrow allows it): then the canonical cells are made."""
    parts: list[_Part] = []
    for chunk in text.chunks:
        ends, data = text_buffers(chunk)
        lengths = np.diff(ends)
        if chunk.null_count and lengths[~chunk.is_valid().to_numpy(zero_copy_only=False)].any():
            return None
        parts.append(((lengths == 0).view(np.uint8).tobytes(), lengths.tobytes(), data))
    return parts


def _canonical_parts(cells: pa.Array) -> list[_Part]:
    """``_held_parts`` of canonical cells (no cell of which is an empty text), else made from
    a copy with every missing cell empty."""
    parts = _held_parts(pa.chunked_array([cells]))
    if parts is not None:
        return parts
    missing = cells.is_null().to_numpy(zero_copy_only=False).astype(np.uint8).tobytes()
    texts = _text_parts(pc.fill_null(cells, ""))
    return [(missing if i == 0 else b"", *part) for i, part in enumerate(texts)]


def parts_sha256(digests: list[str]) -> str:
    """The content hash of a release written as several files (a cluster's partitions): each
    file's ``content_sha256``, in the files' order, hashed together."""
    total = hashlib.sha256(f"veil-content-parts-v1\x1f{len(digests)}".encode())
    for digest in digests:
        total.update(bytes.fromhex(digest))
    return total.hexdigest()


def _content_sha256_v1(frame: pd.DataFrame) -> str:
    """Format 1-5 certificates' hash: column after column over the whole table."""
    digest = hashlib.sha256(f"veil-content-v1\x1f{len(frame)}\x1f{frame.shape[1]}".encode())
    for name in frame.columns:
        digest.update(f"\x1d{len(str(name))}:{name}".encode())
        cells = _canonical_cells(frame[name])
        # offsets (lengths) + bytes + the missing mask: unambiguous, and no Python loop
        missing = cells.is_null().to_numpy(zero_copy_only=False)
        text = pc.fill_null(cells, "")
        digest.update(np.packbits(missing).tobytes())
        for lengths, data in _text_parts(text):
            digest.update(lengths)
            digest.update(data)
    return digest.hexdigest()


def arrow_text(series: pd.Series) -> pa.ChunkedArray | None:
    """A text column's values as the Arrow strings pandas holds them in (no copy), or None
    when pandas does not hold the column in Arrow (NumPy objects)."""
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        kind = dtype.pyarrow_dtype
        held = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    else:
        held = isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    if not held:
        return None
    arrow = series.array.__arrow_array__()  # the Arrow interface pandas' arrays offer
    return arrow if isinstance(arrow, pa.ChunkedArray) else pa.chunked_array([arrow])


Coded = tuple[np.ndarray, np.ndarray]  # every row's code (-1: missing), the texts coded


class _Known:
    """Codes already made of Arrow text columns, by the column's Arrow array (immutable: the
    same array object always holds the same texts), kept only while a release runs
    (``codes_kept``) and an entry only while its array lives. So a column coded by the first
    pass in memory is not coded again by the second, and a Parquet column read with its
    dictionary is never hashed at all; the codes of a table a user keeps are not kept with it."""

    def __init__(self) -> None:
        self.entries: dict[int, Coded] = {}
        self.scopes = 0
        self.lock = threading.Lock()

    def remember(self, text: pa.ChunkedArray, coded: Coded) -> None:
        with self.lock:
            if not self.scopes:
                return
            key = id(text)
            self.entries[key] = coded
        # run as the array dies, before its id can name another array
        weakref.finalize(text, self.entries.pop, key, None)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        with self.lock:
            self.scopes += 1
        try:
            yield
        finally:
            with self.lock:
                self.scopes -= 1
                if not self.scopes:
                    self.entries.clear()


_KNOWN = _Known()
#: While a release runs, the text columns' codes are kept with their Arrow arrays.
codes_kept = _KNOWN.scope


def remember_codes(series: pd.Series, coded: Coded) -> None:
    """Keep ``coded`` (every row's code, -1 where missing, and the texts the codes index, each
    text once; a text no row holds may be listed) as the codes of the text column ``series``
    while a release runs (``codes_kept``)."""
    text = arrow_text(series)
    if text is not None:
        _KNOWN.remember(text, coded)


def known_codes(series: pd.Series, *, last: bool = False) -> Coded | None:
    """The codes kept of the text column ``series`` (``remember_codes``), or None; with
    ``last``, no longer kept (the last use: a table in memory holds no codes it is done with)."""
    text = arrow_text(series)
    if text is None:
        return None
    return _KNOWN.entries.pop(id(text), None) if last else _KNOWN.entries.get(id(text))


def text_codes(frame: pd.DataFrame, kept: Collection[str] = ()) -> dict[str, Coded]:
    """Each text column pandas holds in Arrow, dictionary-coded once by Arrow (or as its codes
    were kept: ``known_codes``): every row's code (-1 where missing) and the texts coded as
    objects, each text once (a text no row holds may be listed), for a batch's row hashes and
    counts to share (``veil.privacy._passes.row_hashes``); the ``kept`` columns' codes kept for
    the pass after (``remember_codes``)."""
    out: dict[str, Coded] = {}
    if not frame.columns.is_unique:
        return out
    for name in frame.columns:
        series = frame[name]
        text = arrow_text(series)
        if text is None:
            continue
        known = _KNOWN.entries.get(id(text))
        if known is not None:
            out[name] = known
            continue
        chunk = text.chunk(0) if text.num_chunks == 1 else text.combine_chunks()
        encoded = pc.dictionary_encode(chunk)
        # Arrow's 32-bit codes, as they are (a table in memory is one batch: 64-bit codes of
        # every text column at once would be 80 MB a column at 10M rows)
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
        out[name] = codes, encoded.dictionary.to_numpy(zero_copy_only=False)
        if name in kept:
            _KNOWN.remember(text, out[name])
    return out


def counted_codes(
    texts: dict[str, Coded], columns: Collection[str]
) -> dict[str, tuple[np.ndarray, int]]:
    """The codes ``text_codes`` made (``texts``) of ``columns`` as ``Frequencies.of`` counts
    them: every row's code, a missing text a code of its own (the last), and how many codes."""
    return {
        n: (np.where(c < 0, len(u), c), len(u) + 1) for n, (c, u) in texts.items() if n in columns
    }


def dictionary_codes(array: pa.DictionaryArray) -> Coded | None:
    """The codes of a dictionary-coded Arrow text array as ``text_codes`` gives them, without
    hashing a text: its indices, and its dictionary when each text is listed once (None
    otherwise: such a dictionary is coded as plain text is)."""
    dictionary = array.dictionary
    if dictionary.null_count or len(pc.unique(dictionary)) != len(dictionary):
        return None
    codes = pc.fill_null(array.indices, -1).to_numpy(zero_copy_only=False)
    return codes, dictionary.to_numpy(zero_copy_only=False)


def _text_parts(text: pa.Array | pa.ChunkedArray) -> Iterator[tuple[bytes, memoryview | bytes]]:
    """(the cells' lengths, their bytes) per chunk of an Arrow text column, without a Python
    loop over the cells."""
    for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
        ends, data = text_buffers(chunk)
        yield np.diff(ends).tobytes(), data


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
            arrow = pa.array(
                [None if m else _cell(v) for v, m in zip(items, missing, strict=True)],
                type=pa.string(),
            )
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        # CSV cannot tell an empty text from a missing one
        return pc.if_else(pc.equal(arrow, ""), pa.scalar(None, pa.string()), arrow)
    return pa.array(np.asarray(values, dtype=object), type=pa.string(), mask=missing)


def _float_cells(values: np.ndarray, missing: np.ndarray) -> pa.Array:
    """``_numbers`` as Arrow text: whole numbers cast in Arrow, the rest by ``repr``."""
    integral = whole_numbers(values)
    whole = pa.array(np.where(integral, values, 0).astype(np.int64)).cast(pa.string())
    if integral.all():
        return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), whole)
    rest = np.full(len(values), None, dtype=object)
    others = ~integral & ~missing
    rest[others] = [repr(float(v)) for v in values[others]]
    cells = pc.if_else(pa.array(integral), whole, pa.array(rest, type=pa.string()))
    return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), cells)


def whole_numbers(values: np.ndarray) -> np.ndarray:
    """Where a float holds a whole number an int64 can hold (written as that integer)."""
    finite = np.isfinite(values)
    return finite & (values == np.floor(np.where(finite, values, 0))) & (np.abs(values) < 2**63)


def _numbers(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    integral = whole_numbers(values)
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
