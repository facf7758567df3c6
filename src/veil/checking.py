"""``veil.check``: measure a table wherever it is (k, l, t, re-identification risk).

The table is a ``veil.io.Source``, and its engine decides where the classes are counted: a
DataFrame in memory, batches of a file too large for it, a Dask cluster. A CSV file read in
memory for no more than its classes (no weights, person column or rows left out) is read,
typed and counted without pandas: Arrow parses only the columns measured, dictionary-encoded,
each column's distinct texts are typed as ``read`` types the column, and the classes are
counted on the codes as ``veil.frequency`` counts a DataFrame's: the same measures without
building the DataFrame, and without loading pandas unless a sensitive column is measured.
What measures the counts is imported while Arrow parses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil.io._source import DEFAULT_BATCH_ROWS, Source
from veil.progress import Progress

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from veil.hierarchy import Hierarchy
    from veil.io._files import Kind, Typed
    from veil.privacy._measures import CheckResult
    from veil.privacy.criteria import Criterion

__all__ = ["Hierarchies", "check", "hierarchy_trees"]

#: Hierarchies as the entry points take them: by column, or a folder of them.
Hierarchies = Mapping[str, "Hierarchy"] | str | os.PathLike[str] | None
Told = Callable[[str], None] | Progress | None


def check(
    source: Any,
    quasi_identifiers: Sequence[str],
    *,
    engine: str = "auto",
    sensitive: str | None = None,
    hierarchies: Hierarchies = None,
    weights: str | None = None,
    person: str | None = None,
    exclude: pd.Series | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Told = None,
    sep: str | None = None,
    encoding: str | None = None,
    sheet: str | int | None = None,
    table: str | None = None,
    query: str | None = None,
    **goals: Any,
) -> CheckResult:
    """Measure k, l, t and the re-identification risk of ``source`` on ``quasi_identifiers``.

    Parameters
    ----------
    source : DataFrame, Dask DataFrame, str, path or Source
        The table (``veil.io.Source``; ``sep`` ... ``query`` its reading).
    quasi_identifiers : list of str
        The columns whose combinations form the equivalence classes.
    engine : {"auto", "memory", "stream", "dask"}
        Where the classes are counted (``veil.io.Source.engine``).
    sensitive : str, optional
        The sensitive column, for l-diversity and t-closeness.
    hierarchies : mapping or folder, optional
        The sensitive column's hierarchy, for hierarchical t-closeness.
    weights, person, exclude : optional
        Sampling weights (a column), a column naming each row's person, rows to leave out:
        counted in memory only.
    batch_rows : int
        Rows per batch when streaming.
    progress : callable or Progress, optional
        Told of each step.
    sep, encoding, sheet, table, query : optional
        How the source is read.
    **goals
        ``k``, ``l``, ``t``, ``t_distance``, ``models``, ``risk_threshold``, ``population``,
        ``sampling_fraction`` (see ``veil.privacy.check_counts``).

    Returns
    -------
    CheckResult
        What was measured; ``failed`` lists the thresholds given that do not hold.
    """
    src = Source.of(source, sep=sep, encoding=encoding, sheet=sheet, table=table, query=query)
    trees = hierarchy_trees(hierarchies)
    columns = [str(c) for c in quasi_identifiers]
    only = {"--weights": weights, "--person-id": person, "exclude": exclude is not None}
    chosen = src.engine(engine, memory_only=only)
    if engine == "auto" and chosen == "memory" and _parquet_files(src, only):
        chosen = "stream"  # DuckDB counts the classes reading the files itself: the same result
    if chosen == "memory":
        if columns and not any(only.values()) and _one_csv(src):
            counted = _check_csv(src, columns, sensitive=sensitive, hierarchies=trees, **goals)
            if counted is not None:
                return counted
        from veil.privacy._check import check as check_frame

        return check_frame(
            src.frame(),
            columns,
            sensitive=sensitive,
            weights=weights,
            person=person,
            exclude=exclude,
            hierarchies=trees,
            **goals,
        )
    if chosen == "stream":
        from veil.privacy._check import check_stream

        return check_stream(
            src.stream(),
            columns,
            sensitive=sensitive,
            batch_rows=batch_rows,
            progress=progress,
            hierarchies=trees,
            **goals,
        )
    frame = src.dask(columns=[*columns, *([sensitive] if sensitive else [])])
    from veil.privacy._dask import check_dask

    return check_dask(
        frame, columns, sensitive=sensitive, progress=progress, hierarchies=trees, **goals
    )


def hierarchy_trees(given: Hierarchies) -> dict[str, Hierarchy] | None:
    """Hierarchies by column: given, or every one in a folder (``<stem>_hierarchy_<column>.csv``
    or ``<column>.csv``)."""
    if given is None:
        return None
    if isinstance(given, str | os.PathLike):
        from veil.hierarchy import load_hierarchy_dir

        return dict(load_hierarchy_dir(given))
    return dict(given)


def _parquet_files(src: Source, only: Mapping[str, Any]) -> bool:
    """Whether ``src`` is Parquet files read as they are (no reading option, nothing only a
    table in memory honours): what ``check_stream`` counts by DuckDB."""
    from glob import has_magic

    from veil.exceptions import InputError
    from veil.io._files import PARQUET_SUFFIXES, is_streamable

    if src.kind != "files" or any(only.values()) or any(src.whole_read_options().values()):
        return False
    path = Path(str(src.data))
    if path.suffix.lower() not in PARQUET_SUFFIXES and not (path.is_dir() or has_magic(str(path))):
        return False  # a CSV: not opened here a second time
    try:
        return is_streamable(src.data) and src.stream().kind == "parquet"
    except (InputError, OSError):  # read in memory, which says what is wrong
        return False


def _one_csv(src: Source) -> bool:
    """Whether ``src`` is one CSV file read with no option but its delimiter and encoding
    (what ``read`` reads with ``read_csv``)."""
    from glob import has_magic

    from veil.io._files import EXCEL_SUFFIXES, PARQUET_SUFFIXES

    if src.kind != "files" or any(src.whole_read_options().values()):
        return False
    text = str(src.data)
    suffix = Path(text).suffix.lower()
    return not has_magic(text) and suffix not in PARQUET_SUFFIXES | EXCEL_SUFFIXES


def _check_csv(
    src: Source,
    columns: list[str],
    *,
    sensitive: str | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    **goals: Any,
) -> CheckResult | None:
    """``check`` of a CSV file whose classes Arrow counts; None where a column would be typed
    by pandas in a way Arrow does not repeat (an ISO date pandas parses and Arrow does not),
    for the DataFrame to measure. Only the columns measured are read. With a sensitive
    column, its combinations with the classes are counted here and measured as a stream's
    counts are (``check_counts``)."""
    from importlib import import_module

    from veil.io._ahead import beside
    from veil.io._files import check_readable, read_csv_text

    path = Path(str(src.data))
    check_readable(path)
    wanted = list(dict.fromkeys([*columns, *([sensitive] if sensitive else [])]))
    read = beside(
        lambda: read_csv_text(
            path, sep=src.sep, encoding=src.encoding, columns=wanted, where="check", dictionary=True
        )
    )
    # what types and measures the counts is imported while Arrow parses (which lets go of
    # the interpreter): 0.02 s of 0.4 s for 1M rows x 8 columns; and the goals are checked
    # then, their models' validators built (0.015 s more), so a wrong one stops the command
    # before the counting
    import_module("pyarrow.compute")
    import_module("veil.privacy._check" if sensitive else "veil.privacy._measures")
    from veil.privacy._measures import asked_goals

    estimates = {name: goals.pop(name, None) for name in ("population", "sampling_fraction")}
    asked = asked_goals(sensitive, hierarchies=hierarchies, **goals)
    _, table = read.result()
    counted = _arrow_counts(table, representatives=sensitive is not None)
    if counted is None:
        return None
    sizes, rows_of = counted
    if sensitive is None or rows_of is None:
        return _measured_sizes(sizes, columns, asked, goals, **estimates)
    from veil.frequency import COUNT
    from veil.privacy._check import check_counts

    frame = _frame(rows_of)
    frame[COUNT] = sizes
    return check_counts(
        frame,
        columns,
        count=COUNT,
        sensitive=sensitive,
        numeric_sensitive=rows_of.kinds[sensitive] in {"int", "float"},
        hierarchies=hierarchies,
        **goals,
        **estimates,
    )


def _measured_sizes(
    sizes: np.ndarray,
    columns: list[str],
    asked: tuple[list[Criterion], int, Hierarchy | None],
    goals: Mapping[str, Any],
    *,
    population: float | None = None,
    sampling_fraction: float | None = None,
) -> CheckResult:
    """The measures of classes of ``sizes`` with no sensitive column: the goals ``asked``
    (``asked_goals`` of ``goals``, ``check_counts``'s), without pandas."""
    from veil.privacy._measures import measures

    return measures(
        int(sizes.sum()),
        columns,
        None,
        sizes,
        None,
        [],
        False,
        asked,
        t_distance=goals.get("t_distance"),
        l=goals.get("l"),
        risk_threshold=goals.get("risk_threshold", 0.2),
        population=population,
        sampling_fraction=sampling_fraction,
    )


@dataclass(frozen=True)
class _Rows:
    """A row of each combination counted: the columns' text, and each column's kind."""

    table: pa.Table
    kinds: dict[str, Kind]


def _arrow_counts(table: pa.Table, representatives: bool) -> tuple[np.ndarray, _Rows | None] | None:
    """How many rows of ``table`` (CSV columns as text) hold each combination of its columns'
    values as ``read`` types them, and with ``representatives`` a row of each combination (in
    the order of the counts).

    Each column is dictionary-encoded as text (missing values one code), and only its distinct
    texts are typed (``typed_column`` decides on the set of texts, so the few distinct ones
    decide as the million rows would) and encoded again as pandas compares the typed values:
    ``1.5`` and ``1.50`` one float, -0.0 one with 0.0, NaN missing, ``2020-01-01`` and
    ``2020-01-01 00:00`` one instant. The combinations are then counted on the mixed-radix
    codes, as ``veil.frequency`` counts a DataFrame's. (Arrow's group-by would load pandas,
    through its dataset module, as would ``Array.to_numpy``.) None when Arrow cannot parse an
    ISO date column pandas may: the DataFrame then decides."""
    import numpy as np
    import pyarrow as pa

    from veil._codes import class_key
    from veil.io._files import typed_column

    codes, radix, kinds = [], [], {}
    for name in table.column_names:
        encoded = table.column(name).combine_chunks()  # one dictionary (unified when read)
        texts = typed_column(pa.chunked_array([encoded.dictionary], pa.string()))
        entries = _entry_codes(texts)  # a code per text, and last a missing value's
        if entries is None:
            return None
        slots, _ = _numbers(encoded.indices, missing=len(encoded.dictionary))
        distinct = texts.kind in {"empty", "text"}  # then a text's code is its slot
        codes.append(slots if distinct else entries[slots])
        radix.append(int(entries.max(initial=0)) + 1)
        kinds[name] = texts.kind
    key, space, dense = class_key(codes, radix)
    if not representatives and dense:
        counts = np.bincount(key, minlength=space)
        return counts[counts > 0], None
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return counts, _Rows(table.take(first), kinds) if representatives else None


def _entry_codes(texts: Typed) -> np.ndarray | None:
    """A code for each of a dictionary's texts as pandas tells their typed values apart, and
    last the code of a missing value: ``1.5`` and ``1.50`` one float, -0.0 one with 0.0,
    NaN missing, ``2020-01-01`` and ``2020-01-01 00:00`` one instant. None when Arrow cannot
    parse an ISO date column pandas may."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    values = texts.values.combine_chunks()
    if texts.kind in {"empty", "text"}:  # the dictionary's texts are distinct already
        return np.arange(len(values) + 1, dtype=np.int64)
    if texts.kind == "date":
        try:
            values = pc.cast(values, pa.timestamp("ns"))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    numbers, valid = _numbers(values)
    if texts.kind == "float":
        valid &= ~np.isnan(numbers)
        numbers = numbers + 0.0  # -0.0 + 0.0 is 0.0
    distinct, inverse = np.unique(numbers[valid], return_inverse=True)
    entries = np.full(len(values) + 1, len(distinct), dtype=np.int64)
    entries[np.flatnonzero(valid)] = inverse.reshape(-1)
    return entries


def _numbers(array: pa.Array, missing: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A fixed-width Arrow array's values as numpy, and where they are valid, read from its
    buffers (``Array.to_numpy`` and Arrow's scalars would load pandas); with ``missing``,
    that value where they are not."""
    import numpy as np
    import pyarrow as pa

    kind = array.type
    width = np.dtype(
        "float64"
        if pa.types.is_floating(kind)
        else f"int{kind.bit_width}"  # integers, and timestamps as their int64
    )
    validity, data = array.buffers()[:2]
    n, offset = len(array), array.offset
    values = np.frombuffer(data, width, n, offset * width.itemsize)
    if validity is None or array.null_count == 0:
        return values, np.ones(n, dtype=bool)
    bits = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
    valid = bits[offset : offset + n].astype(bool)
    if missing is not None:
        values = np.where(valid, values, missing)
    return values, valid


def _frame(rows: _Rows) -> pd.DataFrame:
    """Rows of a CSV's columns as ``read`` makes them a DataFrame (ints with gaps as
    floats, ISO dates parsed)."""
    import pandas as pd

    from veil.io._files import as_kind

    columns = rows.table.column_names
    return pd.DataFrame(
        {
            name: as_kind(rows.kinds[name], rows.table.column(name)).to_pandas()[0]
            for name in columns
        }
    )
