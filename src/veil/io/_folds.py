"""Folds: a function run on every batch of a table and its results merged in order, whether the
batches are a file's, read one at a time (``TableStream``), or a Dask DataFrame's partitions,
computed on its workers. The scan, the checks and the releases beyond memory are folds.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from veil.exceptions import InputError, MissingExtraError, one_line
from veil.io._ahead import ahead, in_order, workers_for_batches
from veil.io._batches import TableStream, UnsettledTypesError
from veil.progress import Progress

__all__ = [
    "Partitions",
    "dask_frame",
    "dask_modules",
    "each_partition",
    "fold_batches",
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
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as err:
        raise MissingExtraError(
            "a Dask DataFrame needs the scale extra: pip install 'veil[scale]'"
        ) from err
    return dask, dd


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


def each_partition(frame: Any, fn: Callable[[pd.DataFrame], Any]) -> list[Any]:
    """``fn`` of each partition of the Dask DataFrame ``frame``, in order, computed on the
    workers a wave of ``WAVE`` partitions at a time: computing them all at once held every
    partition read until the last was done (7.5 GB a worker for 100M rows)."""
    dask, _ = dask_modules()
    parts = frame.to_delayed()
    task = dask.delayed(fn, pure=True)
    out: list[Any] = []
    for first in range(0, len(parts), WAVE):
        out += dask.compute(*[task(p) for p in parts[first : first + WAVE]])
    return out


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
    """A Dask DataFrame's partitions as the batches of a fold: ``fn`` runs on the workers
    (whichever scheduler is active), a wave of ``WAVE`` partitions at a time, and the results
    are merged in partition order on the client."""

    def __init__(self, frame: Any, report: Progress) -> None:
        self.dask, _ = dask_modules()
        self.frame, self.report = frame, report
        self.columns = [str(c) for c in frame.columns]
        self.lengths = partition_lengths(frame)
        self.rows = sum(self.lengths)

    def fold(self, label: str, fn: Fold, merge: Callable[[Any, Any], Any], start: Any) -> Any:
        """``merge(...merge(start, fn(partition0, 0)), fn(partition1, rows before it)...)``."""
        self.report.step(label)
        self.report.expect(self.rows)
        delayed = self.dask.delayed(fn, pure=True)
        parts = self.frame.to_delayed()
        offsets = np.concatenate([[0], np.cumsum(self.lengths)])[: len(parts)]
        total = start
        for first in range(0, len(parts), WAVE):
            wave = [
                delayed(p, int(o))
                for p, o in zip(
                    parts[first : first + WAVE], offsets[first : first + WAVE], strict=True
                )
            ]
            for result in self.dask.compute(*wave):
                total = merge(total, result)
            self.report.advance(sum(self.lengths[first : first + WAVE]))
        return total
