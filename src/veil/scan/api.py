"""``veil.scan`` over any source and engine: a DataFrame or a SQL table in memory, files read a
batch at a time (the sample decides each column's role, every row confirms it), or a Dask
DataFrame's partitions on their workers (``veil.io.Source.engine`` decides and refuses)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from veil.exceptions import ParameterError
from veil.io import Source
from veil.progress import Progress, as_progress
from veil.scan import core
from veil.scan.core import SAMPLE_SIZE, ScanResult
from veil.scan.passes import scan_partitions, scan_stream

__all__ = ["scan", "scan_source"]


def scan(
    data: Any,
    *,
    engine: str = "auto",
    columns: Sequence[str] | None = None,
    sample_size: int = SAMPLE_SIZE,
    random_state: int = 0,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
    batch_rows: int = 500_000,
    progress: Callable[[str], None] | Progress | None = None,
    **reading: Any,
) -> ScanResult:
    """Classify every column of ``data`` as identifier, quasi-identifier, sensitive or
    insensitive, with the entity, a confidence and the evidence; then measure how unique the
    rows are on the quasi-identifiers found.

    Parameters
    ----------
    data : DataFrame, Dask DataFrame, str, path or Source
        The table (``veil.io.Source``; ``reading`` holds its reading options: ``sep``,
        ``table``, ``query``...), never modified.
    engine : {"auto", "memory", "stream", "dask"}
        Where it is read (``veil.io.Source.engine``).
    columns : list of str, optional
        Only these columns (default: all).
    sample_size : int
        Values sampled per column for the value recognizers.
    random_state : int
        Seed of the sample.
    population, sampling_fraction, weights : optional
        The table is a sample of ``population`` people, or ``sampling_fraction`` of them, or
        each row stands for ``weights`` (a column) people: the risk adds population-
        uniqueness estimates and the journalist risk.
    batch_rows : int
        Rows per batch when streaming.
    progress : callable or Progress, optional
        Told of each step.
    **reading
        The table's reading options (``sep``, ``table``, ``query``...).

    Returns
    -------
    ScanResult
        One finding per column (``result.column(name)``) and the re-identification risk.

    Examples
    --------
    >>> import pandas as pd
    >>> import veil
    >>> df = pd.DataFrame({"phone": ["0712345678", "0722000111", "0733000222"] * 4,
    ...                    "county": ["Nairobi", "Kisumu", "Nakuru"] * 4})
    >>> found = veil.scan(df)
    >>> found.column("phone").role.value, found.column("phone").entity
    ('identifier', 'PHONE')
    """
    options = {
        "columns": columns,
        "sample_size": sample_size,
        "random_state": random_state,
        "population": population,
        "sampling_fraction": sampling_fraction,
        "weights": weights,
    }
    result, _ = scan_source(
        Source.of(data, **reading),
        engine=engine,
        batch_rows=batch_rows,
        progress=progress,
        **options,
    )
    return result


def scan_source(
    src: Source,
    *,
    engine: str = "auto",
    batch_rows: int = 500_000,
    progress: Callable[[str], None] | Progress | None = None,
    **options: Any,
) -> tuple[ScanResult, pd.DataFrame | None]:
    """``scan``, and the table it read when it read it whole (``None`` for a scan in passes,
    whose result keeps the counts a suggested policy is fitted on)."""
    chosen = src.engine(engine)
    columns = options.pop("columns", None)
    if chosen == "dask":
        return scan_partitions(src.dask(columns), progress=progress, **options), None
    if chosen == "stream":
        if columns is not None:
            raise ParameterError(
                "columns= is not supported on a table read in batches (engine "
                "'stream'); use engine 'memory', or select them beforehand"
            )
        found = scan_stream(src.stream(), batch_rows=batch_rows, progress=progress, **options)
        return found, None
    said = as_progress(progress)
    if src.kind in {"files", "sql"}:
        said(f"reading {src.name}")
    frame = src.frame()
    return core.scan(frame, columns=columns, progress=said, **options), frame
