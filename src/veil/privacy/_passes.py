"""The one release engine: a policy applied to a table in passes, whatever holds the table.

A ``Passes`` is where the rows are: a DataFrame in memory (one batch, ``veil.privacy.anonymize``),
files read a batch at a time (``anonymize_stream``: the README's "Tables larger than memory"),
or a Dask cluster's partitions. Every release runs the same steps over it; what differs is the
source and the writer.

1. The sample: the policy is checked against it and every column's role decided on it (the
   scan's, where the policy gives none); the policy's steps are fitted on it. A table in memory
   is its own sample. Read in batches, the sample is the first ``SAMPLE_ROWS`` rows, and a step
   that needs every row at once (``ColumnTransform.batchwise``) is refused in one line.
2. First pass (a fold over the batches): each batch through the steps; the released
   quasi-identifiers' (and sensitive value's) distinct combinations counted
   (``veil.frequency.Frequencies``), and the input's classes and fingerprint.
3. The search runs on those counts (``CodedFrequencies.from_counts``). Mondrian's local
   recoding and counting people (``privacy.person_id``) partition the rows themselves: they run
   only where the table is one batch.
4. Second pass: each batch through the steps again (in memory: the fit's result, not run twice),
   generalized to the levels found, the records of failing classes withheld, the generalized
   values scrubbed from free text; the writer shuffles (the input's order is information),
   hashes (``veil.io.ContentHash``) and counts what it released.
5. The goals are measured again from what was written (its counts; its rows when it holds
   them: ``verify``) before the certificate is handed back; only then may the caller move the
   output into place.

Memory, read in batches: the counts (one row per distinct combination), the sample, and a batch
at a time; never the table.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from veil.exceptions import CheckFailedError, PolicyError, VeilError
from veil.frequency import (
    COUNT,
    CodedFrequencies,
    Frequencies,
    FrequencySum,
    class_sizes,
    mixed_radix,
    sensitive_codes,
)
from veil.hierarchy import Hierarchy
from veil.io import beside
from veil.io._content import Coded, codes_kept, counted_codes, text_codes
from veil.io._pieces import TEXT, take_rows, with_texts
from veil.privacy._plan import (
    Plan,
    PolicyLike,
    certified,
    empty_victories,
    follow,
    mask_hides,
    mondrian_release,
    plan_release,
    release_certificate,
    search_record,
    search_setup,
    searched,
    withheld_everything,
)
from veil.privacy._text import leftover_quasi, scrub_quasi, scrub_record, text_columns
from veil.privacy._verify import verify, verify_counts
from veil.privacy.certificate import Certificate, StepRecord
from veil.privacy.classes import ClassStats
from veil.privacy.decide import released_as_is, searched_as_given
from veil.privacy.lattice import check as check_groups
from veil.privacy.metrics import make_metric
from veil.privacy.space import MAX_NODES, SolutionSpace, lattice_nodes
from veil.progress import Progress, as_progress

#: Rows the policy is checked against and the scan decides roles on when the table is read in
#: batches (the in-memory scan samples 1,000 values per column too, and confirms a pattern on
#: all rows: see ``_confirm``).
SAMPLE_ROWS = 100_000


@dataclass
class Written:
    """What the release pass wrote: its content hash, the counts of its classes, its rows and
    columns, the formula cells it escaped, in parts how many files, and the rows themselves
    when the writer holds them (a table in memory)."""

    digest: str
    counts: Frequencies | None
    rows: int
    columns: list[str]
    escaped: int = 0
    parts: int | None = None  # a release of several files: their number
    data: pd.DataFrame | None = None


#: A pass's function of a batch and the rows before it; how two results merge.
Fold = Callable[[pd.DataFrame, int], Any]
Merge = Callable[[Any, Any], Any]
#: The rows released in a random order: the positions of ``n`` rows in that order.
Order = Callable[[int], np.ndarray]
#: The second pass on a batch: the released rows and each step's tallies (with an ``Order``,
#: the rows in that order).
Produce = Callable[..., tuple[pd.DataFrame, list[Any]]]
#: What a writer returns: what it wrote, and each batch's tallies.
Released = tuple[Written, list[list[Any]]]


@dataclass
class _Part:
    """What the first pass learns from one batch or partition."""

    rows: int
    hashed: bytes
    before: Frequencies | None
    counts: Frequencies | None


class Passes:
    """Where a release's passes read the table (a DataFrame, a file a batch at a time, a
    cluster's partitions): ``fold`` runs a function on every batch and merges the results in
    order; ``release`` applies the release and writes (or holds) it. ``whole``: the table is
    one batch in memory, its own sample."""

    columns: list[str]
    rows: int
    whole: bool = False

    def sample(self, rows: int) -> pd.DataFrame:
        """The first ``rows`` rows (the whole table, when it is in memory)."""
        raise NotImplementedError

    def fold(self, label: str, fn: Fold, merge: Merge, start: Any) -> Any:
        """``merge(...merge(start, fn(batch0, 0)), fn(batch1, rows before it)...)``."""
        raise NotImplementedError

    #: What of a batch the input's fingerprint hashes, in order, given some of its text
    #: columns' codes (``row_hashes``' ``codes``; a module-level function: a cluster's
    #: workers run it).
    hashed: Callable[[pd.DataFrame, Mapping[str, tuple[np.ndarray, np.ndarray]]], bytes]
    released: Written | None = None

    def release(
        self, produce: Produce, measured: list[str], seed: int | bool | None, columns: list[str]
    ) -> Released:
        """Apply ``produce`` to every batch (it returns the released rows and the steps'
        tallies), shuffled unless ``seed`` is False; hash, count and write what it released.
        ``columns``: the release's columns if no row is left."""
        raise NotImplementedError


@dataclass
class Steps:
    """The policy's steps fitted on the sample, the quasi-identifiers and sensitive columns
    they leave, and the direct identifiers a mask must hide. A table in memory is its own
    sample: what the fit produced (``output``, with each step's tallies and the rows left after
    it, ``counted``) is the steps' result on that batch, so they never run twice on it."""

    steps: list[Any]
    quasi: list[str]
    sensitive: list[str]
    identifiers: set[str]
    fitted_on: pd.DataFrame | None = None
    output: pd.DataFrame | None = None
    counted: list[tuple[dict[str, Any], int]] | None = None

    def run(self, batch: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[dict[str, Any], int]]]:
        """``batch`` through the steps, with each step's tallies and the rows after it."""
        if batch is self.fitted_on and self.output is not None and self.counted is not None:
            return self.output, list(self.counted)
        tallies: list[tuple[dict[str, Any], int]] = []
        for step in self.steps:
            batch = step.transform.transform(batch)
            tallies.append((step.transform.tallies(), len(batch)))
            mask_hides(step, self.identifiers)
        return batch, tallies

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return self.run(batch)[0]

    def columns(self, sample: pd.DataFrame) -> list[str]:
        """The columns the steps leave (the release's, when no row is left)."""
        out = self.output if self.output is not None else self(sample.head(0))
        return list(out.columns)

    def leaving_none(self) -> str | None:
        """The first step that withholds every row (as the fit counted it on a table in
        memory; read in batches, a ``suppress_rows`` whose combinations are all rare)."""
        if self.counted is not None:
            left = (
                s.where for s, (_, rows) in zip(self.steps, self.counted, strict=True) if not rows
            )
            return next(left, None)
        return next((str(s.where) for s in self.steps if s.transform.withholds_every_row()), None)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)  # a cluster's workers run the steps on their partitions
        state.update(fitted_on=None, output=None, counted=None)
        return state


def fit_steps(plan: Plan, sample: pd.DataFrame, report: Progress, *, whole: bool) -> Steps:
    """The policy's steps fitted on ``sample`` (``whole``: it is the table); read in batches, a
    step that cannot run batch by batch is refused in one line."""
    quasi, sensitive = list(plan.quasi), list(plan.sensitive)
    identifiers = {d.column for d in plan.decisions if d.role == "identifier"}
    scanned = {d.column: d for d in plan.decisions if d.by == "scan"}
    frame = sample
    steps = list(plan.policy.planned_steps())
    counted: list[tuple[dict[str, Any], int]] = []
    report.expect(len(sample) * len(steps))
    for step in steps:
        # a step that counts the whole table is given its counts later (a pass of its own)
        why = None if whole or step.transform.counts_whole_table() else step.transform.batchwise()
        if why is not None:
            raise PolicyError(
                f"policy {step.where} ({step.name}) cannot run on a table read in "
                f"batches: {why}; or run --in-memory (the table must fit in "
                "memory)"
            )
        report.step(f"{step.where}: {step.name}")
        rows = len(frame)
        try:
            frame = step.transform.fit_transform(frame)
        except CheckFailedError:
            raise
        except VeilError as err:
            raise _step_error(step, err, scanned) from err
        report.advance(rows)
        counted.append((step.transform.tallies(), len(frame)))
        mask_hides(step, identifiers)
        quasi = follow(step.transform, quasi, masked=True)
        sensitive = follow(step.transform, sensitive)
    if not whole:
        return Steps(steps, quasi, sensitive, identifiers)
    return Steps(steps, quasi, sensitive, identifiers, sample, frame, counted)


def _step_error(step: Any, err: VeilError, scanned: Mapping[str, Any]) -> PolicyError:
    """A step's error, said where in the policy it is; a step the scan added (a column the
    policy does not name) says so, and how to give the column its own."""
    origin = next((scanned[c] for c in step.columns if c in scanned), None)
    if origin is None:
        return PolicyError(f"policy {step.where} ({step.name}): {err}")
    return PolicyError(
        f"{origin.column} is not in the policy and the scan finds "
        f"{origin.entity or 'a unique key'} in it, so veil would {step.name} it: "
        f"{err}; or give {origin.column} its own steps in the policy"
    )


def release_in_passes(
    passes: Passes,
    policy: PolicyLike | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
    seconds: dict[str, float] | None = None,
) -> Certificate:
    """The release of the table ``passes`` reads (see the module's note), certified and
    verified from what was written; the writer holds it (``passes.released``).

    Raises ``PolicyError`` when the policy does not fit the data (unknown column, untreated
    identifier, bad step parameter, a step or method the source cannot run: the message says
    where in the policy), and ``CheckFailedError`` when the release misses the policy's
    privacy goals."""
    with codes_kept():  # a text column coded once for both passes, where the same column
        return _released(passes, policy, hierarchies, progress, seconds)


def _released(
    passes: Passes,
    policy: PolicyLike | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    progress: Callable[[str], None] | Progress | None,
    seconds: dict[str, float] | None,
) -> Certificate:
    report = as_progress(progress)
    seconds = {} if seconds is None else seconds
    sample = passes.sample(min(SAMPLE_ROWS, max(passes.rows, 1)))
    plan = plan_release(sample, policy, hierarchies=hierarchies, progress=progress)
    privacy = plan.policy.privacy
    if not passes.whole:
        _refuse_partitioning(privacy)
    steps = fit_steps(plan, sample, report, whole=passes.whole)
    searching = privacy is not None and bool(steps.quasi)
    if not passes.whole:  # in memory, the fit counted the whole table already
        _count_whole_table(passes, steps, seconds)

    clock = time.perf_counter()
    first = _first_pass(passes, plan, steps, searching)
    seconds["first pass"] = time.perf_counter() - clock

    found: _Found | None = None
    if searching and first.rows and (first.counts is None or not first.counts.counts[COUNT].sum()):
        raise withheld_everything(steps.leaving_none())
    if searching:
        assert first.counts is not None
        clock = time.perf_counter()
        found = _search(plan, steps, first.counts, first.rows, report, progress)
        seconds["search"] = time.perf_counter() - clock

    # second pass (and a shuffle): apply, withhold, write, hash, count
    clock = time.perf_counter()
    quasi = steps.quasi
    measured = [*quasi, *steps.sensitive[:1]] if quasi else []
    produce = _Produce(steps, found.apply if found else _unchanged, quasi)
    empty = steps.columns(sample)
    seed = False if plan.policy.keep_order else plan.policy.random_state
    written, tallies = passes.release(produce, measured, seed, empty)
    seconds["second pass"] = time.perf_counter() - clock
    if written.counts is None:  # nothing measured (no quasi-identifier) or no row
        written.counts = _no_counts(measured, written.rows)
    certificate = _certificate(passes, plan, steps, first, found, written, tallies)
    report.step("verifying the release against its certificate (from what was written)")
    claimed = certificate.to_dict()
    if written.data is not None:  # the rows are in hand: measured on them
        verification = verify(written.data, claimed, content=False)
    else:
        verification = verify_counts(
            written.counts.counts, claimed, digest=written.digest, count=COUNT
        )
    certificate = certified(certificate, verification, privacy is not None, quasi)
    passes.released = written
    return certificate


def _refuse_partitioning(privacy: Any) -> None:
    """What only a table in memory can do: Mondrian's partitions and counting people."""
    if privacy is not None and privacy.method == "mondrian":
        raise PolicyError(
            "privacy.method mondrian partitions the whole table in memory; with a "
            "table read in batches use method optimal or heuristic, or run "
            "--in-memory"
        )
    if privacy is not None and privacy.person_id is not None:
        raise PolicyError(
            "privacy.person_id counts people per class over the whole table; run "
            "--in-memory, or drop person_id"
        )


def _count_whole_table(passes: Passes, steps: Steps, seconds: dict[str, float]) -> None:
    """A step whose fit needs its combinations counted over every row (``suppress_rows``'
    rare ones) is given them: a pass of its own, through the steps before it."""
    for i, step in enumerate(steps.steps):
        if step.transform.counts_whole_table():
            clock = time.perf_counter()
            whole = passes.fold(
                f"counting the combinations policy {step.where} withholds when rare (a pass of "
                "its own)",
                _CountAfter(steps.steps[:i], step.transform.columns_),
                summed_counts,
                FrequencySum(),
            ).total()
            columns = list(step.transform.columns_)
            table = whole if whole is not None else _no_counts(columns, 0)  # no row
            step.transform.use_counts(table.counts, COUNT)
            seconds[f"counting {step.where}"] = time.perf_counter() - clock


def _first_pass(passes: Passes, plan: Plan, steps: Steps, searching: bool) -> _Summary:
    """The counts the search needs, the input's classes and its fingerprint."""
    privacy = plan.policy.privacy
    person = [privacy.person_id] if privacy is not None and privacy.person_id else []
    wanted = [*steps.quasi, *steps.sensitive[:1], *person] if searching else []
    judged = [] if passes.whole else _judged(plan)  # in memory the scan saw every row
    # with no step, the input's classes are the search's counts without the sensitive value:
    # one group-by per batch instead of two
    derived = searching and not steps.steps and steps.quasi == plan.quasi
    summarize = _Summarize(
        passes.hashed,
        judged,
        [] if derived else plan.quasi,
        steps if searching else None,
        wanted,
        # the declared ones: a column the scan decided is judged above, its values searched
        [c for c in ([] if passes.whole else searched_as_given(plan.policy)) if c not in judged],
    )
    first: _Summary = passes.fold(
        "counting the quasi-identifiers' combinations (first pass)", summarize, _summed, _Summary()
    ).settle()
    if derived and first.counts is not None:
        first.before = first.counts.project(steps.quasi)
    return first


def _judged(plan: Plan) -> list[str]:
    """The columns judged on the sample, confirmed on every batch: those the scan let through
    (with no step: a quasi-identifier or sensitive column whose values held identifiers has
    them redacted), and those the policy releases with their values (a role it gave, no step
    that protects an identifier, no ``keep``), which a table in memory has scanned whole."""
    as_is = set(released_as_is(plan.policy))
    return [
        d.column
        for d in plan.decisions
        if (d.by == "scan" and d.role != "identifier" and d.treatment is None) or d.column in as_is
    ]


@dataclass
class _Found:
    """What the search found: the function that generalizes a batch, its certificate entry and
    step record, and the privacy models asked for."""

    apply: Callable[[pd.DataFrame], pd.DataFrame]
    info: dict[str, Any]
    record: StepRecord
    models: list[Any]


def _search(
    plan: Plan,
    steps: Steps,
    counted: Frequencies,
    rows_in: int,
    report: Progress,
    progress: Callable[[str], None] | Progress | None,
) -> _Found:
    """The optimal (or, for huge lattices or when asked, heuristic) full-domain generalization
    on the first pass's counts; Mondrian's local recoding on the rows in memory."""
    privacy = plan.policy.privacy
    assert privacy is not None
    quasi = steps.quasi
    report.step(f"searching generalizations of {', '.join(quasi)}")
    used, models, checked, target = _setup(plan, steps, counted, rows_in)
    if privacy.method == "mondrian":
        stepped = steps.output
        assert stepped is not None  # refused before unless the table is in memory
        released, info, record = mondrian_release(stepped, quasi, used, checked, target)
        info["rows_in"] = len(stepped)
        return _Found(_Partitioned(stepped, released), info, record, models)
    counts = counted.counts
    table = CodedFrequencies.from_counts(counts, quasi, used, sensitive=target, count=COUNT)
    result = searched(table, checked, privacy, quasi, progress)
    levels = result.levels
    assert levels is not None  # searched raises otherwise
    evaluation = check_groups(table.roll_up(table.bottom, levels), checked, table.rows)
    failing = evaluation.failing[table.entry_classes(levels)]
    suppressed = int(table.bottom.sizes[failing].sum())
    info, record = search_record(
        result, privacy, quasi, checked, suppressed, table.rows - suppressed, 0
    )
    info["rows_in"] = table.rows
    apply = _Generalize(quasi, used, levels, table.bottom.leaves, failing)
    return _Found(apply, info, record, models)


def _setup(
    plan: Plan, steps: Steps, counted: Frequencies, rows_in: int
) -> tuple[list[Hierarchy], list[Any], list[Any], str | None]:
    """The search's hierarchies, the policy's models, the models it checks and the column
    their histograms count, on the first pass's counts; goals no node can reach stop here."""
    counts = counted.counts
    stepped = steps.output  # the rows after the steps, when the table is in memory
    basis, weights = (stepped, None) if stepped is not None else (counts, counts[COUNT].to_numpy())
    used, models, checked, target = search_setup(
        plan, basis, steps.quasi, steps.sensitive, weights=weights
    )
    _reachable(counts, checked, target, rows_in=rows_in)
    return used, models, checked, target


def solution_space(
    passes: Passes,
    policy: PolicyLike | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
    limit: int = MAX_NODES,
) -> SolutionSpace:
    """The lattice the policy's search runs over, every node checked and measured as the
    search does (``veil.privacy.space``), and the node the search chooses: the same plan,
    steps and first pass as the release, without a second pass."""
    report = as_progress(progress)
    sample = passes.sample(min(SAMPLE_ROWS, max(passes.rows, 1)))
    plan = plan_release(sample, policy, hierarchies=hierarchies, progress=progress)
    privacy = plan.policy.privacy
    if privacy is None:
        raise PolicyError(
            "the policy sets no privacy goal, so there is no search to explore; add one "
            "(privacy: {k: 5})"
        )
    if privacy.method == "mondrian":
        raise PolicyError(
            "method mondrian recodes each class on its own: it has no lattice of "
            "generalizations to explore; use method optimal"
        )
    if not passes.whole:
        _refuse_partitioning(privacy)
    steps = fit_steps(plan, sample, report, whole=passes.whole)
    if not passes.whole:
        _count_whole_table(passes, steps, {})
    first = _first_pass(passes, plan, steps, True)
    if first.counts is None or not first.counts.counts[COUNT].sum():
        raise withheld_everything(steps.leaving_none())
    used, _, checked, target = _setup(plan, steps, first.counts, first.rows)
    table = CodedFrequencies.from_counts(
        first.counts.counts, steps.quasi, used, sensitive=target, count=COUNT
    )
    result = searched(table, checked, privacy, steps.quasi, progress)
    assert result.levels is not None  # searched raises otherwise
    report.step(f"measuring the lattice of {', '.join(steps.quasi)}")
    max_outliers = math.floor(privacy.max_suppression * table.rows)
    nodes, complete = lattice_nodes(
        table, checked, make_metric(privacy.metric), max_outliers=max_outliers, limit=limit
    )
    return SolutionSpace(
        quasi=tuple(steps.quasi),
        heights=tuple(table.heights),
        rows=table.rows,
        metric=privacy.metric,
        max_suppression=privacy.max_suppression,
        chosen=tuple(result.levels),
        nodes=tuple(nodes),
        complete=complete,
    )


def _certificate(
    passes: Passes,
    plan: Plan,
    steps: Steps,
    first: _Summary,
    found: _Found | None,
    written: Written,
    tallies: list[list[Any]],
) -> Certificate:
    """The release's certificate from what the passes measured and the writer wrote."""
    quasi, rows_in = steps.quasi, first.rows
    records = [StepRecord(s.name, s.where, s.transform.describe(), 0, 0) for s in steps.steps]
    if found is not None:
        records.append(found.record)
    records = _records(records, steps.steps, tallies, len(written.columns))
    release_counts = written.counts
    assert release_counts is not None
    before_counts = first.before
    search = found.info if found is not None else None
    distinct_in = before_counts.counts if before_counts is not None else pd.DataFrame()
    warnings = empty_victories(
        distinct_in, release_counts.counts, quasi, search, rows_in, rows_out=written.rows
    )
    warnings += _pseudonym_collisions(steps.steps, rows_in, passes.whole)
    return release_certificate(
        plan,
        written.digest,
        found.models if found is not None else None,
        source_fingerprint=first.fingerprint(passes.columns),
        rows_in=rows_in,
        rows_out=written.rows,
        columns_in=tuple(map(str, passes.columns)),
        columns_out=tuple(map(str, written.columns)),
        steps=tuple(records),
        quasi_identifiers=tuple(quasi),
        sensitive=tuple(steps.sensitive),
        before=_stats(before_counts, plan.quasi, rows_in),
        after=_stats(release_counts, quasi, written.rows),
        search=search,
        warnings=tuple(warnings),
        escaped_cells=written.escaped,
        release_parts=written.parts,
    )


def _no_counts(measured: list[str], rows: int) -> Frequencies:
    """The release's counts when nothing was counted: no quasi-identifier (its ``rows`` as one
    class) or no row."""
    columns_of: dict[str, list[Any]] = {c: [] for c in measured} if measured else {COUNT: [rows]}
    return Frequencies(tuple(measured), None, pd.DataFrame({COUNT: [], **columns_of}))


@dataclass
class _Partitioned:
    """Mondrian's release of the rows in memory: local recoding partitions the whole table,
    so it has no form batch by batch."""

    table: pd.DataFrame
    released: pd.DataFrame

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        if batch is not self.table:
            raise CheckFailedError("Mondrian's partitions apply to the table they were found on")
        return self.released


@dataclass
class _CountAfter:
    """A batch's combinations of ``columns`` after ``steps`` (picklable: workers run it)."""

    steps: list[Any]
    columns: list[str]

    def __call__(self, batch: pd.DataFrame, _first_row: int) -> Frequencies:
        return Frequencies.of(_through(self.steps, batch), self.columns)


def row_hashes(
    batch: pd.DataFrame, codes: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None
) -> bytes:
    """Each row's hash, in order: what ``veil.io.fingerprint`` hashes of a whole table.
    ``codes``: some text columns' codes and distinct texts (``veil.io._content.text_codes``),
    each distinct text hashed once and every row's hash taken from its code, as pandas does
    once it has coded the column itself."""
    if not codes or not len(batch.columns):
        return pd.util.hash_pandas_object(batch, index=False).to_numpy().tobytes()
    from pandas.core.util.hashing import combine_hash_arrays  # type: ignore[attr-defined]

    def hashed(name: Any) -> np.ndarray:
        if name not in codes:
            return np.asarray(pd.util.hash_pandas_object(batch[name], index=False).to_numpy())
        code, texts = codes[name]
        each = pd.util.hash_array(texts, categorize=False) if len(texts) else np.zeros(1, "u8")
        out = each.take(np.where(code < 0, 0, code))
        out[code < 0] = np.iinfo(np.uint64).max
        return np.asarray(out)

    combined = combine_hash_arrays(iter(map(hashed, batch.columns)), len(batch.columns))
    return np.asarray(combined).tobytes()


def _unchanged(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def summed_counts(total: FrequencySum, part: Frequencies | None) -> FrequencySum:
    """A fold's merge of counts: ``part`` added to ``total`` (merged in bulk)."""
    return total.add(part)


@dataclass
class _Summary:
    """The first pass so far: rows, the fingerprint's hash, the input's and the search's
    counts."""

    rows: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    before: Frequencies | None = None
    counts: Frequencies | None = None
    before_sum: FrequencySum = field(default_factory=FrequencySum)
    counts_sum: FrequencySum = field(default_factory=FrequencySum)

    def settle(self) -> _Summary:
        """``before`` and ``counts`` of every batch folded in."""
        self.before, self.counts = self.before_sum.total(), self.counts_sum.total()
        return self

    def fingerprint(self, columns: list[str]) -> str:
        digest = self.digest.copy()
        digest.update("\x1f".join(map(str, columns)).encode())
        return str(digest.hexdigest())


def _summed(total: _Summary, part: _Part) -> _Summary:
    total.rows += part.rows
    total.digest.update(part.hashed)
    total.before_sum.add(part.before)
    total.counts_sum.add(part.counts)
    return total


@dataclass
class _Summarize:
    """The first pass on one batch (a picklable function: a cluster's workers run it)."""

    hashed: Callable[[pd.DataFrame, Mapping[str, tuple[np.ndarray, np.ndarray]]], bytes]
    judged: list[str]
    quasi: list[str]
    steps: Steps | None
    wanted: list[str]
    given: list[str] = field(default_factory=list)  # ``searched_as_given``

    def __call__(self, batch: pd.DataFrame, first_row: int) -> _Part:
        # the text columns coded once, for the rows' hashes and the counts alike; the rows'
        # hashes made on the other core meanwhile
        texts = text_codes(batch, kept=self.quasi)  # the second pass's too, where it is one
        hashed = beside(self.hashed, batch, texts)
        _confirm(batch, self.judged, first_row)
        codes = counted_codes(texts, {*self.quasi, *self.wanted})
        before = Frequencies.of(batch, self.quasi, codes=codes or None) if self.quasi else None
        counts = None
        if self.steps is not None:
            stepped = self.steps(batch)
            same = stepped is batch and codes
            counts = Frequencies.of(stepped, self.wanted, codes=codes if same else None)
        tables = [f.counts for f in (before, counts) if f is not None]
        for name in self.given:  # their values as the codes or counts hold them, not every row's
            if _may_hold(batch, tables, name, texts.get(name)):
                _refuse_held(batch, name, first_row)
        return _Part(len(batch), hashed.result(), before, counts)


def _may_hold(
    batch: pd.DataFrame, tables: list[pd.DataFrame], name: str, coded: Coded | None = None
) -> bool:
    """Whether a text column's distinct values may hold a direct identifier (``held_texts``),
    as its codes list them (``coded``; a text no row holds may be listed, and then the batch
    is searched for nothing) or else as the first of the counts ``tables`` holding it has them
    (made unique again: 70,000 rows a batch of adult); True when neither has the column (the
    batch is searched instead). Numbers and dates hold none (``held_values``)."""
    from veil.scan.core import held_texts, kind_of

    if kind_of(batch[name].dtype) != "text":
        return False
    if coded is not None:
        return bool(held_texts([str(v) for v in coded[1]]))
    for table in tables:
        if name in table.columns:
            return bool(held_texts([str(v) for v in table[name].dropna().unique()]))
    return True


@dataclass
class _Produce:
    """The second pass on one batch: the steps, then the generalization; with what each step
    counted (``tallies``) and the rows left after each."""

    steps: Steps
    apply: Callable[[pd.DataFrame], pd.DataFrame]
    quasi: list[str]

    def __call__(
        self, batch: pd.DataFrame, order: Order | None = None
    ) -> tuple[pd.DataFrame, list[Any]]:
        """The released rows of ``batch`` and each step's tallies; with ``order``, the rows in
        that order (the generalization takes each quasi-identifier's codes in it and makes the
        texts once, rather than taking the released texts again)."""
        out, tallies, _ = self.coded(batch, order)
        return out, tallies

    def labels(self) -> dict[str, pa.Array]:
        """The texts ``coded``'s codes index, column by column (``_Generalize.labels``)."""
        return self.apply.labels() if isinstance(self.apply, _Generalize) else {}

    def coded(
        self, batch: pd.DataFrame, order: Order | None = None, *, texts: bool = True
    ) -> tuple[pd.DataFrame, list[Any], dict[str, tuple[np.ndarray, int]]]:
        """``__call__``'s release and tallies, and the generalized quasi-identifiers' codes
        (``_Generalize.coded``: what counting them needs, as ``Frequencies.of`` takes them).
        Without ``texts``, a generalized column may be left as its codes (``_Generalize``),
        for a shuffle's spill to take as they are."""
        if not batch.index.is_unique:  # a cluster's partitions read together (the sample):
            batch = batch.reset_index(drop=True)  # rows paired by position, as written
        stepped, tallies = self.steps.run(batch)
        codes: dict[str, tuple[np.ndarray, int]] = {}
        if isinstance(self.apply, _Generalize):
            out, codes = self.apply.coded(stepped, order, texts=texts)
        else:
            out = self.apply(stepped)
            out = out if order is None else take_rows(out, order(len(out)))
        prose = text_columns(out, self.quasi)
        if prose:  # free text to search: the released texts made
            out = with_texts(out)
        # the generalized quasi-identifiers' values, out of the free text too (row by row)
        scrubbed, replaced = scrub_quasi(batch, out, self.quasi, columns=prose)
        # what the replacement missed: refused (the free text told again where it changed)
        leftover_quasi(batch, scrubbed, self.quasi, columns=prose if scrubbed is out else None)
        out = scrubbed
        tallies.append((replaced, len(out)))
        return out, tallies, codes


def _records(
    records: list[StepRecord], steps: list[Any], tallies: list[list[Any]], width: int
) -> list[StepRecord]:
    """The step records with what each counted over every batch, in the batches' order."""
    totals: list[dict[str, Any]] = [{} for _ in steps]
    rows_after = [0] * (len(steps) + 1)
    scrubbed: dict[str, int] = {}
    for batch in tallies:
        for i, (tally, rows) in enumerate(batch):
            rows_after[i] += rows
            if i < len(steps):
                totals[i] = merge_tallies(totals[i], tally)
            else:
                for name, n in tally.items():
                    scrubbed[name] = scrubbed.get(name, 0) + n
    out = []
    for i, record in enumerate(records):
        if i < len(steps):
            transform = steps[i].transform
            for name, value in totals[i].items():
                setattr(transform, name, value)
            out.append(
                StepRecord(
                    record.name,
                    record.where,
                    transform.describe(),
                    rows_after[i],
                    width,
                    counts=getattr(transform, "counts_", None),
                )
            )
        else:
            out.append(
                StepRecord(record.name, record.where, record.description, rows_after[-1], width)
            )
    if scrubbed:
        out.append(scrub_record(scrubbed, rows_after[-1], width))
    return out


def _through(steps: list[Any], batch: pd.DataFrame) -> pd.DataFrame:
    for step in steps:
        batch = step.transform.transform(batch)
    return batch


def _confirm(batch: pd.DataFrame, columns: list[str], first_row: int) -> None:
    """Fail closed: a column the scan let through on the first rows (as harmless, a
    quasi-identifier or sensitive) must not hold direct identifiers further down. Each batch's
    cells of those columns are scanned again (the scan's sample of each column, its pattern
    confirmed on every cell of the batch), and every distinct value is searched for the
    identifiers text holds by their pattern (``held_identifiers``, as a release in memory does)."""
    if not columns:
        return
    from veil.policy import treat_identifiers
    from veil.scan import classify
    from veil.scan.core import SAMPLE_SIZE, sample_column
    from veil.scan.text import label
    from veil.schema import ColumnRole

    for name in columns:  # the scan's verdict per column; its risk measure is not needed here
        finding = classify(sample_column(name, batch[name], sample_size=SAMPLE_SIZE))
        if finding.role is ColumnRole.IDENTIFIER and finding.entity is not None:
            raise PolicyError(
                f"column {finding.name!r}: rows {first_row + 1:,} to {first_row + len(batch):,} "
                f"hold {label(finding.entity)}, which the first {SAMPLE_ROWS:,} rows did not "
                f"show; in the policy, {treat_identifiers()}"
            )
        if finding.role is not ColumnRole.IDENTIFIER:
            _refuse_held(batch, name, first_row)


def _refuse_held(batch: pd.DataFrame, name: str, first_row: int) -> None:
    """Refuse a batch whose column ``name`` holds direct identifiers (``held_identifiers``)."""
    from veil.policy import treat_identifiers
    from veil.scan.core import held_identifiers

    if held := held_identifiers(batch[name]):
        rows = tuple(first_row + row for row in held.rows)  # every value, as in memory
        raise PolicyError(
            f"column {name!r}: {replace(held, rows=rows)}, which the first "
            f"{SAMPLE_ROWS:,} rows did not show; in the policy, {treat_identifiers()}"
        )


@dataclass
class _Generalize:
    """A batch's quasi-identifiers generalized to ``levels``, the rows of failing classes out
    (``leaves``: the bottom entries' leaf codes; ``failing``: whether each entry's class fails)."""

    quasi: list[str]
    hierarchies: list[Hierarchy]
    levels: tuple[int, ...]
    leaves: np.ndarray
    failing: np.ndarray

    def __call__(self, batch: pd.DataFrame, order: Order | None = None) -> pd.DataFrame:
        """The batch's rows released (in ``order``: its positions of the rows kept)."""
        return self.coded(batch, order)[0]

    def coded(
        self, batch: pd.DataFrame, order: Order | None = None, *, texts: bool = True
    ) -> tuple[pd.DataFrame, dict[str, tuple[np.ndarray, int]]]:
        """``__call__``'s rows, and each generalized quasi-identifier's code per row with how
        many codes its level has (the level's labels, each text once). Without ``texts``, such
        a column is left as its codes, an Arrow dictionary of its labels (``with_texts`` makes
        its texts): a shuffle's spill keeps it coded, and its texts are made once, as written."""
        leaves = [h.encode(batch[q]) for q, h in zip(self.quasi, self.hierarchies, strict=True)]
        entry = self._entry(leaves)
        if (entry < 0).any():  # the first pass counted every row: the input changed since
            raise CheckFailedError(
                "a row of the second reading was not in the first: the "
                "input changed while it was released; run again"
            )
        # the rows of failing classes out first: the other columns filtered once, the
        # quasi-identifiers made only for the rows kept
        keep = ~self.failing[entry]
        whole = bool(keep.all())
        quasi = set(self.quasi)
        others = [c for c in batch.columns if c not in quasi]
        rows: np.ndarray | None = None  # the positions released, in order (None: as kept)
        if order is not None:
            rows = np.flatnonzero(keep)
            rows = rows[order(len(rows))]
            out = take_rows(batch[others], rows)
        else:
            out = batch[others] if whole else batch.loc[keep, others]
        made: dict[str, tuple[np.ndarray, int]] = {}
        for column, h, level, codes in zip(
            self.quasi, self.hierarchies, self.levels, leaves, strict=True
        ):
            # the released texts taken from the level's few labels in Arrow, not made one by
            # one in Python: the same strings, the same dtype
            if not len(codes):  # an empty batch's column, as pandas makes it
                out[column] = pd.Series([], index=out.index, name=column)
                continue
            chosen = codes if whole and rows is None else codes[keep if rows is None else rows]
            kept = h.maps[level][chosen]
            labels = h.labels[level]
            once = len(set(labels)) == len(labels)  # each text one code
            if once and not texts:
                indices = pa.array(kept.astype(np.int32, copy=False))
                coded = pa.DictionaryArray.from_arrays(indices, pa.array(labels, pa.large_string()))
                out[column] = pd.Series(pd.arrays.ArrowExtensionArray(coded), index=out.index)
            else:
                made_texts = pa.array(labels, type=pa.string()).take(kept)
                out[column] = pd.Series(made_texts, index=out.index, name=column, dtype=TEXT)
            if once:
                made[column] = (kept, len(labels))
        return out[list(batch.columns)], made

    def labels(self) -> dict[str, pa.Array]:
        """Each generalized quasi-identifier's labels at its level, where each text is one
        label: the texts ``coded``'s codes index."""
        out = {}
        for column, h, level in zip(self.quasi, self.hierarchies, self.levels, strict=True):
            labels = h.labels[level]
            if len(set(labels)) == len(labels):
                out[column] = pa.array(labels, type=pa.string())
        return out

    def _entry(self, leaves: list[np.ndarray]) -> np.ndarray:
        """Each row's entry of the first pass's table (-1 for a row it did not count): one
        integer per combination of leaf codes, looked up in a hash index of the entries'."""
        if not hasattr(self, "_entries"):
            radix = [h.domain_size for h in self.hierarchies]
            if float(np.prod(np.asarray(radix, dtype=float))) < 2**62:
                self._entries = pd.Index(mixed_radix(list(self.leaves.T), radix)[0])
            else:  # the keys would be re-coded: pandas' MultiIndex instead
                self._entries = pd.MultiIndex.from_arrays(list(self.leaves.T))
        if isinstance(self._entries, pd.MultiIndex):
            return np.asarray(self._entries.get_indexer(pd.MultiIndex.from_arrays(leaves)))
        radix = [h.domain_size for h in self.hierarchies]
        return np.asarray(self._entries.get_indexer(mixed_radix(leaves, radix)[0]))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_entries", None)  # rebuilt where it runs
        return state


#: The chance of a pseudonym collision across batches above which the certificate says it.
COLLISION_NOTED = 1e-6


def _pseudonym_collisions(steps: list[Any], rows: int, whole: bool) -> list[str]:
    """What the checks batch by batch leave open: two values of a hex-pseudonymized column
    in different batches could share a token (each batch is checked exactly, as the table is
    in memory). Said when the chance, at most n^2 / 2^(4 length + 1) for n <= ``rows``
    distinct values, is over ``COLLISION_NOTED``. A table in memory is checked exactly."""
    notes: list[str] = []
    if whole:
        return notes
    for step in steps:
        t = step.transform
        bound = t.collision_bound(rows)
        if bound is not None and bound > COLLISION_NOTED:
            notes.append(
                f"{', '.join(map(str, t.columns_))}: pseudonyms were checked for collisions "
                f"within each batch; across all {rows:,} rows two values share one with a "
                f"chance of at most {bound:.1e} ({t.length} hex characters); length: "
                f"{_safe_length(rows)} makes it negligible, or release --in-memory (checked "
                "exactly)"
            )
    return notes


def _safe_length(rows: int) -> int:
    """The fewest hex characters that bring the collision chance under ``COLLISION_NOTED``."""
    length = 8
    while rows**2 / 2.0 ** (4 * length + 1) > COLLISION_NOTED:
        length += 1
    return length


def _reachable(
    counts: pd.DataFrame, models: list[Any], sensitive: str | None, *, rows_in: int
) -> None:
    """Goals no generalization or suppression can reach, said plainly before searching (on the
    first pass's counts)."""
    rows = int(counts[COUNT].sum())
    distinct = len(sensitive_codes(counts[sensitive])[1]) if sensitive is not None else None
    for model in models:
        why = model.unreachable(rows, distinct if model.needs_sensitive else None)
        if why is not None:
            withheld = (
                f"; the policy's steps withheld {rows_in - rows:,} of {rows_in:,} "
                "records before the search"
                if rows != rows_in
                else ""
            )
            raise CheckFailedError(f"{why}{withheld}")


def _stats(counted: Frequencies | None, quasi: list[str], rows: int) -> ClassStats:
    """``class_stats`` of the rows ``counted`` stands for."""
    if counted is None or not quasi or rows == 0:
        return ClassStats(tuple(quasi), rows, 1 if rows else 0, rows, 0, float(rows))
    klass, found = class_sizes(counted.counts, quasi)
    sizes = np.bincount(klass, weights=counted.counts[COUNT], minlength=len(found))
    sizes = sizes.astype(np.int64)
    return ClassStats(
        tuple(quasi),
        rows,
        len(sizes),
        int(sizes.min()),
        int((sizes == 1).sum()),
        float(rows / len(sizes)),
    )


def merge_tallies(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two runs' tallies (``ColumnTransform.tallies``) added: numbers summed, ``counts_``
    dictionaries summed key by key."""
    total = dict(first)
    for name, value in second.items():
        if isinstance(value, dict):
            merged = dict(total.get(name) or {})
            for key, n in value.items():
                merged[key] = merged.get(key, 0) + n
            total[name] = dict(sorted(merged.items()))
        else:
            total[name] = total.get(name, 0) + value
    return total
