"""A table to read, wherever it is, and the engine that reads it.

A ``Source`` is a pandas DataFrame, a Dask DataFrame, files (a CSV or Parquet file, an Excel
workbook, a glob, a folder of Parquet parts) or a SQLAlchemy URL with a table or a query, with
the options of its reading. Every entry point that takes a table (``veil.scan``,
``veil.anonymize``, ``veil.check``, ``veil.verify``) takes one, and asks it which engine runs:

- ``"memory"``: the whole table as one DataFrame;
- ``"stream"``: CSV or Parquet files read a batch of rows at a time (larger than memory);
- ``"dask"``: the partitions of a Dask DataFrame, on whichever scheduler is active (a
  ``distributed.Client``, else Dask's threads);
- ``"auto"``: a Dask DataFrame on Dask, files over a tenth of this machine's memory in batches,
  everything else in memory.

The rule and every "not supported with ..." refusal are decided here, once.
"""

from __future__ import annotations

import contextlib
import glob
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from veil._lazy import is_dask, is_frame
from veil.exceptions import InputError, ParameterError
from veil.io._packed import PACKED_SUFFIXES, unpacked_name

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ENGINES", "STREAMING_SHARE", "Engine", "Source", "cluster", "memory_bytes"]

Engine = Literal["auto", "memory", "stream", "dask"]
ENGINES: tuple[str, ...] = ("auto", "memory", "stream", "dask")

#: Rows per batch when a table is read in batches, unless told: a few hundred MB of a wide table.
DEFAULT_BATCH_ROWS = 500_000
#: A file larger than this share of the machine's memory is read in batches by ``"auto"``: a
#: CSV takes several times its size as a DataFrame (README, "Tables larger than memory").
STREAMING_SHARE = 0.1
#: What a cell of a Parquet file takes in memory through a release, its copies included (adult
#: grown to 10M rows of 9 columns: 6.2 GB at the peak, ~69 bytes a cell, from a file of 34 MB).
#: Parquet's dictionaries and compression hide it from the size on disk.
CELL_BYTES = 64
#: How many times its size a compressed CSV unpacks to, for ``"auto"``'s rule: a CSV packs to
#: an eighth to a fourteenth of its text with gzip (adult 13.7x, HealthInsurance 8.0x).
PACKED_RATIO = 10


#: What each engine is called in messages: the engine and the command-line words for it.
_SAID = {
    "stream": "on a table read in batches (engine 'stream', --streaming)",
    "dask": "on a Dask cluster (engine 'dask', --engine dask)",
}
#: Reading options only a whole read honours (a batch reader types columns its own way).
_WHOLE_READ = ("dates", "dayfirst", "date_format", "coerce_dates", "sheet", "table", "query")


def memory_bytes() -> int:
    """This machine's physical memory in bytes."""
    from veil.io._files import memory_bytes as physical  # Arrow imported only when needed

    return physical()


@dataclass(frozen=True)
class Source:
    """A table and how to read it.

    Parameters
    ----------
    data : DataFrame, Dask DataFrame, str or path
        The table: in memory, on a cluster, a file / glob / folder of Parquet parts, or a
        SQLAlchemy URL (``postgresql://...``, with ``table`` or ``query``).
    sep, encoding : str, optional
        CSV delimiter and text encoding (detected when omitted).
    dates, dayfirst, date_format, coerce_dates
        Columns to parse as dates and how (see ``veil.read``).
    sheet : str or int, optional
        Excel sheet.
    table, query : str, optional
        SQL table or query, when ``data`` is a URL.
    """

    data: Any
    sep: str | None = None
    encoding: str | None = None
    dates: tuple[str, ...] = ()
    dayfirst: bool | None = None
    date_format: str | None = None
    coerce_dates: bool = False
    sheet: str | int | None = None
    table: str | None = None
    query: str | None = None

    @classmethod
    def of(cls, data: Any, **reading: Any) -> Source:
        """``data`` as a Source (a Source is returned as it is, with ``reading`` given over
        it); ``reading`` holds ``read``'s options, ``None`` meaning "not given"."""
        known = {f.name for f in fields(cls)} - {"data"}
        unknown = sorted(set(reading) - known)
        if unknown:
            raise ParameterError(
                f"{unknown[0]} is no reading option; use one of {', '.join(sorted(known))}"
            )
        given = {k: v for k, v in reading.items() if v is not None}
        if isinstance(given.get("dates"), str):
            given["dates"] = tuple(d.strip() for d in given["dates"].split(",") if d.strip())
        elif "dates" in given:
            given["dates"] = tuple(given["dates"])
        if isinstance(data, Source):
            return replace(data, **given)
        if isinstance(data, os.PathLike):
            data = os.fspath(data)
        if not isinstance(data, str) and not _is_table(data):
            raise InputError(
                f"veil reads a DataFrame, a Dask DataFrame, a file path or a SQL "
                f"URL, not a {type(data).__name__}"
            )
        return cls(data, **given)

    @property
    def kind(self) -> Literal["frame", "dask", "sql", "files"]:
        """What the table is: a DataFrame, a Dask DataFrame, a SQL URL, or files."""
        if is_frame(self.data):
            return "frame"
        if is_dask(self.data):
            return "dask"
        return "sql" if "://" in str(self.data) else "files"

    @property
    def name(self) -> str:
        """The source as messages show it (a URL without its password)."""
        from veil.io._sql import display_source

        if self.kind in {"frame", "dask"}:
            return "the table"
        return display_source(self.data)

    @property
    def stem(self) -> str:
        """The stem hierarchy files are named after: a file's, a glob's first file's, a
        folder's; a compressed file's as unpacked (``adult`` of ``adult.csv.gz``)."""
        if self.kind != "files":
            return "table"
        text = str(self.data)
        if glob.has_magic(text):
            found = sorted(glob.glob(text))
            return _stem(Path(found[0]) if found else Path(text))
        return Path(text).name if Path(text).is_dir() else _stem(Path(text))

    def reading(self) -> dict[str, Any]:
        """The options of a whole read (``veil.read``'s keywords)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "data"}

    def whole_read_options(self) -> dict[str, Any]:
        """The options given that only a whole read honours, by their command-line name."""
        return {f"--{n.replace('_', '-')}": getattr(self, n) for n in _WHOLE_READ}

    def frame(self) -> pd.DataFrame:
        """The whole table as a DataFrame (a Dask DataFrame computed)."""
        from veil.io._read import read

        if self.kind == "dask":
            return self.data.compute()
        return read(self.data, **self.reading())

    def stream(self) -> Any:
        """The files as a ``TableStream`` (a batch of rows at a time)."""
        from veil.io._batches import TableStream

        return TableStream(str(self.data), sep=self.sep, encoding=self.encoding)

    def dask(self, columns: Sequence[str] | None = None) -> Any:
        """The table as a Dask DataFrame (only ``columns`` when given); Parquet files as
        ``ParquetParts`` where Dask would read them the same (each partition then read by the
        task that uses it, as a stream reads its batches)."""
        from veil.io._folds import dask_core, dask_frame, dask_modules, parquet_parts

        if self.kind == "dask":
            return self.data if columns is None else self.data[list(columns)]
        if self.kind == "frame":
            _, dd = dask_modules()
            frame = self.data if columns is None else self.data[list(columns)]
            return dd.from_pandas(frame, npartitions=max(1, os.cpu_count() or 1))
        wanted = None if columns is None else list(columns)
        dask_core()  # or one line naming the extra
        parts = parquet_parts(str(self.data), wanted)
        return parts if parts is not None else dask_frame(str(self.data), columns=wanted)

    def size(self) -> int:
        """Bytes the files hold (0 for anything else): on disk, or for a Parquet file its cells
        times ``CELL_BYTES`` when larger (its metadata says how many; a file it cannot read counts
        its size on disk, and reading it says what is wrong)."""
        if self.kind != "files":
            return 0
        text = str(self.data)
        paths = [Path(p) for p in glob.glob(text)] if glob.has_magic(text) else [Path(text)]
        if Path(text).is_dir():
            paths = list(Path(text).iterdir())
        return sum(_bytes_held(p) for p in paths if p.is_file())

    def engine(
        self,
        asked: str = "auto",
        *,
        memory_only: Mapping[str, Any] | None = None,
    ) -> str:
        """The engine that reads this source: ``asked``, checked, or by ``"auto"``'s rule.

        ``memory_only`` names (``--name``: value) what the caller was given that only the
        in-memory engine honours (a report, weights...): ``"auto"`` then reads in memory, and
        ``"stream"`` or ``"dask"`` refuse the first given in one line."""
        if asked not in ENGINES:
            raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {asked!r}")
        kind = self.kind
        only_whole = {**self.whole_read_options(), **(memory_only or {})}
        if asked == "auto":
            asked = self._auto(only_whole)
        if asked == "memory":
            return asked
        if kind == "sql":
            raise ParameterError(
                f"{self.name} is read whole: a SQL table runs with engine 'memory' (--in-memory)"
            )
        if asked == "stream":
            if kind in {"frame", "dask"}:
                raise ParameterError(
                    f"a {'Dask ' if kind == 'dask' else ''}DataFrame is not read"
                    " in batches: use engine 'memory' or 'dask'"
                )
            from veil.io._files import is_streamable

            if not is_streamable(self.data):
                packed = str(self.data).lower().endswith(".xz")
                raise ParameterError(
                    f"--streaming reads CSV files plain or compressed with gzip, bzip2 or zstd, "
                    f"or Parquet files, not the xz-compressed {self.name}; unpack it (unxz) or "
                    "repack it with gzip or zstd, or use --in-memory"
                    if packed
                    else f"--streaming reads CSV or Parquet files, not {self.name}; use --in-memory"
                )
        refused = dict(only_whole)
        if asked == "dask" and kind == "files" and self.sep:
            refused["--sep"] = self.sep  # Dask reads a CSV by its own rules
        _refuse_given(refused, f"{_SAID[asked]}; use engine 'memory' (--in-memory)")
        return asked

    def _auto(self, only_whole: Mapping[str, Any]) -> str:
        from veil.io._files import is_streamable

        if self.kind == "dask":
            return "dask"
        if self.kind != "files" or not is_streamable(self.data):
            return "memory"
        if any(only_whole.values()) or self.size() <= STREAMING_SHARE * memory_bytes():
            return "memory"
        return "stream"


def _stem(path: Path) -> str:
    """``path``'s stem, less a compression's suffix (``adult.csv.gz``: ``adult``)."""
    return Path(unpacked_name(path.name)).stem


def _bytes_held(path: Path) -> int:
    """``path``'s size on disk; for Parquet its cells times ``CELL_BYTES`` when larger, for a
    compressed CSV ``PACKED_RATIO`` times its size."""
    from veil.io._files import PARQUET_SUFFIXES

    on_disk = path.stat().st_size
    if path.suffix.lower() in PACKED_SUFFIXES:
        return on_disk * PACKED_RATIO
    if path.suffix.lower() not in PARQUET_SUFFIXES:
        return on_disk
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except (OSError, pa.ArrowException):
        return on_disk
    return max(on_disk, meta.num_rows * meta.num_columns * CELL_BYTES)


def _refuse_given(options: Mapping[str, Any], where: str) -> None:
    """One line for the first of ``options`` (``--name``: value) given that cannot be
    honoured ``where``."""
    given = [name for name, value in options.items() if value]
    if given:
        raise ParameterError(f"{given[0]} is not supported {where}")


def _is_table(data: Any) -> bool:
    return is_frame(data) or is_dask(data)


@contextlib.contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: of the scheduler at ``scheduler`` (``tcp://HOST:8786``), else
    of a LocalCluster of ``workers`` worker processes (one thread each; default: one per
    core), closed on leaving."""
    from veil.io._folds import dask_core
    from veil.memory import tune_for_one_job

    dask = dask_core()
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    # Dask's workers sample their threads' stacks every 10 ms for the dashboard's profile
    # page, which a job of veil's own never shows: 2.7 CPU seconds in 20 s of an idle cluster
    # of two workers against 1.75 without, and a release of 10M rows on two workers 17.4-19.1 s
    # and 30.6-33.6 CPU seconds against 17.3-17.6 s and 30.2-30.6 (two runs each, alternately)
    with (
        dask.config.set({"distributed.worker.profile.enabled": False}),
        LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
        ) as local,
        Client(local) as client,
    ):
        # its workers are processes of this one job: they allocate as the command does
        client.run(tune_for_one_job)
        yield client
