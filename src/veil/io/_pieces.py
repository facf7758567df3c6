"""Pieces of a release on their way through a shuffle's buckets on disk (a stream's, a
cluster's): Arrow IPC, each text column of few distinct values dictionary-coded, read back as
the rows they were.

A shuffle sends every batch's rows to many buckets: at 100M rows in batches of 500,000, each of
200 batches sends a piece of ~2,500 rows to each of 200 buckets. A pickled DataFrame or a
Parquet file per piece cost more than the rows in it; Arrow IPC record batches cost little (a
stream's bucket is one IPC stream of them, a cluster's partition one IPC file), and a coded
column (a generalized quasi-identifier, a category) makes the shuffle's takes integer takes and
its pieces a fraction of the text's size. The release's Parquet file takes those codes as they
are (``CodedParquet``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "as_arrow",
    "bucket_order",
    "coded",
    "codes_of",
    "decoded",
    "joined",
    "pandas_metadata",
    "plain",
    "read_bucket",
    "take_rows",
    "with_texts",
    "write_buckets",
]

#: dtype kinds whose columns go through Arrow and back unchanged (numbers, booleans, datetimes;
#: pandas' text columns are checked apart).
_ARROW_KINDS = frozenset("biufM")


def as_arrow(frame: pd.DataFrame) -> pa.Table | None:
    """``frame`` as an Arrow table when every column comes back from Arrow with its dtype and
    values (numbers, booleans, datetimes, pandas' text), else None (keep it as a DataFrame)."""
    names = list(frame.columns)
    if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
        return None
    for dtype in frame.dtypes:
        text = isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
        if not text and not _coded(dtype) and getattr(dtype, "kind", "O") not in _ARROW_KINDS:
            return None
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if any(_coded(dtype) for dtype in frame.dtypes):  # pandas reads them back as its texts
        table = table.replace_schema_metadata(pandas_metadata(frame))
    return table


def pandas_metadata(frame: pd.DataFrame) -> dict[bytes, bytes] | None:
    """The schema metadata by which pandas makes ``frame`` again from Arrow, each column held
    as an Arrow dictionary of texts made pandas' texts (``with_texts``) rather than a dtype
    pandas cannot read back."""
    return pa.Schema.from_pandas(with_texts(frame.head(0)), preserve_index=False).metadata


def _coded(dtype: Any) -> bool:
    """Whether pandas holds a column of ``dtype`` as an Arrow dictionary of texts (a
    generalized quasi-identifier left as its codes for a shuffle's spill)."""
    if not isinstance(dtype, pd.ArrowDtype) or not pa.types.is_dictionary(dtype.pyarrow_dtype):
        return False
    values = dtype.pyarrow_dtype.value_type
    return bool(pa.types.is_string(values) or pa.types.is_large_string(values))


def with_texts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column held as an Arrow dictionary of texts made the texts it
    holds, in pandas' text dtype (what the column would have been made as): the same
    values; ``frame`` itself when it has no such column."""
    coded = [i for i, dtype in enumerate(frame.dtypes) if _coded(dtype)]
    if not coded:
        return frame
    out = frame.copy(deep=False)
    for i in coded:
        column = frame.iloc[:, i]
        held = column.array.__arrow_array__()
        chunks = held.chunks if isinstance(held, pa.ChunkedArray) else [held]
        texts = pa.chunked_array([decoded(c, pa.large_string()) for c in chunks], pa.large_string())
        out.isetitem(i, pd.Series(texts, index=frame.index, dtype=TEXT).array)
    return out


#: pandas' text dtype, as it makes a column of texts.
TEXT = pd.Series(["text"]).dtype

#: Arrow may reserve this much beyond the texts a dictionary's rows hold before ``decoded``
#: gathers the bytes itself.
_SPARE_BYTES = 64 << 20


def decoded(array: pa.DictionaryArray, kind: pa.DataType) -> pa.Array:
    """The texts a dictionary-coded Arrow text array holds, as an array of ``kind`` (string or
    large string). Arrow's take reserves the dictionary's average text length for every row:
    one hostile cell of 10 MB beside two short values made it ask for 233 GB for 70,000 rows.
    Where that reserve would pass the texts' own size by far, the bytes are gathered here."""
    from veil.io._files import text_buffers

    dictionary = array.dictionary.cast(kind)
    rows, listed = len(array), len(dictionary)
    if not rows or not listed:
        return dictionary.take(array.indices)
    ends, data = text_buffers(dictionary)
    reserve = int(ends[-1]) / listed * rows  # what Arrow's take would reserve
    if reserve <= _SPARE_BYTES:  # the usual case: no row is read to know
        return dictionary.take(array.indices)
    lengths = np.diff(ends)
    valid = array.is_valid()
    codes = _filled_codes(array)
    each = np.where(valid.to_numpy(zero_copy_only=False), lengths[codes], 0)
    total = int(each.sum())
    if reserve <= 2 * total + _SPARE_BYTES:
        return dictionary.take(array.indices)
    made = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(each, out=made[1:])
    starts = ends[:-1][codes]
    # each row's bytes: from its text's start in the dictionary, one after another
    where = np.repeat(starts - made[:-1], each) + np.arange(total, dtype=np.int64)
    gathered = np.frombuffer(data, dtype=np.uint8)[where]
    nulls = None if array.null_count == 0 else valid.buffers()[1]
    buffers = [nulls, pa.py_buffer(made), pa.py_buffer(gathered)]
    texts = pa.Array.from_buffers(pa.large_string(), rows, buffers, array.null_count)
    # 32-bit offsets made by Arrow's cast, which refuses texts they cannot hold
    return texts if pa.types.is_large_string(kind) else texts.cast(kind)


def _filled_codes(array: pa.DictionaryArray) -> np.ndarray:
    """Each row's code as NumPy integers, a missing row's 0."""
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(array.indices, 0).to_numpy(zero_copy_only=False))


def bucket_order(chosen: np.ndarray, buckets: int) -> np.ndarray:
    """The rows' positions sorted by their bucket (``chosen``: each row's, below
    ``buckets``), stably: as 16-bit keys where they fit, which NumPy sorts by radix (a batch
    of 500,000 rows in 7 ms rather than 33 ms as 64-bit keys)."""
    keys = chosen.astype(np.uint16) if buckets <= 1 << 16 else chosen
    return np.argsort(keys, kind="stable")


def coded(table: pa.Table, known: Mapping[str, tuple[Any, pa.Array]] | None = None) -> pa.Table:
    """``table`` with each text column of few distinct values (at most one in four rows)
    dictionary-coded; ``plain`` undoes it. ``known``: some columns' codes (one per row) and
    the texts they index (each text once), taken as they are rather than coded again."""
    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_large_string(column.type) or pa.types.is_string(column.type):
            codes, labels = (known or {}).get(name, (None, None))
            encoded: pa.DictionaryArray | None
            if labels is not None and len(labels) * 4 <= len(column):
                indices = pa.array(np.asarray(codes, dtype=_index_type(len(labels))))
                encoded = pa.DictionaryArray.from_arrays(indices, labels.cast(column.type))
            else:
                encoded = _few_values(column.combine_chunks())
            if encoded is not None:
                column = encoded
        elif _codes_texts(column.type, getattr(column.type, "value_type", None)):
            column = _narrowed(column.combine_chunks())
        columns.append(column)
    return _with_columns(table, columns)


def _index_type(texts: int) -> type[np.signedinteger[Any]]:
    """The narrowest integer that codes ``texts`` texts and one more (``codes_of`` gives a
    missing value the code after the last): a piece of 9 coded columns is then 9 bytes a row
    rather than 36, the shuffle's files at 100M rows 0.9 GB rather than 3.6."""
    return np.int8 if texts <= 127 else np.int16 if texts <= 32767 else np.int32


def _narrowed(array: pa.DictionaryArray) -> pa.DictionaryArray:
    """``array`` with its codes in the narrowest integer that holds them (``_index_type``)."""
    narrow = pa.from_numpy_dtype(_index_type(len(array.dictionary)))
    if array.type.index_type.equals(narrow):
        return array
    return pa.DictionaryArray.from_arrays(array.indices.cast(narrow), array.dictionary)


def _few_values(text: pa.Array) -> pa.DictionaryArray | None:
    """``text`` dictionary-coded when it holds few distinct values (at most one in four
    rows), else None."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(text)
    return _narrowed(encoded) if len(encoded.dictionary) * 4 <= len(encoded) else None


def codes_of(table: pa.Table) -> dict[str, tuple[Any, int]]:
    """Each of ``coded``'s columns of ``table`` as a code per row (a missing value the last
    code) and how many codes there are: ``Frequencies.of``'s ``codes``. A column whose
    dictionary holds a value twice is left out (counted from its text instead)."""
    import numpy as np
    import pyarrow.compute as pc

    out: dict[str, tuple[Any, int]] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if not pa.types.is_dictionary(column.type):
            continue
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        size = len(array.dictionary)
        if len(pc.unique(array.dictionary)) != size or array.dictionary.null_count:
            continue
        indices = pc.fill_null(array.indices, size) if array.null_count else array.indices
        out[name] = (np.asarray(indices.to_numpy(zero_copy_only=False)), size + 1)
    return out


def plain(table: pa.Table) -> pa.Table:
    """``table`` with ``coded``'s columns back to the text they hold."""
    if not any(pa.types.is_dictionary(t) for t in table.schema.types):
        return table
    return _plain_columns(table, set(range(table.num_columns)))


def take_rows(frame: pd.DataFrame, order: Any) -> pd.DataFrame:
    """``frame.iloc[order]`` (the same values, dtypes, columns, index labels and attrs) for
    positions ``0..len-1``, a column at a time: each of pandas' Arrow text columns of few
    distinct values (as ``coded`` chooses) is taken as its dictionary codes, so that a random
    order's take reads a small dictionary rather than the text of every row; a column's codes
    live only while it is taken. adult grown to 10M rows: its release in memory took 17.1-18.2 s
    instead of 21.0-25.3 s with ``iloc``, at a peak of 6.5-6.7 GB instead of 6.3 GB (not yet
    accounted for: coding a column chunk by chunk, rather than copying its text into one chunk
    first, left the peak as it was)."""
    import numpy as np

    positions = np.asarray(order, dtype=np.int64)
    usual = not frame.columns.is_unique or (len(positions) and positions.min() < 0)
    if usual or not len(frame.columns):
        return frame.iloc[order]
    columns = {i: _taken(frame.iloc[:, i], positions) for i in range(len(frame.columns))}
    taken = pd.DataFrame(columns, copy=False)
    taken.columns = frame.columns
    taken.index = frame.index.take(positions)
    taken.attrs = dict(frame.attrs)  # as iloc carries them
    return taken.set_flags(allows_duplicate_labels=frame.flags.allows_duplicate_labels)


def _taken(column: pd.Series, positions: Any) -> pd.Series:
    """One column's rows at ``positions`` (a text column of few values through its codes)."""
    dtype = column.dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        text = pa.array(column.array)  # Arrow's own buffers (__arrow_array__)
        encoded = _few_values(text.combine_chunks() if isinstance(text, pa.ChunkedArray) else text)
        if encoded is not None:
            chosen = encoded.indices.take(pa.array(positions))
            rows = decoded(pa.DictionaryArray.from_arrays(chosen, encoded.dictionary), text.type)
            # the dtype's own conversion from Arrow, as Table.to_pandas uses it
            values = cast(Any, dtype).__from_arrow__(rows)
            return pd.Series(values, name=column.name, copy=False)
    # the Series' own take keeps its dtype (an array of objects made a Series again would be
    # inferred as text); its labels are the frame's to set
    return column.take(positions).reset_index(drop=True)


def _with_columns(table: pa.Table, columns: list[Any]) -> pa.Table:
    """``columns`` under ``table``'s names and metadata (its DataFrame's dtypes)."""
    made = pa.Table.from_arrays(columns, names=table.column_names)
    return made.replace_schema_metadata(table.schema.metadata)


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    fields = [
        f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema
    ]
    return pa.schema(fields, metadata=schema.metadata)


def joined(tables: Sequence[pa.Table]) -> pa.Table | None:
    """The pieces as one table, in order (each column coded where every piece codes it,
    plain where one does not), or None when they do not hold the same columns and types."""
    # the usual case first: every piece of one schema (at 100M rows, 200 pieces to a bucket:
    # each piece's plain schema made and compared took 4.8 s of the stream's third pass)
    schema = tables[0].schema
    if all(t.schema.equals(schema, check_metadata=True) for t in tables[1:]):
        return pa.concat_tables(tables).combine_chunks()
    first = _plain_schema(schema)
    if not all(_plain_schema(t.schema).equals(first, check_metadata=True) for t in tables):
        return None
    if not all(t.schema.equals(schema) for t in tables):
        mixed = {
            i
            for i, kind in enumerate(tables[0].schema.types)
            if any(not t.schema.types[i].equals(kind) for t in tables[1:])
        }
        tables = [_plain_columns(t, mixed) for t in tables]
    return pa.concat_tables(tables).combine_chunks()


def _plain_columns(table: pa.Table, which: set[int]) -> pa.Table:
    """``table`` with its columns at the positions ``which`` back to plain text."""
    columns = [
        pa.chunked_array([decoded(k, c.type.value_type) for k in c.chunks], c.type.value_type)
        if i in which and pa.types.is_dictionary(c.type)
        else c
        for i, c in enumerate(table.columns)
    ]
    return _with_columns(table, columns)


def write_buckets(table: pa.Table, ends: Any, path: Path) -> None:
    """``table``'s rows, in bucket order (bucket ``b`` the rows up to ``ends[b]``, from the
    end of the one before), as the file ``path``: an Arrow IPC file of one record batch per
    bucket, an empty one where no row went (``read_bucket`` reads one without the others),
    written whole or not at all (a task run again rewrites it). One file per partition: at 100M
    rows a file per partition and bucket made 10,000 files of about 10,000 rows, 0.58 ms each
    to write against 0.04 ms to append the same bytes."""
    batches = table.combine_chunks().to_batches()  # one, or none when no row
    batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
    tmp = path.with_name(f".{path.name}.tmp")
    with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        start = 0
        for end in (int(e) for e in ends):
            writer.write_batch(batch.slice(start, end - start))  # one dictionary for all
            start = end
    os.replace(tmp, path)


def read_bucket(path: Path, bucket: int) -> pa.Table | None:
    """The rows ``write_buckets`` wrote to ``path`` for ``bucket``, or None when none went."""
    with pa.OSFile(str(path), "rb") as source:
        batch = pa.ipc.open_file(source).get_batch(bucket)
    return pa.Table.from_batches([batch]) if batch.num_rows else None


#: rows Parquet's writer takes at a time: a dictionary column's statistics are made once per
#: such batch (of the texts its codes name), so Arrow's default of 1,024 rows spent 1.6 s of
#: 3.1 s writing 10M rows of adult's nine columns, and 8,192 rows 0.5 s of 2.1 s
_WRITE_BATCH = 8192


class CodedParquet:
    """A Parquet file of ``schema``'s columns, written a table at a time, whose text columns
    go in as the codes they already have where the rows come coded (a shuffle's bucket, whose
    generalized columns and other texts of few values are dictionaries: ``coded``) rather than
    each text hashed again by Parquet's writer to code it: 10M rows of adult's nine columns in
    2.1 s rather than 4.3 s. Which columns go coded is set by the first table's codes
    (``coded``); a later table without them is coded by Arrow, as Parquet would have.

    The file reads back as ``pq.write_table`` of the plain tables writes it: the same values,
    types and key-value metadata. Parquet stores the Arrow schema it was given, which would
    read back a coded column as a dictionary: it is given ``schema`` itself instead, stored as
    Arrow stores it (its IPC form, in base64, under ``ARROW:schema``)."""

    def __init__(self, path: Path, schema: pa.Schema, coded: pa.Table | None = None) -> None:
        import base64

        import pyarrow.parquet as pq

        self.schema = schema
        kept = {} if coded is None else {f.name: f.type for f in coded.schema}
        self.file_schema = pa.schema(
            [
                f.with_type(kept[f.name]) if _codes_texts(kept.get(f.name), f.type) else f
                for f in schema
            ]
        )
        self._writer = pq.ParquetWriter(
            str(path), self.file_schema, store_schema=False, write_batch_size=_WRITE_BATCH
        )
        stored = base64.b64encode(schema.serialize().to_pybytes())
        self._writer.add_key_value_metadata({**(schema.metadata or {}), b"ARROW:schema": stored})

    def write(self, table: pa.Table, coded: pa.Table | None = None) -> None:
        """Append ``table`` (``schema``'s columns and types), each column the file holds coded
        taken from ``coded`` (the same rows, some columns as dictionaries of the same texts)
        where it holds that column so, else coded here."""
        columns = []
        for i, field in enumerate(self.file_schema):
            column: Any = table.column(i)
            if pa.types.is_dictionary(field.type):
                held = None
                if coded is not None and field.name in coded.column_names:
                    held = coded.column(field.name)
                kind = field.type.value_type
                if held is not None and _codes_texts(held.type, kind) and len(held) == len(column):
                    column = held.cast(field.type)  # as it is, where its index type is the same
                else:
                    column = column.cast(field.type)
            columns.append(column)
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self.file_schema))

    def close(self) -> None:
        self._writer.close()


def _codes_texts(kind: pa.DataType | None, text: pa.DataType) -> bool:
    """Whether ``kind`` is a dictionary of ``text`` values (string or large string)."""
    if kind is None or not pa.types.is_dictionary(kind):
        return False
    return bool(
        (pa.types.is_string(text) or pa.types.is_large_string(text))
        and kind.value_type.equals(text)
    )
