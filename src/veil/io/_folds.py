"""Folds: a function run on every batch of a table and its results merged in order, whether the
batches are a file's, read one at a time (``TableStream``), or a Dask DataFrame's partitions,
computed on its workers. The scan, the checks and the releases beyond memory are folds.
"""

from __future__ import annotations

import collections
import contextlib
import glob
import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from veil.exceptions import InputError, MissingExtraError, one_line
from veil.io._ahead import ahead, in_order, workers_for_batches
from veil.io._batches import TableStream, UnsettledTypesError, text_fields
from veil.progress import Progress

__all__ = [
    "ParquetParts",
    "Partitions",
    "dask_frame",
    "dask_modules",
    "each_partition",
    "fold_batches",
    "in_turn",
    "parquet_parts",
    "partition_lengths",
]

#: Partitions computed at once by ``Partitions.fold`` (their results merged, then dropped).
WAVE = 16
#: A fold's function: (a batch, the rows before it) -> a partial result.
Fold = Callable[[pd.DataFrame, int], Any]


def fold_batches(
    source: TableStream,
    batch_rows: int,
    report: Progress,
    label: str,
    fn: Fold,
    merge: Callable[[Any, Any], Any],
    start: Any,
    columns: Sequence[str] | None = None,
    *,
    workers: int | None = None,
) -> Any:
    """``merge(...merge(start, fn(batch0, 0)), fn(batch1, rows before it)...)`` over the
    batches of ``source`` (only ``columns``, if given), with a progress bar labelled
    ``label``. The next batch is read while ``fn`` works on others: ``workers`` batches at
    once (default ``workers_for_batches``), each thread with a copy of ``fn`` of its own
    (``in_order``: the results merged in the batches' order all the same)."""
    workers = workers_for_batches() if workers is None else workers
    report.step(label)
    report.expect(int(source.rows or 0))

    def numbered() -> Iterator[tuple[pd.DataFrame, int]]:
        first = 0
        for batch in ahead(source.batches(batch_rows, columns=columns)):
            yield batch, first
            first += len(batch)

    total = start
    for rows, part in in_order(_Sized(fn), numbered(), workers):
        total = merge(total, part)
        report.advance(rows)
    return total


T = TypeVar("T")


def typed_as_read(
    source: TableStream, batch_rows: int, report: Progress, run: Callable[[], T]
) -> T:
    """``run()``, whose folds read ``source``; a CSV file not yet typed is typed on its first
    batch (``TableStream.presume``) and confirmed on every row by ``run``'s first reading of
    them, rather than read once more first. Where a later row types a column otherwise, the
    file is typed over every row (a reading of its own) and ``run`` runs again: its result is
    the one typing first would have given."""
    if source.kind != "csv" or source.rows is not None:
        return run()
    report.step(
        f"typing the columns of {source.paths[0].name} on its first rows (confirmed on every "
        "row as the first pass reads it)"
    )
    source.presume(batch_rows=batch_rows, progress=report.advance)
    try:
        return run()
    except UnsettledTypesError as err:
        report.step(
            f"{one_line(str(err))}: typing every row first (a reading of its own), then "
            "starting again"
        )
        source.prepare(batch_rows=batch_rows, progress=report.advance)
    return run()


class _Sized:
    """A fold's function of (a batch, the rows before it), returning the batch's rows too (a
    class, so that ``in_order`` can give each thread a copy)."""

    def __init__(self, fn: Fold) -> None:
        self.fn = fn

    def __call__(self, numbered: tuple[pd.DataFrame, int]) -> tuple[int, Any]:
        batch, first = numbered
        return len(batch), self.fn(batch, first)


def dask_modules() -> tuple[Any, Any]:
    """(dask, dask.dataframe), or one line naming the extra."""
    dask = dask_core()
    try:
        import dask.dataframe as dd
    except ImportError as err:
        raise MissingExtraError(_SCALE) from err
    return dask, dd


_SCALE = "a Dask DataFrame needs the scale extra: pip install 'veil[scale]'"


def dask_core() -> Any:
    """dask, without its DataFrame (0.46 s more to import, which ``ParquetParts`` and the
    passes on them do without), or one line naming the extra."""
    try:
        import dask
    except ImportError as err:
        raise MissingExtraError(_SCALE) from err
    return dask


def dask_frame(source: str, *, columns: list[str] | None = None) -> Any:
    """Parquet files (a file, a folder or a glob) as a Dask DataFrame, a partition per row
    group at most; a CSV file as Dask reads it, in blocks, with the delimiter and encoding
    ``read`` detects."""
    from veil.io._files import PARQUET_SUFFIXES

    _, dd = dask_modules()
    text = str(source)
    paths = [Path(p) for p in glob.glob(text)] if glob.has_magic(text) else [Path(text)]
    if not paths or not all(p.exists() for p in paths):
        raise InputError(f"{source}: no such file or folder; check the path")
    files = [p for p in paths if not p.is_dir()]
    if files and not all(p.suffix.lower() in PARQUET_SUFFIXES for p in files):
        if len(paths) > 1:
            raise InputError(
                f"{source}: several files are read on a cluster only as Parquet; give one CSV "
                "file, or convert them"
            )
        return _dask_csv(files[0], columns)
    return dd.read_parquet(text, columns=columns, split_row_groups=True)  # a row group each


def _dask_csv(path: Path, columns: list[str] | None) -> Any:
    """One CSV file as Dask reads it in blocks of 64 MB, typed as a stream types it: the
    delimiter and encoding detected as ``read`` does (a CSV delimited by ';' or a tab, a .tsv),
    each column's type decided over every row in a first reading (Dask's own guess, from a
    sample, stopped the job when a later block held a value it did not fit: one ``n/a`` after
    3M ages). A compressed file cannot be cut into blocks: it is refused, saying what to do."""
    from veil.io._files import check_readable, packing

    check_readable(path)
    packed = packing(path)
    if packed is not None:
        raise InputError(
            f"{path}: a {packed[0]} file, which a cluster cannot cut into blocks for its "
            "workers; give --streaming, or write it as Parquet"
        )
    reading = TableStream(str(path)).pandas_reading()
    _, dd = dask_modules()
    return dd.read_csv(str(path), usecols=columns, blocksize="64MB", **reading)


@dataclass(frozen=True)
class _RowGroup:
    """One row group of a Parquet file as Dask's ``read_parquet`` makes it a partition, read
    with its text columns' dictionaries: their texts made from the dictionary and their codes
    kept (``undictionaried``), so that a fold's task that reads it while ``codes_kept`` is
    entered codes no text again (a picklable function: the workers run it)."""

    columns: tuple[str, ...]
    texts: tuple[tuple[str, Any], ...]  # (name, Arrow type) of the text columns

    def __call__(self, piece: tuple[str, int], rows: int | None = None) -> pd.DataFrame:
        """The partition (only its first ``rows`` rows, if given)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from veil.io._batches import undictionaried

        path, group = piece
        texts, columns = dict(self.texts), list(self.columns)
        table = None
        with contextlib.closing(pq.ParquetFile(path, read_dictionary=list(texts))) as handle:
            if rows is None:
                table = handle.read_row_group(group, columns=columns)
            elif rows:
                batches, held = [], 0
                for batch in handle.iter_batches(rows, row_groups=[group], columns=columns):
                    batches.append(batch)
                    held += batch.num_rows
                    if held >= rows:
                        break
                table = pa.Table.from_batches(batches).slice(0, rows)
        if table is None or not table.num_rows:  # no batch to take: its columns, empty
            empty = pq.read_schema(path).empty_table().select(columns)
            return empty.to_pandas(types_mapper=_dask_types)
        return undictionaried(table.combine_chunks().to_batches(), texts, _dask_types)


def _dask_types(kind: Any) -> Any:
    """The pandas dtype Dask's ``read_parquet`` gives an Arrow type with ``convert-string`` on
    (its texts as pandas' Arrow strings, its dates as Arrow dates), None for Arrow's own."""
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pd.StringDtype("pyarrow")
    if pa.types.is_date(kind):
        return pd.ArrowDtype(kind)
    return None


@dataclass(frozen=True)
class ParquetParts:
    """Parquet files as the partitions Dask's ``read_parquet(..., split_row_groups=True)``
    makes of them, a row group each, in the same order with the same values and dtypes, but
    read by the task that uses each one (``Partitions.task``) with its text columns'
    dictionaries: a text is then never hashed to code it, neither to count it nor to find it
    in its hierarchy (the stream reads its batches so), and the workers never import Dask's
    DataFrame. Adult grown to 10M rows released on two workers (``veil anonymize --engine
    dask``, four runs each, alternately): 18.3 s and 31.3 CPU seconds against 21.5 s and 37.3
    through Dask's reading (medians), the parts byte for byte the same. Made by
    ``parquet_parts`` where Dask's reading is known to be this one; other files stay a Dask
    DataFrame."""

    pieces: tuple[tuple[str, int], ...]  # (file, row group) of each partition
    lengths: tuple[int, ...]
    reader: _RowGroup

    @property
    def columns(self) -> list[str]:
        return list(self.reader.columns)

    def __getitem__(self, columns: Sequence[str]) -> ParquetParts:
        """Only ``columns`` (a list, as a DataFrame takes it)."""
        missing = [c for c in columns if c not in self.reader.columns]
        if missing:
            raise KeyError(f"{missing} not in the columns")
        texts = tuple((n, t) for n, t in self.reader.texts if n in columns)
        return replace(self, reader=replace(self.reader, columns=tuple(columns), texts=texts))

    @property
    def npartitions(self) -> int:
        return len(self.pieces)

    def head(self, rows: int) -> pd.DataFrame:
        """The first ``rows`` rows, read here (only those: not the whole row group they begin),
        as Dask's ``head`` of the first partitions gives them."""
        frames, held = [], 0
        for piece, length in zip(self.pieces, self.lengths, strict=True):
            frames.append(self.reader(piece, rows=min(rows - held, length)))
            held += len(frames[-1])
            if held >= rows:
                break
        return pd.concat(frames) if len(frames) > 1 else frames[0]


def parquet_parts(source: str, columns: Sequence[str] | None = None) -> ParquetParts | None:
    """``source`` (a Parquet file, a folder of them or a glob) as ``ParquetParts`` (only
    ``columns``, if given), or None where Dask's reading may differ from it and the files are
    read as a Dask DataFrame instead: a column of another type than text, numbers, truth
    values, timestamps or dates (dictionaries, decimals, nested values, nulls alone), an index
    stored as a column, a file without rows, a folder holding anything but Parquet files, or
    Dask's ``convert-string`` off."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from dask.utils import natural_sort_key

    from veil.io._files import PARQUET_SUFFIXES

    text = str(source)
    if glob.has_magic(text):
        paths = [Path(p) for p in glob.glob(text)]
    elif Path(text).is_dir():
        paths = list(Path(text).iterdir())
        if any(p.name.startswith(("_", ".")) for p in paths):
            return None  # Dask leaves such files out, or reads its metadata from them
    else:
        paths = [Path(text)]
    plain = all(p.is_file() and p.suffix.lower() in PARQUET_SUFFIXES for p in paths)
    # Dask's ``pyarrow_strings_enabled``, without importing Dask's DataFrame to ask it
    strings = dask_core().config.get("dataframe.convert-string", None) is not False
    if not paths or not plain or not strings:
        return None
    paths.sort(key=lambda p: natural_sort_key(str(p)))  # Dask's order
    pieces: list[tuple[str, int]] = []
    lengths: list[int] = []
    schema = None
    for path in paths:
        try:
            handle = pq.ParquetFile(path)
        except (pa.ArrowException, OSError):
            return None  # Dask's reading says what is wrong
        with contextlib.closing(handle):
            arrow = handle.schema_arrow
            meta = handle.metadata
            if (schema is not None and not arrow.equals(schema)) or not meta.num_row_groups:
                return None
            pandas = json.loads((arrow.metadata or {}).get(b"pandas", b"{}"))
            index = pandas.get("index_columns", [])
            if any(not isinstance(i, dict) or i.get("kind") != "range" for i in index):
                return None  # an index stored as a column: Dask may make it the index
            schema = arrow
            pieces += [(str(path), g) for g in range(meta.num_row_groups)]
            lengths += [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert schema is not None
    known = (
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_boolean,
        pa.types.is_timestamp,
        pa.types.is_date,
    )
    if not all(any(k(f.type) for k in known) for f in schema):
        return None
    names = list(columns) if columns is not None else list(schema.names)
    if not set(names) <= set(schema.names):
        return None  # Dask's reading names the column
    texts = tuple(text_fields(schema, names).items())
    return ParquetParts(tuple(pieces), tuple(lengths), _RowGroup(tuple(names), texts))


def _read_then(
    fn: Callable[[pd.DataFrame, Any], Any], read: _RowGroup, piece: Any, arg: Any
) -> Any:
    """``fn`` of the partition ``read(piece)`` and ``arg``, read where it runs, its texts'
    codes kept while ``fn`` runs."""
    from veil.io._content import codes_kept

    with codes_kept():
        return fn(read(piece), arg)


def each_partition(frame: Any, fn: Callable[[pd.DataFrame], Any]) -> list[Any]:
    """``fn`` of each partition of the Dask DataFrame ``frame``, in order, computed on the
    workers at most ``WAVE`` partitions at a time (``in_turn``): computing them all at once held
    every partition read until the last was done (7.5 GB a worker for 100M rows)."""
    dask = dask_core()
    task = dask.delayed(fn, pure=True)
    return list(in_turn([task(p) for p in frame.to_delayed()]))


def in_turn(tasks: Sequence[Any]) -> Iterator[Any]:
    """The results of ``tasks`` (Dask's delayed), in order, with at most ``WAVE`` of them
    computed or held at once. On a ``distributed`` client each task is submitted as the one
    ``WAVE`` places before it is taken, so that the workers wait neither for a wave's slowest
    task nor for the caller working on the results; on Dask's own schedulers, a wave at a
    time."""
    dask = dask_core()
    client = _distributed_client()
    if client is None:
        for first in range(0, len(tasks), WAVE):
            yield from dask.compute(*tasks[first : first + WAVE])
        return
    waiting = iter(tasks)
    # (a caller that stops early drops the futures, and with them the tasks not yet done)
    pending = collections.deque(client.compute(t) for t in itertools.islice(waiting, WAVE))
    while pending:
        result = pending.popleft().result()
        following = next(waiting, None)
        if following is not None:
            pending.append(client.compute(following))
        yield result


def _distributed_client() -> Any:
    """The ``distributed.Client`` Dask computes with now, or None (its own schedulers)."""
    import sys

    if "distributed" not in sys.modules:
        return None
    from dask.base import get_scheduler
    from distributed import Client

    owner = getattr(get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


def partition_lengths(frame: Any) -> list[int]:
    """The rows of each partition of the Dask DataFrame ``frame``: from the files' metadata
    where Dask reads them there (Parquet's row groups: 2 ms for 10M rows, where counting them
    read every partition, 1.3 s on two workers), else counted on the workers."""
    known = getattr(getattr(frame, "expr", None), "_get_lengths", None)  # Dask's own, unlisted
    try:
        lengths = known() if callable(known) else None
    except Exception:  # not known for this frame: counted instead
        lengths = None
    if isinstance(lengths, tuple) and len(lengths) == frame.npartitions:
        return [int(n) for n in lengths]
    return [int(n) for n in each_partition(frame, len)]


class Partitions:
    """A Dask DataFrame's partitions (or ``ParquetParts``) as the batches of a fold: ``fn``
    runs on the workers (whichever scheduler is active), at most ``WAVE`` partitions at a time
    (``in_turn``), and the results are merged in partition order on the client."""

    def __init__(self, frame: Any, report: Progress) -> None:
        self.dask = dask_core()
        self.frame, self.report = frame, report
        self.columns = [str(c) for c in frame.columns]
        if isinstance(frame, ParquetParts):
            self.lengths, self._parts = list(frame.lengths), None
        else:
            self.lengths, self._parts = partition_lengths(frame), frame.to_delayed()
        self.rows = sum(self.lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    def task(self, fn: Any, index: int, arg: Any) -> Any:
        """``fn(partition index, arg)`` as a task (``fn``: a function made a task's value
        once, ``dask.delayed(fn, pure=True)``, or a task's result); a ``ParquetParts``
        partition is read by that task, its texts' codes kept for ``fn``."""
        if isinstance(self.frame, ParquetParts):
            read = self.dask.delayed(_read_then, pure=True)
            return read(fn, self.frame.reader, self.frame.pieces[index], arg)
        assert self._parts is not None
        return fn(self._parts[index], arg)

    def head(self, rows: int) -> pd.DataFrame:
        """The first ``rows`` rows: only the partitions that hold them are read."""
        if isinstance(self.frame, ParquetParts):
            return self.frame.head(rows)
        # only the partitions that hold rows: Dask's head drops an empty one it knows of, then
        # fails finding fewer partitions than it was asked for (a leading empty row group)
        held = [i for i, n in enumerate(self.lengths) if n] or [0]
        ends = np.cumsum([self.lengths[i] for i in held])
        needed = held[: int(np.searchsorted(ends, rows)) + 1]
        # the head taken on the workers: only its rows come to the client, not the partitions'
        return self.frame.partitions[needed].head(rows, npartitions=len(needed))

    def fold(self, label: str, fn: Fold, merge: Callable[[Any, Any], Any], start: Any) -> Any:
        """``merge(...merge(start, fn(partition0, 0)), fn(partition1, rows before it)...)``."""
        self.report.step(label)
        self.report.expect(self.rows)
        offsets = np.concatenate([[0], np.cumsum(self.lengths)])[: len(self)]
        call = self.dask.delayed(fn, pure=True)
        if _distributed_client() is not None:  # sent to the cluster once, not with each task
            (call,) = self.dask.persist(call)
        total = start
        tasks = [self.task(call, i, int(offsets[i])) for i in range(len(self))]
        for rows, result in zip(self.lengths, in_turn(tasks), strict=True):
            total = merge(total, result)
            self.report.advance(rows)
        return total
