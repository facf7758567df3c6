"""``check``: measure a table's privacy — k, l (distinct, entropy, recursive c), t, risk —
straight from its rows, independently of the search that may have produced it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from veil._html import Shown
from veil.exceptions import ParameterError
from veil.frequency import (
    COUNT,
    Frequencies,
    FrequencySum,
    class_sizes,
    histograms,
    sensitive_codes,
)
from veil.hierarchy import Hierarchy
from veil.io import TableStream, fold_batches
from veil.privacy.criteria import (
    Criterion,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    build,
)
from veil.progress import Progress, as_progress
from veil.risk.population import PopulationRisk, beyond, population_risk
from veil.risk.reidentification import PersonRisk, Risk, person_risk, risk
from veil.schema import require_columns


@dataclass(frozen=True)
class CheckResult(Shown):
    """What ``check`` measured on a table: its classes, k, l, t, the re-identification risk and,
    with a person column or a population, per person and beyond the sample; ``failed`` lists
    the thresholds given that do not hold."""

    rows: int
    quasi_identifiers: tuple[str, ...]
    sensitive: str | None
    classes: int
    k: int
    risk: Risk
    l_distinct: int | None = None
    l_entropy: int | None = None
    l_recursive_c: float | None = None  # the least c for which recursive (c, l) holds
    t: float | None = None
    t_distance: str | None = None
    failed: tuple[str, ...] = field(default_factory=tuple)  # thresholds asked for, not met
    population: PopulationRisk | None = None  # with a population size, fraction or weights
    persons: PersonRisk | None = None  # with a person id: classes and risk count people
    person: str | None = None  # the column naming each row's person

    def lines(self) -> list[str]:
        """The measures as ``veil check`` prints them."""
        r = self.risk
        on = ", ".join(self.quasi_identifiers)
        said = [f"{self.rows:,} rows, {self.classes:,} classes on {on}", f"  k = {self.k}"]
        if self.l_distinct is not None:
            said.append(f"  l = {self.l_distinct} (distinct), {self.l_entropy} (entropy)")
            said.append(f"  t = {self.t:.4f} ({self.t_distance} distance)")
        said.append(
            f"  prosecutor risk: average {r.prosecutor_average:.4f}, "
            f"highest {r.prosecutor_max:.4f}; {r.records_at_risk:.2%} of records above "
            f"{r.threshold}; {r.sample_uniques:.2%} unique"
        )
        if self.persons is not None:
            pr = self.persons
            said.append(
                f"  per person ({pr.people:,} people in {self.person}): k = {pr.k}; prosecutor "
                f"risk average {pr.prosecutor_average:.4f}, highest {pr.prosecutor_max:.4f}; "
                "household risk (any of their rows) average "
                f"{pr.household_average:.4f}, highest {pr.household_max:.4f}"
            )
        population = self.population.lines() if self.population is not None else []
        return said + [f"  {line}" for line in population]

    def to_dict(self) -> dict[str, Any]:
        """The measures as JSON values: what ``veil check --format json`` prints."""
        data: dict[str, Any] = {
            "rows": self.rows,
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": self.sensitive,
            "classes": self.classes,
            "k": self.k,
            "l_distinct": self.l_distinct,
            "l_entropy": self.l_entropy,
            "t": self.t,
            "t_distance": self.t_distance,
            "risk": {
                **self.risk.to_dict(),
                **(self.population.to_dict() if self.population is not None else {}),
            },
            **({"persons": self.persons.to_dict()} if self.persons is not None else {}),
            "failed": list(self.failed),
        }
        if self.l_recursive_c is not None:
            data["l_recursive_c"] = self.l_recursive_c
        return data


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
    asked, t_index, tree = _asked(
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
    measured = _measured(
        len(data),
        qis,
        sensitive,
        sizes,
        hist,
        values,
        numeric,
        asked,
        t_index,
        t_distance,
        tree,
        l,
        risk_threshold,
        people,
        estimates,
    )
    return replace(measured, person=person) if person is not None else measured


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
    asked, t_index, tree = _asked(
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
        flat = np.bincount(
            klass * len(values) + codes, weights=weights, minlength=len(sizes) * len(values)
        )
        hist = flat.astype(np.int64).reshape(len(sizes), len(values))
    estimates = None
    if population is not None or sampling_fraction is not None:
        estimates = population_risk(
            sizes,
            population=population,
            sampling_fraction=sampling_fraction,
            threshold=risk_threshold,
        )
    return _measured(
        rows,
        qis,
        sensitive,
        sizes,
        hist,
        values,
        numeric_sensitive,
        asked,
        t_index,
        t_distance,
        tree,
        l,
        risk_threshold,
        None,
        estimates,
    )


def _asked(
    sensitive: str | None,
    *,
    k: int | None,
    l: int | None,  # noqa: E741
    t: float | None,
    t_distance: str | None,
    risk_threshold: float,
    models: Sequence[Criterion | Mapping[str, Any]],
    hierarchies: Mapping[str, Hierarchy] | None,
) -> tuple[list[Criterion], int, Hierarchy | None]:
    """The goals asked for (checked), where the shorthand t sits among them, and the
    sensitive column's hierarchy."""
    if (
        not isinstance(risk_threshold, int | float)
        or isinstance(risk_threshold, bool)
        or not (
            0 <= risk_threshold <= 1  # NaN fails too
        )
    ):
        raise ParameterError(f"risk_threshold must be in [0, 1], got {risk_threshold!r}")
    if t_distance not in {None, "equal", "ordered", "hierarchical"}:
        raise ParameterError(
            f"t_distance must be equal, ordered or hierarchical, got {t_distance!r}"
        )
    tree = (hierarchies or {}).get(sensitive or "")
    if t_distance == "hierarchical" and tree is None:
        raise ParameterError(
            f"hierarchical t-closeness needs the sensitive column's hierarchy: give a folder "
            f"with {sensitive or 'the sensitive column'!r}'s (--hierarchies DIR)"
        )
    shorthand: list[tuple[str, dict[str, Any]]] = [
        ("k_anonymity", {"k": k}),
        ("distinct_l_diversity", {"l": l}),
        ("t_closeness", {"t": t, "distance": t_distance or "equal"}),
    ]
    asked: list[Criterion] = []
    t_index = -1  # the t given as t=, whose distance follows the sensitive column's kind
    for name, params in shorthand:
        key, value = next(iter(params.items()))
        if value is not None:
            t_index = len(asked) if key == "t" else t_index
            asked.append(build({"model": name, **params}, where=key))
    asked += [build(m) for m in models]
    needing = [m.name for m in asked if m.needs_sensitive]
    if sensitive is None and needing:
        raise ParameterError(
            f"{needing[0]} is measured on a sensitive column: name it (--sensitive COLUMN)"
        )
    return asked, t_index, tree


def _measured(
    rows: int,
    qis: list[str],
    sensitive: str | None,
    sizes: np.ndarray,
    hist: np.ndarray | None,
    values: list[str],
    numeric: bool,
    asked: list[Criterion],
    t_index: int,
    t_distance: str | None,
    tree: Hierarchy | None,
    l: int | None,  # noqa: E741
    risk_threshold: float,
    people: PersonRisk | None,
    estimates: PopulationRisk | None,
) -> CheckResult:
    """The measures of classes ``sizes`` (and their sensitive ``hist`` over ``values``)."""
    result: dict[str, Any] = {}
    if hist is not None:
        distance = t_distance or ("ordered" if numeric else "equal")
        closeness = build({"model": "t_closeness", "t": 1.0, "distance": distance})
        asked = [  # t without a distance: the one measured (ordered for numbers)
            m.model_copy(update={"distance": distance})
            if i == t_index and t_distance is None
            else m
            for i, m in enumerate(asked)
        ]
        for model in [closeness, *asked]:
            if isinstance(model, TCloseness) and model.distance == "hierarchical":
                if tree is None:
                    raise ParameterError(
                        f"{model.name} needs the sensitive column's hierarchy (--hierarchies DIR)"
                    )
                model.use_hierarchy(tree)
            model.prepare(values)
        effective = EntropyLDiversity(l=1).measure(sizes, hist) or 0.0  # exp(least entropy)
        result = {
            "l_distinct": DistinctLDiversity(l=1).measure(sizes, hist),
            "l_entropy": math.floor(effective + 1e-9),
            "t": closeness.measure(sizes, hist),
            "t_distance": distance,
        }
        if l is not None:
            result["l_recursive_c"] = RecursiveCLDiversity(c=1, l=l).measure(sizes, hist)
    # a goal is met only when measured: with no record left, l and t are not
    counted = sizes if people is None else people.class_people  # k counts people when given

    def measured(model: Criterion) -> Any:
        if model.needs_sensitive and hist is None:
            return None
        return model.measure(counted if isinstance(model, KAnonymity) else sizes, hist)

    failed = [m.goal for m in asked if not m.met(measured(m))]
    return CheckResult(
        rows=rows,
        quasi_identifiers=tuple(qis),
        sensitive=sensitive,
        classes=len(sizes),
        k=KAnonymity(k=1).measure(counted, None),
        risk=risk(sizes, threshold=risk_threshold),
        failed=tuple(failed),
        population=estimates,
        persons=people,
        **result,
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

    return check_folded(fold, source.columns, quasi_identifiers, sensitive=sensitive, **goals)


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
        numeric = self.sensitive is not None and pd.api.types.is_numeric_dtype(
            batch[self.sensitive]
        )
        return Frequencies.of(batch, self.columns), numeric


def _merge_classes(
    total: tuple[FrequencySum, bool], part: tuple[Frequencies, bool]
) -> tuple[FrequencySum, bool]:
    return total[0].add(part[0]), total[1] or part[1]
