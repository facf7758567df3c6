"""``anonymize_stream``: a release of a table larger than memory, read in batches (the README's
"Tables larger than memory": the rows are touched twice).

1. The first rows are the sample the policy is checked against and every column's role decided
   on (the scan's, where the policy gives none); the policy's steps are fitted on it, and a step
   that needs every row at once (``ColumnTransform.batchwise``) is refused in one line.
2. First pass: each batch through the steps; the released quasi-identifiers' (and sensitive
   value's) distinct combinations counted (``veil.frequency.Frequencies``), and the input's
   classes and fingerprint. The search runs on those counts (``CodedFrequencies.from_counts``),
   exactly as it runs on a table in memory.
3. Second pass: each batch through the steps again, generalized to the levels found, the
   records of failing classes withheld; unless the policy keeps the order, every row goes to a
   random one of as many buckets as batches (temporary files beside the output), and a third
   pass writes each bucket in a random order: an external shuffle, since the input's order is
   information. Each written batch is hashed (``veil.io.ContentHash``) and its classes counted.
4. The goals are measured again from the counts of what was written (``verify_counts``); only
   then may the caller move the file into place.

Memory: the counts (one row per distinct combination), the sample, and a batch or a bucket at
a time; never the table.
"""

from __future__ import annotations

import hashlib
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

from veil._html import Shown
from veil.exceptions import CheckFailedError, OutputError, ParameterError, PolicyError, VeilError
from veil.frequency import COUNT, CodedFrequencies, Frequencies, class_sizes, sensitive_codes
from veil.hierarchy import Hierarchy
from veil.io import BatchWriter, ContentHash, TableStream, fold_batches
from veil.policy import Policy
from veil.privacy._anonymize import (
    Plan,
    _follow,
    _mask_hides,
    certified,
    empty_victories,
    plan_release,
    release_certificate,
    search_record,
    search_setup,
    withheld_everything,
)
from veil.privacy._anonymize import searched as searched_node
from veil.privacy._text import leftover_quasi, scrub_quasi, scrub_record
from veil.privacy._verify import verify_counts
from veil.privacy.certificate import Certificate, StepRecord
from veil.privacy.classes import ClassStats
from veil.privacy.lattice import check as check_groups
from veil.progress import Progress, as_progress
from veil.transforms._base import merge_tallies

__all__ = ["DEFAULT_BATCH_ROWS", "SAMPLE_ROWS", "StreamedRelease", "anonymize_stream"]

#: Rows per batch unless told: a few hundred MB of a wide table.
DEFAULT_BATCH_ROWS = 500_000
#: Rows the policy is checked against and the scan decides roles on (the in-memory scan samples
#: 1,000 values per column too, and confirms a pattern on all rows: see ``_confirm``).
SAMPLE_ROWS = 100_000


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
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None,
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
    clock = time.perf_counter()
    if source.kind == "csv":
        report.step(f"typing the columns of {source.paths[0].name} (first reading)")
        source.prepare(batch_rows=batch_rows, progress=report.advance)
        seconds["typing"] = time.perf_counter() - clock
    passes = _FilePasses(source, batch_rows, report, output, fmt, escape_formulas)
    certificate = release_in_passes(
        passes, policy, hierarchies=hierarchies, progress=progress, seconds=seconds
    )
    return StreamedRelease(certificate, seconds, certificate.rows_in)


@dataclass
class Written:
    """What the release pass wrote: its content hash, the counts of its classes, its rows and
    columns, the formula cells it escaped and, in parts, how many files."""

    digest: str
    counts: Frequencies | None
    rows: int
    columns: list[str]
    escaped: int = 0
    parts: int | None = None  # a release of several files: their number


@dataclass
class _Part:
    """What the first pass learns from one batch or partition."""

    rows: int
    hashed: bytes
    before: Frequencies | None
    counts: Frequencies | None


class Passes:
    """Where a release's passes read the table (a file a batch at a time, a cluster's
    partitions): ``fold`` runs a function on every batch and merges the results in order;
    ``release`` applies the release and writes (or holds) it."""

    columns: list[str]
    rows: int

    def sample(self, rows: int) -> pd.DataFrame:
        """The first ``rows`` rows."""
        raise NotImplementedError

    def fold(
        self,
        label: str,
        fn: Callable[[pd.DataFrame, int], Any],
        merge: Callable[[Any, Any], Any],
        start: Any,
    ) -> Any:
        """``merge(...merge(start, fn(batch0, 0)), fn(batch1, rows before it)...)``."""
        raise NotImplementedError

    #: What of a batch the input's fingerprint hashes, in order (a module-level function:
    #: a cluster's workers run it).
    hashed: Callable[[pd.DataFrame], bytes]
    released: Written | None = None

    def release(
        self,
        produce: Callable[[pd.DataFrame], tuple[pd.DataFrame, list[Any]]],
        measured: list[str],
        seed: int | bool | None,
        columns: list[str],
    ) -> tuple[Written, list[list[Any]]]:
        """Apply ``produce`` to every batch (it returns the released rows and the steps'
        tallies), shuffled unless ``seed`` is False; hash, count and write what it released.
        ``columns``: the release's columns if no row is left."""
        raise NotImplementedError


def release_in_passes(
    passes: Passes,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
    seconds: dict[str, float] | None = None,
) -> Certificate:
    """The release of a table read in passes (see the module's note), certified and verified
    from what was written; raises as ``anonymize`` does."""
    report = as_progress(progress)
    seconds = {} if seconds is None else seconds
    sample = passes.sample(min(SAMPLE_ROWS, max(passes.rows, 1)))
    plan = plan_release(sample, policy, hierarchies=hierarchies, progress=progress)
    privacy = plan.policy.privacy
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
    steps, quasi, sensitive = _fit_steps(plan, sample)
    searching = privacy is not None and bool(quasi)
    for i, step in enumerate(steps):  # rare combinations: counted over every row first
        if step.transform.counts_whole_table():
            clock = time.perf_counter()
            combination = step.transform.columns_
            before_it = steps[:i]
            whole = passes.fold(
                f"counting the combinations policy {step.where} withholds when rare (a pass of "
                "its own)",
                _CountAfter(before_it, combination),
                _merged,
                None,
            )
            step.transform.use_counts(whole.counts, COUNT)
            seconds[f"counting {step.where}"] = time.perf_counter() - clock

    # first pass: the counts the search needs, the input's classes and fingerprint
    clock = time.perf_counter()
    wanted = [*quasi, *sensitive[:1]] if searching else []
    judged = [d.column for d in plan.decisions if d.by == "scan" and d.role != "identifier"]
    # with no step, the input's classes are the search's counts without the sensitive value:
    # one group-by per batch instead of two
    derived = searching and not steps and quasi == plan.quasi
    summarize = _Summarize(
        passes.hashed, judged, [] if derived else plan.quasi, steps if searching else None, wanted
    )
    first = passes.fold(
        "counting the quasi-identifiers' combinations (first pass)", summarize, _summed, _Summary()
    )
    rows_in, counted, before_counts = first.rows, first.counts, first.before
    if derived and counted is not None:
        before_counts = counted.project(quasi)
    seconds["first pass"] = time.perf_counter() - clock

    search_info: dict[str, Any] | None = None
    records = [StepRecord(s.name, s.where, s.transform.describe(), 0, 0) for s in steps]
    models: list[Any] = []
    apply: Callable[[pd.DataFrame], pd.DataFrame] = _unchanged
    if searching and rows_in and (counted is None or not int(counted.counts[COUNT].sum())):
        raise withheld_everything(_leaving_none(steps))
    if searching:
        assert counted is not None
        assert privacy is not None
        clock = time.perf_counter()
        report.step(f"searching generalizations of {', '.join(quasi)}")
        counts = counted.counts
        used, models, searched, target = search_setup(
            plan, counts, quasi, sensitive, weights=counts[COUNT].to_numpy()
        )
        _reachable(counts, searched, target)
        table = CodedFrequencies.from_counts(counts, quasi, used, sensitive=target, count=COUNT)
        result = searched_node(table, searched, privacy, quasi, progress)
        levels = result.levels
        assert levels is not None  # searched raises otherwise
        evaluation = check_groups(table.roll_up(table.bottom, levels), searched, table.rows)
        failing = evaluation.failing[table.entry_classes(levels)]
        suppressed = int(table.bottom.sizes[failing].sum())
        apply = _Generalize(quasi, used, levels, table.bottom.leaves, failing)
        search_info, record = search_record(
            result, privacy, quasi, searched, suppressed, table.rows - suppressed, 0
        )
        search_info["rows_in"] = table.rows
        records.append(record)
        seconds["search"] = time.perf_counter() - clock

    # second pass (and a shuffle): apply, withhold, write, hash, count
    clock = time.perf_counter()
    measured = [*quasi, *sensitive[:1]] if quasi else []
    produce = _Produce(steps, apply, _identifiers(plan), quasi)
    empty = list(_through(steps, sample.head(0)).columns)
    written, tallies = passes.release(
        produce, measured, False if plan.policy.keep_order else plan.policy.random_state, empty
    )
    seconds["second pass"] = time.perf_counter() - clock
    records = _records(records, steps, tallies, len(written.columns))

    content = written.digest
    release_counts = written.counts
    if release_counts is None:  # nothing measured (no quasi-identifier) or no row: the rows
        columns_of: dict[str, list[Any]] = (
            {c: [] for c in measured} if measured else {COUNT: [written.rows]}
        )
        release_counts = Frequencies(tuple(measured), None, pd.DataFrame({COUNT: [], **columns_of}))
    before = _stats(before_counts, plan.quasi, rows_in)
    after = _stats(release_counts, quasi, written.rows)
    distinct_in = before_counts.counts if before_counts is not None else sample.head(0)
    warnings = empty_victories(
        distinct_in, release_counts.counts, quasi, search_info, rows_in, rows_out=written.rows
    )
    warnings += _pseudonym_collisions(steps, rows_in)
    certificate = release_certificate(
        plan,
        content,
        models if searching else None,
        source_fingerprint=first.fingerprint(passes.columns),
        rows_in=rows_in,
        rows_out=written.rows,
        columns_in=tuple(map(str, passes.columns)),
        columns_out=tuple(map(str, written.columns)),
        steps=tuple(records),
        quasi_identifiers=tuple(quasi),
        sensitive=tuple(sensitive),
        before=before,
        after=after,
        search=search_info,
        warnings=tuple(warnings),
        escaped_cells=written.escaped,
        release_parts=written.parts,
    )
    report.step("verifying the release against its certificate (from what was written)")
    verification = verify_counts(
        release_counts.counts, certificate.to_dict(), digest=content, count=COUNT
    )
    certificate = certified(certificate, verification, privacy is not None, quasi)
    passes.released = written
    return certificate


@dataclass
class _CountAfter:
    """A batch's combinations of ``columns`` after ``steps`` (picklable: workers run it)."""

    steps: list[Any]
    columns: list[str]

    def __call__(self, batch: pd.DataFrame, _first_row: int) -> Frequencies:
        return Frequencies.of(_through(self.steps, batch), self.columns)


def row_hashes(batch: pd.DataFrame) -> bytes:
    """Each row's hash, in order: what ``veil.io.fingerprint`` hashes of a whole table."""
    return pd.util.hash_pandas_object(batch, index=False).to_numpy().tobytes()


def _unchanged(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def _merged(total: Frequencies | None, part: Frequencies | None) -> Frequencies | None:
    if part is None:
        return total
    return part if total is None else total.merge(part)


@dataclass
class _Summary:
    """The first pass so far: rows, the fingerprint's hash, the input's and the search's
    counts."""

    rows: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    before: Frequencies | None = None
    counts: Frequencies | None = None

    def fingerprint(self, columns: list[str]) -> str:
        digest = self.digest.copy()
        digest.update("\x1f".join(map(str, columns)).encode())
        return str(digest.hexdigest())


def _summed(total: _Summary, part: _Part) -> _Summary:
    total.rows += part.rows
    total.digest.update(part.hashed)
    total.before = _merged(total.before, part.before)
    total.counts = _merged(total.counts, part.counts)
    return total


@dataclass
class _Summarize:
    """The first pass on one batch (a picklable function: a cluster's workers run it)."""

    hashed: Callable[[pd.DataFrame], bytes]
    judged: list[str]
    quasi: list[str]
    steps: list[Any] | None
    wanted: list[str]

    def __call__(self, batch: pd.DataFrame, first_row: int) -> _Part:
        _confirm(batch, self.judged, first_row)
        before = Frequencies.of(batch, self.quasi) if self.quasi else None
        counts = None
        if self.steps is not None:
            counts = Frequencies.of(_through(self.steps, batch), self.wanted)
        return _Part(len(batch), self.hashed(batch), before, counts)


@dataclass
class _Produce:
    """The second pass on one batch: the steps, then the generalization; with what each step
    counted (``tallies``) and the rows left after each."""

    steps: list[Any]
    apply: Callable[[pd.DataFrame], pd.DataFrame]
    identifiers: set[str]
    quasi: list[str]

    def __call__(self, batch: pd.DataFrame) -> tuple[pd.DataFrame, list[Any]]:
        tallies: list[Any] = []
        if not batch.index.is_unique:  # a cluster's partitions read together (the sample):
            batch = batch.reset_index(drop=True)  # rows paired by position, as written
        original = batch
        for step in self.steps:
            batch = step.transform.transform(batch)
            tallies.append((step.transform.tallies(), len(batch)))
            _mask_hides(step, self.identifiers)
        out = self.apply(batch)
        # the generalized quasi-identifiers' values, out of the free text too (row by row)
        out, replaced = scrub_quasi(original, out, self.quasi)
        leftover_quasi(original, out, self.quasi)  # what the replacement missed: refused
        tallies.append((replaced, len(out)))
        return out, tallies


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


def _fit_steps(plan: Plan, sample: pd.DataFrame) -> tuple[list[Any], list[str], list[str]]:
    """The policy's steps fitted on the sample (each refused if it cannot run batch by batch),
    and the quasi-identifiers and sensitive columns they leave."""
    quasi, sensitive = list(plan.quasi), list(plan.sensitive)
    identifiers = _identifiers(plan)
    frame = sample
    steps = list(plan.policy.planned_steps())
    for step in steps:
        counted = step.transform.counts_whole_table()  # given the table's counts later
        why = None if counted else step.transform.batchwise()
        if why is not None:
            raise PolicyError(
                f"policy {step.where} ({step.name}) cannot run on a table read in "
                f"batches: {why}; or run --in-memory (the table must fit in "
                "memory)"
            )
        try:
            frame = step.transform.fit_transform(frame)
        except VeilError as err:
            if isinstance(err, CheckFailedError):
                raise
            raise PolicyError(f"policy {step.where} ({step.name}): {err}") from err
        _mask_hides(step, identifiers)
        quasi = _follow(step.transform, quasi, masked=True)
        sensitive = _follow(step.transform, sensitive)
    return steps, quasi, sensitive


def _identifiers(plan: Plan) -> set[str]:
    return {d.column for d in plan.decisions if d.role == "identifier"}


def _through(steps: list[Any], batch: pd.DataFrame) -> pd.DataFrame:
    for step in steps:
        batch = step.transform.transform(batch)
    return batch


def _confirm(batch: pd.DataFrame, columns: list[str], first_row: int) -> None:
    """Fail closed: a column the scan let through on the first rows (as harmless, a
    quasi-identifier or sensitive) must not hold direct identifiers further down. Each batch's
    cells of those columns are scanned again (the scan's sample of each column, its pattern
    confirmed on every cell of the batch)."""
    if not columns:
        return
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
                f"show; give {finding.name} its own steps in the policy (drop, pseudonymize, "
                "mask or redact)"
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

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        if not hasattr(self, "_entries"):
            self._entries = pd.MultiIndex.from_arrays(list(self.leaves.T))
        leaves = [h.encode(batch[q]) for q, h in zip(self.quasi, self.hierarchies, strict=True)]
        entry = self._entries.get_indexer(pd.MultiIndex.from_arrays(leaves))
        if (entry < 0).any():  # the first pass counted every row: the input changed since
            raise CheckFailedError(
                "a row of the second reading was not in the first: the "
                "input changed while it was released; run again"
            )
        out = batch.copy(deep=False)
        for column, h, level, codes in zip(
            self.quasi, self.hierarchies, self.levels, leaves, strict=True
        ):
            labels = np.asarray(h.labels[level], dtype=object)
            out[column] = pd.Series(
                labels[h.maps[level][codes]].tolist(), index=batch.index, name=column
            )
        return out.loc[~self.failing[entry]]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_entries", None)  # rebuilt where it runs
        return state


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
        self.rows = int(source.rows or 0)
        self.hashed = row_hashes

    def sample(self, rows: int) -> pd.DataFrame:
        return self.source.head(rows)

    def fold(
        self,
        label: str,
        fn: Callable[[pd.DataFrame, int], Any],
        merge: Callable[[Any, Any], Any],
        start: Any,
    ) -> Any:
        return fold_batches(self.source, self.batch_rows, self.report, label, fn, merge, start)

    def release(
        self,
        produce: Callable[[pd.DataFrame], tuple[pd.DataFrame, list[Any]]],
        measured: list[str],
        seed: int | bool | None,
        columns: list[str],
    ) -> tuple[Written, list[list[Any]]]:
        self.report.step("applying the release (second pass)")
        self.report.expect(self.rows)
        writer = BatchWriter(self.output, self.fmt, formats=self.source.formats, escape=self.escape)
        tallies: list[list[Any]] = []

        def produced() -> Iterator[pd.DataFrame]:
            for batch in self.source.batches(self.batch_rows):
                out, counted = produce(batch)
                tallies.append(counted)
                self.report.advance(len(batch))
                yield out

        digest: ContentHash | None = None
        counts: Frequencies | None = None
        for batch in self._shuffled(produced(), seed):
            batch = writer.prepared(batch)
            if digest is None:
                columns = list(batch.columns)
                digest = ContentHash(columns)
            digest.update(batch)
            writer.write(batch)
            if measured:
                counts = _merged(counts, Frequencies.of(batch, measured))
        if digest is None:  # every row withheld
            digest = ContentHash(columns)
        writer.close(columns)
        written = Written(digest.hexdigest(), counts, writer.rows, columns, writer.escaped)
        return written, tallies

    def _shuffled(
        self, batches: Iterator[pd.DataFrame], seed: int | bool | None
    ) -> Iterator[pd.DataFrame]:
        """``batches`` in a random order of rows (an external shuffle through buckets on disk,
        each about a batch), or as they come when ``seed`` is False."""
        if seed is False:
            yield from batches
            return
        rng = np.random.default_rng(seed if isinstance(seed, int) else None)
        buckets = max(1, math.ceil(self.rows / self.batch_rows))
        folder = Path(
            tempfile.mkdtemp(prefix=f".{self.output.name}.veil-shuffle-", dir=self.output.parent)
        )
        try:
            handles = [open(folder / f"{b}.pickle", "wb") for b in range(buckets)]  # noqa: SIM115
            try:
                for out in batches:
                    chosen = rng.integers(0, buckets, len(out))
                    for b in np.unique(chosen):
                        pickle.dump(
                            out.iloc[np.flatnonzero(chosen == b)],
                            handles[b],
                            protocol=pickle.HIGHEST_PROTOCOL,
                        )
            finally:
                for handle in handles:
                    handle.close()
            self.report.step("writing the release in a random order (third pass)")
            for b in range(buckets):
                parts = list(_pickled(folder / f"{b}.pickle"))
                (folder / f"{b}.pickle").unlink()
                if not parts:
                    continue
                bucket = pd.concat(parts) if len(parts) > 1 else parts[0]
                yield bucket.iloc[rng.permutation(len(bucket))]
        finally:
            shutil.rmtree(folder, ignore_errors=True)


#: The chance of a pseudonym collision across batches above which the certificate says it.
COLLISION_NOTED = 1e-6


def _pseudonym_collisions(steps: list[Any], rows: int) -> list[str]:
    """What the checks batch by batch leave open: two values of a hex-pseudonymized column
    in different batches could share a token (each batch is checked exactly, as the table is
    in memory). Said when the chance, at most n^2 / 2^(4 length + 1) for n <= ``rows``
    distinct values, is over ``COLLISION_NOTED``."""
    notes = []
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


def _leaving_none(steps: list[Any]) -> str | None:
    """The first step that withholds every row: a ``suppress_rows`` whose combinations, as
    counted over the whole table, are all rare."""
    for step in steps:
        if step.transform.withholds_every_row():
            return str(step.where)
    return None


def _pickled(path: Path) -> Iterator[pd.DataFrame]:
    """The frames ``_released_batches`` appended to its own private bucket file."""
    with open(path, "rb") as handle:
        while True:
            try:
                yield pickle.load(handle)  # veil's own temporary file
            except EOFError:
                return


def _reachable(counts: pd.DataFrame, models: list[Any], sensitive: str | None) -> None:
    """Goals no generalization or suppression can reach (``anonymize``'s check, on counts)."""
    rows = int(counts[COUNT].sum())
    distinct = len(sensitive_codes(counts[sensitive])[1]) if sensitive is not None else None
    for model in models:
        why = model.unreachable(rows, distinct if model.needs_sensitive else None)
        if why is not None:
            raise CheckFailedError(why)


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
