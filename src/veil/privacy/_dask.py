"""Releases and checks of a Dask DataFrame (the extra ``veil[scale]``: ``dask[dataframe]``,
``distributed``): DESIGN.md's "summarize distributed, search local, apply distributed".

The passes are those of a table read in batches (``veil.privacy._stream``), each partition a
batch: the partial counts are made on the workers and merged in order on the client, the search
runs on the client, and the release is applied per partition with the same pandas transforms,
shuffled across partitions by a random key per row (seeded per partition, so that a task run
again after a worker died gives the same rows), held on the cluster (``persist``), hashed and
counted per partition, and written as partitioned Parquet, one file per partition. Whichever
scheduler is active runs it: a ``distributed.Client`` (a LocalCluster or ``--scheduler``), or
Dask's own threads.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.exceptions import InputError, MissingExtraError, OutputError
from veil.frequency import COUNT, Frequencies
from veil.hierarchy import Hierarchy
from veil.io import ContentHash, parts_sha256
from veil.policy import Policy
from veil.privacy._check import CheckResult, check_counts
from veil.privacy._stream import Passes, Written, _merged, release_in_passes, row_hashes
from veil.privacy.certificate import Certificate
from veil.progress import Progress, as_progress

__all__ = [
    "DaskRelease",
    "anonymize_dask",
    "check_dask",
    "cluster",
    "dask_frame",
    "write_parts",
]

_KEY = "__veil_shuffle_key__"
#: Partitions computed at once by ``fold`` (their partial results are merged, then dropped).
_WAVE = 16


def dask_modules() -> tuple[Any, Any]:
    """(dask, dask.dataframe), or one line naming the extra."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as err:
        raise MissingExtraError("a Dask DataFrame needs the scale extra: pip install "
                                "'veil[scale]'") from err  # fmt: skip
    return dask, dd


def dask_frame(source: str, *, columns: list[str] | None = None) -> Any:
    """Parquet files (a file, a folder or a glob) as a Dask DataFrame, a partition per row
    group at most; CSV as Dask reads it."""
    _, dd = dask_modules()
    text = str(source)
    if text.endswith((".csv", ".CSV")):
        return dd.read_csv(text, usecols=columns, blocksize="64MB")
    paths = [Path(p) for p in glob.glob(text)] if glob.has_magic(text) else [Path(text)]
    if not paths or not all(p.exists() for p in paths):
        raise InputError(f"{source}: no such file or folder; check the path")
    return dd.read_parquet(text, columns=columns, split_row_groups="infer")


@contextlib.contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: of the scheduler at ``scheduler`` (``tcp://HOST:8786``), else
    of a LocalCluster of ``workers`` worker processes (one thread each; default: one per
    core), closed on leaving."""
    dask_modules()
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    with (
        LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                     processes=True, dashboard_address=None) as local,
        Client(local) as client,
    ):  # fmt: skip
        yield client


@dataclass(frozen=True)
class DaskRelease:
    """A release held on the cluster (a Dask DataFrame, one partition per file it will be
    written as) and its certificate."""

    data: Any
    certificate: Certificate

    def to_parquet(self, folder: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write the release as ``folder/part-000000.parquet``... (see ``write_parts``)."""
        return write_parts(self.data, folder, force=force)


class _DaskPasses(Passes):
    def __init__(self, frame: Any, report: Progress) -> None:
        dask, _ = dask_modules()
        self.dask, self.frame, self.report = dask, frame, report
        self.columns = [str(c) for c in frame.columns]
        self.lengths = [int(n) for n in frame.map_partitions(len).compute()]
        self.rows = sum(self.lengths)
        self.hashed = partition_hash

    def sample(self, rows: int) -> pd.DataFrame:
        self._sample = self.frame.head(rows, npartitions=-1, compute=True)
        return self._sample

    def fold(self, label: str, fn: Callable[[pd.DataFrame, int], Any],
             merge: Callable[[Any, Any], Any], start: Any,
             frame: Any = None) -> Any:  # fmt: skip
        frame = self.frame if frame is None else frame
        self.report.step(label)
        self.report.expect(self.rows)
        delayed = self.dask.delayed(fn, pure=True)
        parts = frame.to_delayed()
        offsets = np.concatenate([[0], np.cumsum(self.lengths)])[: len(parts)]
        total = start
        for first in range(0, len(parts), _WAVE):
            wave = [delayed(p, int(o)) for p, o in
                    zip(parts[first : first + _WAVE], offsets[first : first + _WAVE],
                        strict=True)]  # fmt: skip
            for result in self.dask.compute(*wave):
                total = merge(total, result)
            self.report.advance(sum(self.lengths[first : first + _WAVE]))
        return total

    def release(self, produce: Callable[[pd.DataFrame], tuple[pd.DataFrame, list[Any]]],
                measured: list[str], seed: int | bool | None,
                columns: list[str]) -> tuple[Written, list[list[Any]]]:  # fmt: skip
        import operator

        _, dd = dask_modules()
        self.report.step("applying the release on the cluster (second pass)")
        delayed = self.dask.delayed
        # each partition's release and what its steps counted, held on the cluster once
        produced = self.dask.persist(*[delayed(produce, pure=True)(p)
                                       for p in self.frame.to_delayed()])  # fmt: skip
        tallies = list(self.dask.compute(*[delayed(operator.getitem, pure=True)(t, 1)
                                           for t in produced]))  # fmt: skip
        frames = [delayed(operator.getitem, pure=True)(t, 0) for t in produced]
        meta = produce(self._sample.head(0))[0]
        released = dd.from_delayed(frames, meta=meta, verify_meta=False)
        if seed is not False:
            base = int(seed) if isinstance(seed, int) else secrets.randbits(63)
            keyed = dd.from_delayed([delayed(_keyed, pure=True)(f, base, i)
                                     for i, f in enumerate(frames)],
                                    meta=meta.assign(**{_KEY: np.uint64(0)}),
                                    verify_meta=False)  # fmt: skip
            released = keyed.shuffle(on=_KEY, npartitions=max(1, len(frames))).map_partitions(
                _ordered, meta=meta
            )
        released = released.persist()
        del produced, frames
        self.lengths = [int(n) for n in released.map_partitions(len).compute()]
        summary = self.fold("hashing and counting the release, partition by partition",
                            _Digest(list(meta.columns), measured), _gathered, ([], None, 0),
                            frame=released)  # fmt: skip
        digests, counts, rows = summary
        written = Written(parts_sha256(digests), counts, rows, list(meta.columns),
                          parts=len(digests), data=released)  # fmt: skip
        return written, tallies


def partition_hash(part: pd.DataFrame) -> bytes:
    """A partition's rows hashed on its worker; the fingerprint hashes these digests in order."""
    return hashlib.sha256(row_hashes(part)).digest()


def _keyed(frame: pd.DataFrame, base: int, index: int) -> pd.DataFrame:
    """``frame`` with a random key per row, drawn from a generator seeded by the run's seed and
    the partition's number (the same keys when a task runs again)."""
    rng = np.random.default_rng([base, index])
    return frame.assign(**{_KEY: rng.integers(0, 2**63, len(frame), dtype=np.uint64)})


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """A shuffled partition in the order of its keys (not of the shuffle's arrivals)."""
    return frame.sort_values(_KEY, kind="stable").drop(columns=_KEY)


@dataclass
class _Digest:
    """A released partition's content hash, rows and classes (run on its worker)."""

    columns: list[str]
    measured: list[str]

    def __call__(self, part: pd.DataFrame, _first_row: int) -> tuple[str, Any, int]:
        counts = Frequencies.of(part, self.measured) if self.measured else None
        return ContentHash(self.columns).update(part).hexdigest(), counts, len(part)


def _gathered(total: tuple[list[str], Any, int],
              part: tuple[str, Any, int]) -> tuple[list[str], Any, int]:  # fmt: skip
    digests, counts, rows = total
    return [*digests, part[0]], _merged(counts, part[1]), rows + part[2]


def anonymize_dask(
    data: Any,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
) -> DaskRelease:
    """Release the Dask DataFrame ``data`` under ``policy``; the release stays on the cluster
    (``DaskRelease.data``) until written (``to_parquet``). Raises as ``anonymize`` does."""
    passes = _DaskPasses(data, as_progress(progress))
    certificate = release_in_passes(passes, policy, hierarchies=hierarchies, progress=progress)
    assert passes.released is not None
    return DaskRelease(passes.released.data, certificate)


def check_dask(data: Any, quasi_identifiers: list[str], *, sensitive: str | None = None,
               progress: Callable[[str], None] | Progress | None = None,
               **goals: Any) -> CheckResult:  # fmt: skip
    """``check`` of a Dask DataFrame: each partition's classes counted on its worker, the counts
    merged on the client, measured once."""
    columns = [*quasi_identifiers, *([sensitive] if sensitive else [])]
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InputError(f"check: no column {missing[0]!r}; columns: {', '.join(data.columns)}")
    frame = data[columns]
    passes = _DaskPasses(frame, as_progress(progress))
    counted = passes.fold(f"counting the classes of {', '.join(quasi_identifiers)}",
                          _Counts(columns), _merged, None)  # fmt: skip
    counts = counted.counts if counted is not None else pd.DataFrame(columns=[*columns, COUNT])
    numeric = bool(sensitive) and pd.api.types.is_numeric_dtype(frame.dtypes[sensitive])
    return check_counts(counts, quasi_identifiers, count=COUNT, sensitive=sensitive,
                        numeric_sensitive=numeric, **goals)  # fmt: skip


@dataclass
class _Counts:
    columns: list[str]

    def __call__(self, part: pd.DataFrame, _first_row: int) -> Frequencies:
        return Frequencies.of(part, self.columns)


def write_parts(frame: Any, folder: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write a Dask DataFrame as ``folder/part-000000.parquet``, one file per partition in
    order, atomically: into a temporary folder beside ``folder``, renamed when every file is
    written (an existing ``folder`` is replaced only with ``force``)."""
    import shutil
    import tempfile

    target = Path(folder)
    if target.exists() and not force:
        raise OutputError(f"output {target} already exists; pass --force to overwrite it")
    if target.exists() and not target.is_dir():
        raise OutputError(f"output {target} is a file; a partitioned release is a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.veil-", dir=target.parent))
    try:
        frame.to_parquet(staged / "parts", write_index=False, schema=_schema(frame),
                         name_function=lambda i: f"part-{i:06d}.parquet")  # fmt: skip
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.veil-old-{os.getpid()}")
            os.replace(target, old)
        os.replace(staged / "parts", target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return target


def _schema(frame: Any) -> Any:
    """The Arrow schema of the release's values (its first rows, columns of text where they
    are all missing there), for every part alike: Dask's guess from an empty frame cannot type
    columns of Python objects."""
    import pyarrow as pa

    rows = frame.head(1_000, npartitions=-1, compute=True)
    schema = pa.Schema.from_pandas(rows, preserve_index=False)
    fields = [pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f for f in schema]
    return pa.schema(fields)
