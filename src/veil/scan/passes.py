"""The scan of a table read in passes: a file larger than memory a batch at a time, or a Dask
DataFrame's partitions on its workers (``veil scan --streaming`` / ``--backend dask``).

The scan in memory samples each column, lets the recognizers decide on the sample, and confirms
their verdict on the whole column (``WholeColumn``). Here the whole column is measured in
passes, each a fold whose partial results merge exactly:

1. *Profile*: per column, the rows and present values, the sample (the rows of the smallest
   keyed hashes of their positions: the very rows the scan in memory draws), the values' counts
   while there are at most ``COUNTED`` distinct ones (then a KMV sketch of their hashes:
   distinct counts beyond that are estimates, within about 1%), and for numbers their range,
   whether all are whole, and their moments (merged as Pébay's formulas merge them).
2. The recognizers run on the sample and the profile; the patterns they confirm are recorded
   (each estimated on the sample meanwhile).
3. *Confirm*: every recorded pattern matched on every row, and the combinations of the
   quasi-identifiers found so far counted (with their sampling weights).
4. The recognizers run again on the measured matches; if the quasi-identifiers changed, they
   are counted in a pass of their own. The risk is measured from the counts.

With at most ``COUNTED`` distinct values per column (and a median from the counts), the result
equals the scan in memory of the same table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from veil.frequency import COUNT, WEIGHT, Frequencies
from veil.io import Partitions, TableStream, fold_batches, typed_as_read
from veil.progress import Progress, as_progress
from veil.risk.assess import assess_counts
from veil.risk.population import weight_values
from veil.scan.core import (
    SAMPLE_SIZE,
    ColumnFinding,
    Found,
    Held,
    Place,
    ScanResult,
    _in_a_table_of_its_kind,
    classify,
    first_rows,
    held_texts,
    held_values,
    kind_of,
    priorities,
    smallest,
    swept,
)
from veil.scan.recognizers.base import (
    COUNTED,
    ColumnSample,
    Numbers,
    WholeColumn,
    matching,
    value_texts,
)
from veil.schema import ColumnRole, require_columns

__all__ = ["SKETCH", "scan_folds", "scan_partitions", "scan_stream"]

#: The hashes a distinct-count sketch keeps (K minimum values): relative error about 1/sqrt(K).
SKETCH = 16_384

#: A fold: (label, fn(batch, rows before it), merge, start) -> the merged result.
Fold = Callable[[str, Callable[[pd.DataFrame, int], Any], Callable[[Any, Any], Any], Any], Any]


def _hashes(values: Any) -> np.ndarray:
    return pd.util.hash_array(np.asarray(values, dtype=object))


def _least(hashes: np.ndarray) -> np.ndarray:
    return np.unique(hashes)[:SKETCH]


@dataclass
class _Distinct:
    """A column's distinct values: their counts while few, then a sketch of their hashes."""

    counts: pd.Series | None
    sketch: np.ndarray | None = None

    def _bounded(self) -> _Distinct:
        if self.counts is not None and len(self.counts) > COUNTED:
            return _Distinct(None, _least(_hashes(self.counts.index)))
        return self

    def _sketched(self) -> np.ndarray:
        if self.sketch is not None:
            return self.sketch
        assert self.counts is not None
        return _least(_hashes(self.counts.index))

    def merge(self, other: _Distinct) -> _Distinct:
        if self.counts is not None and other.counts is not None:
            both = pd.concat([self.counts, other.counts])
            return _Distinct(both.groupby(level=0, sort=False).sum())._bounded()
        return _Distinct(None, _least(np.concatenate([self._sketched(), other._sketched()])))

    @property
    def n(self) -> int:
        """How many distinct values: exact while counted or under the sketch's size."""
        if self.counts is not None:
            return len(self.counts)
        assert self.sketch is not None
        if len(self.sketch) < SKETCH:
            return len(self.sketch)
        kth = (float(self.sketch[-1]) + 1.0) / 2.0**64
        return round((SKETCH - 1) / kth)


@dataclass
class _Moments:
    """A number column's count, range, wholeness and central moments, mergeable."""

    n: int = 0
    low: float = np.inf
    high: float = -np.inf
    integral: bool = True
    mean: float = 0.0
    m2: float = 0.0
    m3: float = 0.0

    @classmethod
    def of(cls, values: np.ndarray) -> _Moments:
        if not len(values):
            return cls()
        mean = float(values.mean())
        centred = values - mean
        return cls(
            len(values),
            float(values.min()),
            float(values.max()),
            bool(np.all(values == np.round(values))),
            mean,
            float((centred**2).sum()),
            float((centred**3).sum()),
        )

    def merge(self, other: _Moments) -> _Moments:
        if not other.n:
            return self
        if not self.n:
            return other
        na, nb = self.n, other.n
        n = na + nb
        delta = other.mean - self.mean
        m2 = self.m2 + other.m2 + delta**2 * na * nb / n
        m3 = (
            self.m3
            + other.m3
            + delta**3 * na * nb * (na - nb) / n**2
            + 3 * delta * (na * other.m2 - nb * self.m2) / n
        )
        return _Moments(
            n,
            min(self.low, other.low),
            max(self.high, other.high),
            self.integral and other.integral,
            self.mean + delta * nb / n,
            m2,
            m3,
        )


@dataclass
class _Profile:
    """One column over the rows seen: counts, the sample (keys, rows, values), the distinct
    values and, for numbers, their moments."""

    rows: int
    valid: int
    keys: np.ndarray
    positions: np.ndarray
    values: pd.Series
    distinct: _Distinct
    moments: _Moments | None

    def merge(self, other: _Profile, size: int) -> _Profile:
        keys = np.concatenate([self.keys, other.keys])
        chosen = smallest(keys, size)
        values = pd.concat([self.values, other.values], ignore_index=True)
        moments = None
        if self.moments is not None and other.moments is not None:
            moments = self.moments.merge(other.moments)
        return _Profile(
            self.rows + other.rows,
            self.valid + other.valid,
            keys[chosen],
            np.concatenate([self.positions, other.positions])[chosen],
            values.iloc[chosen].reset_index(drop=True),
            self.distinct.merge(other.distinct),
            moments,
        )

    def numbers(self) -> Numbers:
        """The facts the number recognizers read: the median from the counts when they were
        kept (exact), else from the sample (worked out once)."""
        return self._numbers

    @cached_property
    def _numbers(self) -> Numbers:
        m = self.moments if self.moments is not None else _Moments()
        if not m.n:
            return Numbers(0, np.nan, np.nan, np.nan, False, 0.0)
        counts = self.distinct.counts
        if counts is not None:
            ordered = counts.sort_index()
            cumulative = np.cumsum(ordered.to_numpy())
            values = ordered.index.to_numpy(dtype=float)
            lower = values[np.searchsorted(cumulative, (m.n - 1) // 2, side="right")]
            upper = values[np.searchsorted(cumulative, m.n // 2, side="right")]
            median = float((lower + upper) / 2)
        else:
            median = float(np.median(self.values.to_numpy(dtype=float)))
        skew = float((m.m3 / m.n) / (m.m2 / m.n) ** 1.5) if m.m2 > 0 else 0.0
        return Numbers(m.n, m.low, m.high, median, m.integral, skew)


@dataclass
class _Profiling:
    """A batch's profile of each column (run where the batch is: a worker)."""

    columns: list[str]
    sample_size: int
    seed: int

    def __call__(self, batch: pd.DataFrame, first: int) -> dict[str, _Profile]:
        out = {}
        for name in self.columns:
            series = batch[name]
            present = series.notna().to_numpy()
            valid = series[present]
            rows = np.flatnonzero(present) + first
            keys = priorities(name, rows, self.seed)
            chosen = smallest(keys, self.sample_size)
            moments = None
            if kind_of(series.dtype) == "numeric":
                moments = _Moments.of(valid.to_numpy(dtype=float))
            distinct = _Distinct(valid.value_counts(sort=False))._bounded()
            out[name] = _Profile(
                len(series),
                int(present.sum()),
                keys[chosen],
                rows[chosen],
                valid.iloc[chosen].reset_index(drop=True),
                distinct,
                moments,
            )
        return out


@dataclass
class _Whole(WholeColumn):
    """A column's facts from its profile; pattern matches from the confirming pass when
    measured (``matched``), else estimated on the sample and recorded (``asked``)."""

    profile: _Profile
    kind: str
    matched: dict[str, int] | None = None
    asked: set[str] = field(default_factory=set)

    def matching(self, regex: str) -> int:
        if self.matched is not None:
            return self.matched[regex]
        self.asked.add(regex)
        p = self.profile
        integral = self.kind == "numeric" and p.numbers().integral
        texts = value_texts(p.values.to_numpy(), self.kind, integral)
        return round(matching(texts, regex) * p.valid / max(len(p.values), 1))

    def value_counts(self) -> pd.Series | None:
        counts = self.profile.distinct.counts
        return None if counts is None else counts.sort_values(ascending=False, kind="stable")

    def numbers(self) -> Numbers:
        return self.profile.numbers()


def _sample(name: str, profile: _Profile, whole: _Whole) -> ColumnSample:
    order = np.argsort(profile.positions, kind="stable")
    positions = profile.positions[order]
    sample = pd.Series(
        profile.values.to_numpy()[order], index=positions, name=name, dtype=profile.values.dtype
    )
    return ColumnSample(
        name=name,
        whole=whole,
        sample=sample,
        n_rows=profile.rows,
        n_valid=profile.valid,
        n_distinct=profile.distinct.n,
        kind=whole.kind,
        positions=positions,
    )


@dataclass
class _Confirming:
    """A batch's matches of each recorded pattern, and the counts of the quasi-identifiers'
    combinations (with the sum of the sampling weights)."""

    patterns: dict[str, list[str]]
    kinds: dict[str, str]
    integral: dict[str, bool]
    quasi: list[str] | None
    weights: str | None
    swept: list[str] = field(default_factory=list)  # searched whole: ``held_values``
    #: per column, the values its complete counts (first pass) showed holding an identifier:
    #: only their first rows are looked for
    located: dict[str, dict[str, Found]] = field(default_factory=dict)

    def __call__(self, batch: pd.DataFrame, first: int) -> _Confirmed:
        matched: dict[str, int] = {}
        for name, regexes in self.patterns.items():
            if not regexes:
                continue
            values = batch[name].dropna().to_numpy()
            texts = value_texts(values, self.kinds[name], self.integral[name])
            for regex in regexes:
                matched[f"{name}\0{regex}"] = matching(texts, regex)
        held = {name: held_values(batch[name], first) for name in self.swept}
        for name, texts in self.located.items():
            held[name] = first_rows(batch[name], texts, first)
        return matched, _class_counts(batch, self.quasi, self.weights), held


#: what the confirming pass found: matches per column and pattern, the class counts, and the
#: values holding identifiers per column searched whole
_Confirmed = tuple[dict[str, int], Any, dict[str, dict[str, Place]]]


def _class_counts(
    batch: pd.DataFrame, quasi: list[str] | None, weights: str | None
) -> pd.DataFrame | None:
    if not quasi:
        return None
    given = weight_values(batch, weights) if weights is not None else None
    return Frequencies.of(batch, quasi, weights=given).counts


def _merge_counts(a: pd.DataFrame | None, b: pd.DataFrame | None) -> pd.DataFrame | None:
    if a is None or b is None:
        return b if a is None else a
    keys = tuple(c for c in a.columns if c not in (COUNT, WEIGHT))
    return Frequencies(keys, None, a).merge(Frequencies(keys, None, b)).counts


def _merge_confirmed(a: _Confirmed | None, b: _Confirmed) -> _Confirmed:
    if a is None:
        return b
    matched = dict(a[0])
    for key, hits in b[0].items():
        matched[key] = matched.get(key, 0) + hits
    held = {name: dict(found) for name, found in a[2].items()}
    for name, found in b[2].items():  # each value's first row over the batches
        for value, place in found.items():
            if value not in held.setdefault(name, {}) or place.row < held[name][value].row:
                held[name][value] = place
    return matched, _merge_counts(a[1], b[1]), held


def _classified(
    profiles: dict[str, _Profile], names: list[str], matched: dict[str, int] | None
) -> tuple[list[ColumnFinding], dict[str, _Whole]]:
    wholes, findings = {}, []
    for name in names:
        profile = profiles[name]
        kind = kind_of(profile.values.dtype)
        own = None
        if matched is not None:
            prefix = f"{name}\0"
            own = {k[len(prefix) :]: v for k, v in matched.items() if k.startswith(prefix)}
        wholes[name] = _Whole(profile, kind, own)
        findings.append(classify(_sample(name, profile, wholes[name])))
    return _in_a_table_of_its_kind(findings), wholes


def _quasi(findings: Sequence[ColumnFinding]) -> list[str]:
    return [f.name for f in findings if f.role is ColumnRole.QUASI_IDENTIFIER]


def _to_search(
    findings: Sequence[ColumnFinding], profiles: dict[str, _Profile]
) -> tuple[list[str], dict[str, dict[str, Found]]]:
    """The text columns that may end harmless (an identifier's is searched by its pattern),
    to search whole: by their values the first pass counted, when it kept them all (then only
    the values holding an identifier are located, batch by batch), else batch by batch."""
    searched: list[str] = []
    located: dict[str, dict[str, Found]] = {}
    for f in findings:
        if f.role is ColumnRole.IDENTIFIER or f.kind != "text":
            continue
        counted = profiles[f.name].distinct.counts
        if counted is None:
            searched.append(f.name)
        elif among := held_texts([str(v) for v in counted.index]):
            located[f.name] = among
    return searched, located


def scan_folds(
    fold: Fold,
    columns: Sequence[str],
    *,
    sample_size: int = SAMPLE_SIZE,
    random_state: int = 0,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
) -> ScanResult:
    """The scan of the table ``fold`` runs over (see the module's note), as ``scan`` returns
    it; ``weights`` is a column of the table (the sampling weights)."""
    names = [str(c) for c in columns]
    if weights is not None:
        require_columns(pd.DataFrame(columns=names), [weights], where="--weights")
        if sampling_fraction is not None:
            weight_values(pd.DataFrame({weights: [1]}), weights, sampling_fraction)
    profiling = _Profiling(names, sample_size, random_state)
    profiles: dict[str, _Profile] | None = fold(
        "scanning every column (first pass)",
        profiling,
        lambda a, b: b if a is None else {n: a[n].merge(b[n], sample_size) for n in names},
        None,
    )
    if profiles is None:
        profiles = profiling(pd.DataFrame({n: pd.Series(dtype=object) for n in names}), 0)
    findings, wholes = _classified(profiles, names, None)
    guessed = _quasi(findings)
    searched, located = _to_search(findings, profiles)
    confirming = _Confirming(
        {n: sorted(w.asked) for n, w in wholes.items()},
        {n: w.kind for n, w in wholes.items()},
        {n: w.kind == "numeric" and w.numbers().integral for n, w in wholes.items()},
        guessed,
        weights,
        searched,
        located,
    )
    confirmed: _Confirmed = fold(
        "confirming the findings on every row (second pass)", confirming, _merge_confirmed, None
    ) or ({}, None, {})
    matched, counts, held = confirmed
    findings, _ = _classified(profiles, names, matched)
    findings = [  # as ``scan(sweep=True)``: every value of a column found no identifier
        swept(f, Held.of(held.get(f.name, {})), sample_size)
        if f.role is not ColumnRole.IDENTIFIER
        else f
        for f in findings
    ]
    quasi = _quasi(findings)
    if quasi != guessed:  # the confirmation changed a verdict: count the final ones
        counting = _Confirming({}, {}, {}, quasi, weights)
        _, counts, _ = fold(
            "counting the quasi-identifiers' combinations (third pass)",
            counting,
            _merge_confirmed,
            None,
        ) or ({}, None, {})
    rows = next(iter(profiles.values())).rows if profiles else 0
    if counts is None:
        counts = pd.DataFrame({COUNT: [rows] if rows else []})
    risk = assess_counts(
        counts,
        quasi,
        count=COUNT,
        population=population,
        sampling_fraction=sampling_fraction,
        weighted=WEIGHT if weights is not None else None,
    )
    return ScanResult(
        tuple(findings),
        rows,
        sample_size,
        risk,
        counts=counts.drop(columns=[WEIGHT], errors="ignore"),
    )


def scan_stream(
    source: TableStream,
    *,
    batch_rows: int = 500_000,
    progress: Callable[[str], None] | Progress | None = None,
    **options: Any,
) -> ScanResult:
    """The scan of a table read in batches of ``batch_rows`` (``options`` as ``scan_folds``)."""
    report = as_progress(progress)

    def fold(label: str, fn: Any, merge: Any, start: Any) -> Any:
        return fold_batches(source, batch_rows, report, label, fn, merge, start)

    return typed_as_read(
        source, batch_rows, report, lambda: scan_folds(fold, source.columns, **options)
    )


def scan_partitions(
    frame: Any, *, progress: Callable[[str], None] | Progress | None = None, **options: Any
) -> ScanResult:
    """The scan of a Dask DataFrame: each partition profiled and confirmed on its worker."""
    partitions = Partitions(frame, as_progress(progress))
    return scan_folds(partitions.fold, partitions.columns, **options)
