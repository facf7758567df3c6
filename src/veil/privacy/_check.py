"""``check``: measure a table's privacy — k, l (distinct, entropy, recursive c), t, risk —
straight from its rows, independently of the search that may have produced it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from veil.frequency import (
    COUNT,
    Frequencies,
    FrequencySum,
    class_histograms,
    class_sizes,
    histograms,
    sensitive_codes,
)
from veil.hierarchy import Hierarchy
from veil.io import TableStream, fold_batches, typed_as_read
from veil.privacy._measures import CheckResult, asked_goals, measures
from veil.privacy.criteria import Criterion
from veil.progress import Progress, as_progress
from veil.risk.population import beyond
from veil.risk.reidentification import person_risk
from veil.schema import require_columns

__all__ = ["CheckResult", "check", "check_counts", "check_folded", "check_stream"]


def check(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    sensitive: str | None = None,
    k: int | None = None,
    l: int | None = None,  # noqa: E741
    t: float | None = None,
    t_distance: str | None = None,
    risk_threshold: float = 0.2,
    exclude: pd.Series | None = None,
    models: Sequence[Criterion | Mapping[str, Any]] = (),
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    person: str | None = None,
) -> CheckResult:
    """Measure ``frame``; thresholds given (``k``, ``l``, ``t``) that do not hold are listed in
    ``failed``. Rows where ``exclude`` is true (suppressed records) are left out.

    Parameters
    ----------
    frame : DataFrame
        The table to measure.
    quasi_identifiers : list of str
        The columns whose combinations form the equivalence classes.
    sensitive : str, optional
        The sensitive column, for l-diversity and t-closeness.
    k, l, t : optional
        Thresholds to test (k >= 1, l >= 1, t in [0, 1]).
    t_distance : str, optional
        ``equal``, ``ordered`` or ``hierarchical`` (default: ordered for numbers);
        hierarchical needs the sensitive column's hierarchy in ``hierarchies``.
    person : str, optional
        A column naming the person (or household) each row belongs to, when a person has
        several rows: ``k`` then counts the distinct people of a class, and ``persons`` holds
        each person's risk (their riskiest row, and sdcMicro's household risk over their
        rows); goals such as ``k >= 5`` are judged on people.
    risk_threshold : float
        Prosecutor risk above which a record counts as at risk.
    models : list of privacy models, optional
        Further goals to test, as ``veil.privacy.criteria`` models or their mappings, e.g.
        ``{"model": "entropy_l_diversity", "l": 2}``.
    population, sampling_fraction, weights : optional
        The table is a sample: of ``population`` people, or ``sampling_fraction`` of them, or
        each row stands for ``weights`` (a column of sampling weights) people. Adds the
        population-uniqueness estimates and the journalist risk that follows (see
        ``veil.risk.population``).

    Returns
    -------
    CheckResult
        ``k``, ``l`` and ``t`` as measured, the re-identification risk, and ``failed``.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.privacy import check
    >>> df = pd.DataFrame({"age": ["20-29"] * 3 + ["30-39"] * 2,
    ...                    "diagnosis": ["Flu", "HIV", "Flu", "Flu", "Asthma"]})
    >>> result = check(df, ["age"], sensitive="diagnosis", k=3)
    >>> result.k, result.l_distinct, result.failed
    (2, 2, ('k >= 3',))
    >>> check(df, ["age"], sensitive="diagnosis",
    ...       models=[{"model": "recursive_cl_diversity", "c": 3, "l": 2}]).failed
    ()
    """
    goals = asked_goals(
        sensitive,
        k=k,
        l=l,
        t=t,
        t_distance=t_distance,
        risk_threshold=risk_threshold,
        models=models,
        hierarchies=hierarchies,
    )
    qis = list(quasi_identifiers)
    require_columns(
        frame,
        [*qis, *([sensitive] if sensitive else []), *([weights] if weights else [])],
        where="check",
    )
    data = frame if exclude is None else frame.loc[~exclude.to_numpy(dtype=bool)]
    klass, sizes = class_sizes(data, qis)
    hist: np.ndarray | None = None
    values: list[str] = []
    numeric = False
    if sensitive is not None and len(data):
        hist, values = histograms(data, klass, sensitive, len(sizes))
        numeric = pd.api.types.is_numeric_dtype(data[sensitive])
    people = (
        None
        if person is None
        else person_risk(data[person], klass, len(sizes), threshold=risk_threshold)
    )
    estimates = beyond(
        data,
        klass,
        sizes,
        population=population,
        sampling_fraction=sampling_fraction,
        weights=weights,
        threshold=risk_threshold,
    )
    result = measures(
        len(data),
        qis,
        sensitive,
        sizes,
        hist,
        values,
        numeric,
        goals,
        t_distance=t_distance,
        l=l,
        risk_threshold=risk_threshold,
        people=people,
        estimates=estimates,
    )
    return replace(result, person=person) if person is not None else result


def check_counts(
    counts: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    count: str,
    sensitive: str | None = None,
    numeric_sensitive: bool = False,
    k: int | None = None,
    l: int | None = None,  # noqa: E741
    t: float | None = None,
    t_distance: str | None = None,
    risk_threshold: float = 0.2,
    models: Sequence[Criterion | Mapping[str, Any]] = (),
    population: float | None = None,
    sampling_fraction: float | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> CheckResult:
    """``check`` of the rows ``counts`` stands for: one row per distinct combination of the
    quasi-identifiers (and the sensitive value) with how many rows hold it, in the column
    ``count`` (a table read in batches, a cluster's group-by-count). ``numeric_sensitive``:
    the sensitive column holds numbers (t is then measured ordered unless ``t_distance``)."""
    goals = asked_goals(
        sensitive,
        k=k,
        l=l,
        t=t,
        t_distance=t_distance,
        risk_threshold=risk_threshold,
        models=models,
        hierarchies=hierarchies,
    )
    qis = list(quasi_identifiers)
    require_columns(counts, [*qis, *([sensitive] if sensitive else []), count], where="check")
    weights = counts[count].to_numpy(dtype=np.int64)
    rows = int(weights.sum())
    klass, found = class_sizes(counts, qis)
    sizes = np.bincount(klass, weights=weights, minlength=len(found)).astype(np.int64)
    if not qis:
        sizes = np.array([rows] if rows else [], dtype=np.int64)
        klass = np.zeros(len(counts), dtype=np.int64)
    hist: np.ndarray | None = None
    values: list[str] = []
    if sensitive is not None and rows:
        codes, values = sensitive_codes(counts[sensitive])
        hist = class_histograms(
            klass, codes, len(sizes), len(values), weights=weights, sensitive=sensitive
        )
    return measures(
        rows,
        qis,
        sensitive,
        sizes,
        hist,
        values,
        numeric_sensitive,
        goals,
        t_distance=t_distance,
        l=l,
        risk_threshold=risk_threshold,
        population=population,
        sampling_fraction=sampling_fraction,
    )


def check_stream(
    source: TableStream,
    quasi_identifiers: Sequence[str],
    *,
    sensitive: str | None = None,
    batch_rows: int = 500_000,
    progress: Callable[[str], None] | Progress | None = None,
    **goals: Any,
) -> CheckResult:
    """``check`` of a table read in batches (``veil check --streaming``): only the distinct
    combinations of the quasi-identifiers (and the sensitive value) are counted and held;
    ``goals`` as ``check_counts`` takes them."""
    report = as_progress(progress)
    wanted = [*quasi_identifiers, *([sensitive] if sensitive else [])]
    if source.kind == "parquet" and set(wanted) <= set(source.columns):
        counted = _counted_by_duckdb(source, wanted, sensitive, report)
        if counted is not None:
            counts, numeric = counted
            return check_counts(
                counts,
                list(quasi_identifiers),
                count=COUNT,
                sensitive=sensitive,
                numeric_sensitive=numeric,
                **goals,
            )

    def fold(label: str, fn: Any, merge: Any, start: Any) -> Any:
        return fold_batches(source, batch_rows, report, label, fn, merge, start, wanted)

    return typed_as_read(
        source,
        batch_rows,
        report,
        lambda: check_folded(fold, source.columns, quasi_identifiers, sensitive=sensitive, **goals),
    )


def _counted_by_duckdb(
    source: TableStream, wanted: list[str], sensitive: str | None, report: Progress
) -> tuple[pd.DataFrame, bool] | None:
    """The counts ``check_folded`` makes of Parquet files, made by DuckDB reading them (see
    ``veil.io._columnar``), and whether ``sensitive`` holds numbers; None when DuckDB cannot
    read the files (the batches then count them). DuckDB keeps NULL and NaN apart; both are
    missing to pandas, and ``check_counts`` takes them as one value, as a DataFrame does."""
    import duckdb

    from veil.io._columnar import parquet_counts

    report.step(f"counting the classes of {', '.join(wanted)} (DuckDB, from the Parquet files)")
    try:
        raw = parquet_counts(source.paths, wanted, COUNT)
    except duckdb.Error:
        return None
    numeric = sensitive is not None and pd.api.types.is_numeric_dtype(source.head(1)[sensitive])
    return raw, numeric


def check_folded(
    fold: Callable[..., Any],
    columns: Sequence[str],
    quasi_identifiers: Sequence[str],
    *,
    sensitive: str | None = None,
    **goals: Any,
) -> CheckResult:
    """``check`` of the table ``fold`` runs over (``veil.io.fold_batches``, a Dask frame's
    ``Partitions``; ``columns``: the table's): each batch's classes counted where it is read,
    the counts merged in order and measured once."""
    qis = list(quasi_identifiers)
    wanted = [*qis, *([sensitive] if sensitive else [])]
    require_columns(pd.DataFrame(columns=list(columns)), wanted, where="check")
    summed, numeric = fold(
        f"counting the classes of {', '.join(qis)}",
        _Classes(wanted, sensitive),
        _merge_classes,
        (FrequencySum(), False),
    )
    total = summed.total()
    counts = pd.DataFrame(columns=[*wanted, COUNT]) if total is None else total.counts
    return check_counts(
        counts, qis, count=COUNT, sensitive=sensitive, numeric_sensitive=numeric, **goals
    )


@dataclass
class _Classes:
    """A batch's classes, and whether its sensitive column holds numbers (a picklable
    function: a cluster's workers run it)."""

    columns: list[str]
    sensitive: str | None

    def __call__(self, batch: pd.DataFrame, _first_row: int) -> tuple[Frequencies, bool]:
        from veil.io._content import counted_codes, text_codes

        numeric = self.sensitive is not None and pd.api.types.is_numeric_dtype(
            batch[self.sensitive]
        )
        # the text columns by their codes: a Parquet file's own, where it was read with its
        # dictionaries (a cluster's partitions, a stream's batches), else Arrow's
        codes = counted_codes(text_codes(batch), self.columns)
        return Frequencies.of(batch, self.columns, codes=codes or None), numeric


def _merge_classes(
    total: tuple[FrequencySum, bool], part: tuple[Frequencies, bool]
) -> tuple[FrequencySum, bool]:
    return total[0].add(part[0]), total[1] or part[1]
