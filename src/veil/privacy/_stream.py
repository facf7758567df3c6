"""``anonymize_stream``: a release of a table larger than memory, read a batch at a time by the
one release engine (``veil.privacy._passes``: the README's "Tables larger than memory"). What is
particular to files: the CSV's typing pass, the batches, and the writer, which shuffles through
random buckets on disk (temporary files beside the output) unless the policy keeps the order.

Memory: the counts (one row per distinct combination), the sample, and a batch or a bucket at
a time; never the table.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from veil._html import Shown
from veil.exceptions import OutputError, ParameterError
from veil.frequency import (
    COUNT,
    SUM_ROWS,
    Frequencies,
    FrequencySum,
    first_seen_groups,
    mixed_radix,
)
from veil.hierarchy import Hierarchy
from veil.io import (
    DEFAULT_BATCH_ROWS,
    BatchWriter,
    Behind,
    ContentHash,
    TableStream,
    ahead,
    fold_batches,
    in_order,
    typed_as_read,
    workers_for_batches,
)
from veil.io import _pieces as pieces
from veil.privacy import _passes as engine
from veil.privacy._passes import Passes, Written, release_in_passes, row_hashes
from veil.privacy._plan import PolicyLike
from veil.privacy.certificate import Certificate
from veil.progress import Progress, as_progress

__all__ = ["DEFAULT_BATCH_ROWS", "StreamedRelease", "anonymize_stream"]

#: Some columns of a batch as codes (``pieces.codes_of``).
Codes = dict[str, tuple[np.ndarray, int]]


@dataclass
class StreamedRelease(Shown):
    """A release written a batch at a time: its certificate, how long each pass took, and the
    file it is in (``path``: the output asked for, or a private temporary file that
    ``to_file`` moves where it belongs)."""

    certificate: Certificate
    seconds: dict[str, float] = field(default_factory=dict)
    rows: int = 0
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """Where the release is, its size, each pass's seconds and its certificate."""
        return {
            "path": None if self.path is None else str(self.path),
            "rows": self.rows,
            "seconds": self.seconds,
            "certificate": self.certificate.to_dict(),
        }

    def lines(self) -> list[str]:
        """Where the release is, and the certificate's summary."""
        return [f"written to {self.path}", *self.certificate.summary()]

    @property
    def data(self) -> pd.DataFrame:
        """The release read back whole (it fits in memory only when the table did)."""
        from veil.io import read

        if self.path is None:
            raise OutputError("this release was written where its caller staged it; read that file")
        return read(self.path)

    def to_file(self, path: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Move the release to ``path`` (same format as ``self.path``; an existing file is
        replaced only with ``force``, never an input) and return it."""
        from veil.io import OutputSet

        if self.path is None:
            raise OutputError("this release was written where its caller staged it; move that file")
        target = Path(path)
        if target.suffix.lower() != self.path.suffix.lower():
            raise ParameterError(f"{target}: the release is a {self.path.suffix} file; name it so")
        with OutputSet(force=force) as outputs:
            shutil.copyfile(self.path, outputs.stage(target))
        if self.path.parent.name.startswith("veil-release-"):
            shutil.rmtree(self.path.parent, ignore_errors=True)
        self.path = target
        return target


def anonymize_stream(
    source: TableStream,
    policy: PolicyLike | None,
    output: Path,
    fmt: str,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    escape_formulas: bool = True,
    progress: Callable[[str], None] | Progress | None = None,
) -> StreamedRelease:
    """Release ``source`` under ``policy`` into ``output`` (a staged path the caller moves into
    place: it holds the whole release only when this returns), a batch of ``batch_rows`` rows
    at a time. Raises as ``anonymize`` does, and ``PolicyError`` for a step or a method that
    needs every row at once."""
    report = as_progress(progress)
    seconds: dict[str, float] = {}

    def released() -> Certificate:
        seconds.clear()
        if source.kind == "csv":  # the reading that typed it (the first batch's, or every row)
            seconds["typing"] = time.perf_counter() - clock
        passes = _FilePasses(source, batch_rows, report, output, fmt, escape_formulas)
        return release_in_passes(
            passes, policy, hierarchies=hierarchies, progress=progress, seconds=seconds
        )

    clock = time.perf_counter()
    certificate = typed_as_read(source, batch_rows, report, released)
    return StreamedRelease(certificate, seconds, certificate.rows_in)


class _FilePasses(Passes):
    """A CSV or Parquet file (or files) read a batch at a time; the release written to one
    file through random buckets (temporary files beside it) unless the order is kept."""

    def __init__(
        self,
        source: TableStream,
        batch_rows: int,
        report: Progress,
        output: Path,
        fmt: str,
        escape: bool,
    ) -> None:
        self.source, self.batch_rows, self.report = source, batch_rows, report
        self.output, self.fmt, self.escape = output, fmt, escape
        self.columns = list(source.columns)
        self.hashed = row_hashes

    @property  # read-only: the file's first reading counts them
    def rows(self) -> int:  # type: ignore[override]
        """The table's rows; while a CSV file's first reading has not counted them, as many as
        a sample takes (``sample`` stops at the file's end)."""
        return int(self.source.rows) if self.source.rows is not None else engine.SAMPLE_ROWS

    def sample(self, rows: int) -> pd.DataFrame:
        return self.source.head(rows)

    def fold(self, label: str, fn: engine.Fold, merge: engine.Merge, start: Any) -> Any:
        return fold_batches(self.source, self.batch_rows, self.report, label, fn, merge, start)

    def release(
        self,
        produce: engine.Produce,
        measured: list[str],
        seed: int | bool | None,
        columns: list[str],
    ) -> engine.Released:
        self.source.prepare(batch_rows=self.batch_rows)  # typed by the first pass's reading
        self.report.step("applying the release (second pass)")
        self.report.expect(self.rows)
        writer = _Writer(
            BatchWriter(self.output, self.fmt, formats=self.source.formats, escape=self.escape),
            measured,
        )
        tallies: list[list[Any]] = []

        def produced() -> Iterator[tuple[pd.DataFrame, Codes, pa.Table | None]]:
            # batches made a core's worth at a time (each thread with steps of its own, so
            # that each batch's tallies are its own), in order
            batches = ahead(self.source.batches(self.batch_rows))
            # rows spilled to a shuffle's buckets keep the generalized columns as their codes
            made = in_order(_Rows(produce, texts=seed is False), batches, workers_for_batches())
            for rows, (out, counted, codes) in made:
                tallies.append(counted)
                self.report.advance(rows)
                yield out, codes, None

        # each batch escaped and counted here, hashed and written on threads of their own (in
        # order) while the next one is made
        with Behind(writer.hash) as hashing, Behind(writer.write) as writing:
            labels: dict[str, pa.Array] = getattr(produce, "labels", dict)()
            writer.count_by(labels)
            for batch, codes, coded in self._shuffled(produced(), seed, labels):
                batch = writer.counted(batch, codes, coded)
                hashing.submit(batch)
                writing.submit((batch, coded))
        return writer.written(columns), tallies

    def _shuffled(
        self,
        batches: Iterator[tuple[pd.DataFrame, Codes, pa.Table | None]],
        seed: int | bool | None,
        labels: dict[str, pa.Array],
    ) -> Iterator[tuple[pd.DataFrame, Codes | None, pa.Table | None]]:
        """``batches`` (each with some columns' codes, of ``labels``) in a random order of
        rows (an external shuffle through buckets on disk, each about a batch), or as they
        come when ``seed`` is False; each with the codes of its coded columns, and its rows
        as Arrow with some text columns as dictionaries when it has them so (a bucket's)."""
        if seed is False:
            yield from batches
            return
        rng = np.random.default_rng(seed if isinstance(seed, int) else None)
        buckets = max(1, math.ceil(self.rows / self.batch_rows))
        folder = Path(
            tempfile.mkdtemp(prefix=f".{self.output.name}.veil-shuffle-", dir=self.output.parent)
        )
        try:
            spill = _Spill(folder, buckets, labels)
            try:
                # the rows in bucket order, each bucket's in their order (one take per column,
                # not one per bucket), each bucket then a slice of them: on a thread of its own
                # while the next batch is made
                with Behind(spill.add) as spilling:
                    for out, codes, _ in batches:
                        chosen = rng.integers(0, buckets, len(out))
                        order = pieces.bucket_order(chosen, buckets)
                        spilling.submit((out, order, chosen, codes))
            finally:
                spill.close()
            self.report.step("writing the release in a random order (third pass)")
            for b in range(buckets):
                bucket = spill.bucket(b)
                if bucket is not None:
                    yield bucket.permuted(rng.permutation(bucket.rows))
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class _Rows:
    """``produce`` of a batch, and the batch's rows (a class: each thread gets a copy);
    without ``texts``, a generalized column may stay its codes (``_Produce.coded``)."""

    def __init__(self, produce: engine.Produce, *, texts: bool = True) -> None:
        self.produce, self.texts = produce, texts

    def __call__(self, batch: pd.DataFrame) -> tuple[int, tuple[pd.DataFrame, list[Any], Codes]]:
        coded = getattr(self.produce, "coded", None)  # the engine's, with its texts' codes
        if coded is None:
            return len(batch), (*self.produce(batch), {})
        return len(batch), coded(batch, texts=self.texts)


class _Writer:
    """The release's batches, each as it is written (formula cells escaped in a CSV), hashed,
    written and counted (``measured``), in order."""

    def __init__(self, writer: BatchWriter, measured: list[str]) -> None:
        self.writer, self.measured = writer, measured
        self.digest: ContentHash | None = None
        self.counts = FrequencySum()
        self._by_labels: _LabelCounts | None = None

    def count_by(self, labels: Mapping[str, pa.Array]) -> None:
        """Count the batches by the codes of ``labels`` (each generalized column's level's
        labels) while every measured column comes coded by them (``_LabelCounts``)."""
        if self.measured and all(n in labels for n in self.measured):
            self._by_labels = _LabelCounts(self.measured, labels)

    def counted(
        self, batch: pd.DataFrame, codes: Codes | None = None, coded: pa.Table | None = None
    ) -> pd.DataFrame:
        """``batch`` as it will be written (formula cells escaped in a CSV), counted: from
        ``codes`` (some columns' codes of the values in ``batch``; ``coded``: its rows as Arrow,
        those columns as dictionaries) when no cell was escaped."""
        escaped = self.writer.escaped
        batch = self.writer.prepared(batch)
        if self.digest is None:
            self.digest = ContentHash(list(batch.columns))
        if self.measured:
            same = codes is not None and self.writer.escaped == escaped  # as written
            by_labels = self._by_labels
            if same and by_labels is not None and by_labels.takes(codes or {}, coded):
                by_labels.add(codes or {})
                return batch
            if by_labels is not None:  # from here on by texts, after what was counted by codes
                self.counts.add(by_labels.total())
                self._by_labels = None
            self.counts.add(Frequencies.of(batch, self.measured, codes=codes if same else None))
        return batch

    def hash(self, batch: pd.DataFrame) -> None:
        assert self.digest is not None
        self.digest.update(batch)

    def write(self, sent: tuple[pd.DataFrame, pa.Table | None]) -> None:
        self.writer.write(*sent)

    def written(self, columns: list[str]) -> Written:
        """The file finished (``columns``: its header when every row was withheld)."""
        if self._by_labels is not None:
            self.counts.add(self._by_labels.total())
            self._by_labels = None
        if self.digest is not None:
            columns = list(self.digest.columns)
        digest = self.digest or ContentHash(columns)
        self.writer.close(columns)
        return Written(
            digest.hexdigest(), self.counts.total(), self.writer.rows, columns, self.writer.escaped
        )


class _LabelCounts:
    """A release's counts over ``measured`` while every batch holds each of those columns as
    codes of its level's labels (``labels``, the same for every batch: a generalized column's):
    each batch's classes as integer keys of those codes, merged by key in the order first seen,
    and made texts once, at the end. The table ``FrequencySum`` makes of each batch's
    ``Frequencies.of``, row for row, without taking every class's texts in every batch and
    merging the batches' tables by their texts (at 100M rows, 200 buckets, about 11 s of the
    third pass's main thread)."""

    def __init__(self, measured: list[str], labels: Mapping[str, pa.Array]) -> None:
        self.measured = list(measured)
        self.labels = [labels[n].cast(pa.string()) for n in self.measured]
        self.radix = [len(t) + 1 for t in self.labels]  # a missing value the last code
        self._keys: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._rows = 0  # the classes of the batches not merged yet

    def takes(self, codes: Codes, coded: pa.Table | None) -> bool:
        """Whether a batch's ``codes`` hold every measured column as codes of its labels
        (``coded``, a bucket's rows as Arrow: each such column a dictionary of those labels)."""
        if math.prod(self.radix) >= 2**62:  # the keys would be re-coded
            return False
        for name, labels in zip(self.measured, self.labels, strict=True):
            if name not in codes or int(codes[name][1]) > len(labels) + 1:
                return False
            if coded is None:  # a batch as generalized: its codes are its labels'
                continue
            column = coded.column(name) if name in coded.column_names else None
            if column is None or not pa.types.is_dictionary(column.type) or column.num_chunks != 1:
                return False
            if not column.chunk(0).dictionary.cast(pa.string()).equals(labels):
                return False
        return True

    def add(self, codes: Codes) -> None:
        """Count a batch ``takes``."""
        columns = [np.asarray(codes[n][0], dtype=np.int64) for n in self.measured]
        key, _ = mixed_radix(columns, self.radix)
        group, first = first_seen_groups(key)
        self._keys.append(key[first])
        self._counts.append(np.bincount(group, minlength=len(first)))
        self._rows += len(first)
        merged = len(self._keys[0]) if len(self._keys) > 1 else 0
        if self._rows > max(SUM_ROWS, merged):  # as ``FrequencySum`` waits
            self._merge()

    def _merge(self) -> None:
        if len(self._keys) > 1:
            group, keys = pd.factorize(np.concatenate(self._keys))  # first seen first
            counts = np.bincount(group, weights=np.concatenate(self._counts), minlength=len(keys))
            self._keys, self._counts = [np.asarray(keys)], [counts.astype(np.int64)]
        self._rows = 0

    def total(self) -> Frequencies | None:
        """Every batch counted, as one table of texts (None when no batch was)."""
        if not self._keys:
            return None
        self._merge()
        key = self._keys[0].copy()
        codes = {}
        for name, r in reversed(list(zip(self.measured, self.radix, strict=True))):
            codes[name] = key % r
            key //= r
        out: dict[str, Any] = {}
        for name, labels in zip(self.measured, self.labels, strict=True):
            code = codes[name]
            missing = code >= len(labels)
            texts = labels.take(pa.array(np.where(missing, 0, code), mask=missing))
            out[name] = pd.Series(texts, dtype=pieces.TEXT)
        out[COUNT] = self._counts[0]
        return Frequencies(tuple(self.measured), None, pd.DataFrame(out))


class _Spill:
    """The shuffle's buckets on disk: the pieces each batch sends them, in batch order. A piece
    goes through Arrow when its columns come back from Arrow unchanged (the usual case: the
    batch is taken into bucket order once, and each piece is a slice of it), else as a pickled
    DataFrame. A bucket's Arrow pieces are record batches of one Arrow IPC stream, whose schema
    and dictionaries are written once (a dictionary again only where a piece's differs): at
    100M rows each of 200 batches sends a piece of ~2,500 rows to each of 200 buckets, and a
    stream of its own for each piece cost 0.18 ms to write and read, 7 s in all. A piece of
    another schema, or a pickled one, starts the bucket's next file (``_Segment``)."""

    def __init__(self, folder: Path, buckets: int, labels: dict[str, pa.Array]) -> None:
        self.folder, self.buckets, self.labels = folder, buckets, labels
        self._open: list[_Segment | None] = [None] * buckets
        self._files: list[list[Path]] = [[] for _ in range(buckets)]

    def add(self, sent: tuple[pd.DataFrame, np.ndarray, np.ndarray, Codes]) -> None:
        """Send each row of a frame to its chosen bucket (``sent``: the frame, its rows sorted
        by bucket stably, each row's bucket, and some columns' codes of ``labels``: those
        columns are not coded again)."""
        frame, order, chosen, codes = sent
        sizes = np.bincount(chosen, minlength=self.buckets)
        ends = np.cumsum(sizes)
        table = pieces.as_arrow(frame)  # a column left as its codes goes as it is
        known = {n: (c, self.labels[n]) for n, (c, _) in codes.items() if n in self.labels}
        arrow = None if table is None else pieces.coded(table, known).take(pa.array(order))
        rows = pieces.with_texts(frame).iloc[order] if arrow is None else None
        for b in np.flatnonzero(sizes).tolist():
            start, stop = (int(ends[b - 1]) if b else 0), int(ends[b])
            if arrow is not None:
                piece = arrow.slice(start, stop - start)
                self._segment(b, piece.schema).writer.write_table(piece)
            else:
                assert rows is not None
                segment = self._segment(b, None)
                pickle.dump(rows.iloc[start:stop], segment.sink, protocol=pickle.HIGHEST_PROTOCOL)

    def _segment(self, bucket: int, schema: pa.Schema | None) -> _Segment:
        """The bucket's open file for a piece of ``schema`` (None: a pickled DataFrame), a new
        one when its open file holds another kind."""
        segment = self._open[bucket]
        if segment is not None and segment.holds(schema):
            return segment
        if segment is not None:
            segment.close()
        files = self._files[bucket]
        path = self.folder / f"{bucket}.{len(files)}.{'pickles' if schema is None else 'arrows'}"
        files.append(path)
        segment = self._open[bucket] = _Segment(path, schema)
        return segment

    def close(self) -> None:
        for b, segment in enumerate(self._open):
            if segment is not None:
                segment.close()
                self._open[b] = None

    def bucket(self, bucket: int) -> _Bucket | None:
        """The rows sent to ``bucket`` (its files then removed), or None when none were."""
        found: list[Any] = []
        for path in self._files[bucket]:  # veil's own temporary files
            if path.suffix == ".arrows":
                with pa.OSFile(str(path), "rb") as source:
                    found.append(pa.ipc.open_stream(source).read_all())
            else:
                with open(path, "rb") as handle, contextlib.suppress(EOFError):
                    while True:
                        found.append(pickle.load(handle))
            path.unlink()
        self._files[bucket] = []
        return _Bucket(found) if found else None


class _Segment:
    """One of a bucket's files, open: an Arrow IPC stream of pieces of one schema, or
    pickled DataFrames one after another (``schema`` None)."""

    def __init__(self, path: Path, schema: pa.Schema | None) -> None:
        self.schema = schema
        self.sink: Any = open(path, "wb") if schema is None else pa.OSFile(str(path), "wb")  # noqa: SIM115
        self.writer: Any = None if schema is None else pa.ipc.new_stream(self.sink, schema)

    def holds(self, schema: pa.Schema | None) -> bool:
        """Whether a piece of ``schema`` goes in this file."""
        if self.schema is None or schema is None:
            return self.schema is schema
        return bool(self.schema.equals(schema, check_metadata=True))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.sink.close()


class _Bucket:
    """One bucket's pieces, in order: Arrow tables of the same columns are joined and permuted
    in Arrow, anything else as DataFrames (the same rows, the same dtypes)."""

    def __init__(self, found: list[Any]) -> None:
        self.pieces = found
        self.rows = sum(len(p) if isinstance(p, pd.DataFrame) else p.num_rows for p in found)
        tables = all(isinstance(p, pa.Table) for p in found)
        self.table = pieces.joined(found) if tables else None
        self.arrow = self.table is not None

    def permuted(self, permutation: np.ndarray) -> tuple[pd.DataFrame, Codes, pa.Table | None]:
        """The bucket's rows in ``permutation``'s order, the codes its coded columns hold
        (``pieces.codes_of``: what counting them needs, without coding the texts again), and
        the rows as Arrow with those columns coded (what a Parquet file takes as they are),
        when they went through Arrow."""
        if self.table is not None:
            taken = self.table.take(pa.array(permutation))
            return pieces.plain(taken).to_pandas(), pieces.codes_of(taken), taken
        frames = [
            p if isinstance(p, pd.DataFrame) else pieces.plain(p).to_pandas() for p in self.pieces
        ]
        bucket = pd.concat(frames) if len(frames) > 1 else frames[0]
        return bucket.iloc[permutation], {}, None
