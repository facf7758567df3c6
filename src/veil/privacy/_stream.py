"""``anonymize_stream``: a release of a table larger than memory, read in batches (DESIGN.md,
"the engine": the rows are touched twice).

1. The first rows are the sample the policy is checked against and every column's role decided
   on (the scan's, where the policy gives none); the policy's steps are fitted on it, and a step
   that needs every row at once (``ColumnTransform.batchwise``) is refused in one line.
2. First pass: each batch through the steps; the released quasi-identifiers' (and sensitive
   value's) distinct combinations counted (``veil.frequency.Frequencies``), and the input's
   classes and fingerprint. The search runs on those counts (``FrequencyTable.from_counts``),
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

import math
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil._version import __version__
from veil.exceptions import CheckFailedError, PolicyError, VeilError
from veil.frequency import COUNT, Frequencies, class_sizes, sensitive_codes
from veil.hierarchy import Hierarchy
from veil.io import ContentHash
from veil.io._batches import BatchWriter, RowFingerprint, TableStream
from veil.policy import Policy
from veil.privacy._anonymize import (
    Plan,
    _follow,
    _mask_hides,
    empty_victories,
    plan_release,
    search_setup,
    sensitive_tree,
)
from veil.privacy._verify import verify_counts
from veil.privacy.certificate import Certificate, StepRecord
from veil.privacy.lattice import FrequencyTable
from veil.privacy.lattice import check as check_groups
from veil.privacy.metrics import make_metric
from veil.privacy.models import ClassStats
from veil.privacy.search import search
from veil.progress import Progress, as_progress
from veil.transforms import SuppressRows

__all__ = ["DEFAULT_BATCH_ROWS", "SAMPLE_ROWS", "StreamedRelease", "anonymize_stream"]

#: Rows per batch unless told: a few hundred MB of a wide table.
DEFAULT_BATCH_ROWS = 500_000
#: Rows the policy is checked against and the scan decides roles on (the in-memory scan samples
#: 1,000 values per column too, and confirms a pattern on all rows: see ``_confirm``).
SAMPLE_ROWS = 100_000


@dataclass
class StreamedRelease:
    """What ``anonymize_stream`` wrote: its certificate and how long each pass took."""

    certificate: Certificate
    seconds: dict[str, float] = field(default_factory=dict)
    rows: int = 0


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
    if batch_rows < 1:
        raise PolicyError(f"--batch-rows must be at least 1, got {batch_rows}")
    report = as_progress(progress)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    if source.kind == "csv":
        report.step(f"typing the columns of {source.paths[0].name} (first reading)")
        source.prepare(batch_rows=batch_rows, progress=report.advance)
        seconds["typing"] = time.perf_counter() - clock
    total = int(source.rows or 0)
    sample = source.head(min(SAMPLE_ROWS, max(total, 1)))
    plan = plan_release(sample, policy, hierarchies=hierarchies, progress=progress)
    privacy = plan.policy.privacy
    if privacy is not None and privacy.method == "mondrian":
        raise PolicyError("privacy.method mondrian partitions the whole table in memory; with a "
                          "table read in batches use method optimal or heuristic, or run "
                          "--in-memory")  # fmt: skip
    if privacy is not None and privacy.person_id is not None:
        raise PolicyError("privacy.person_id counts people per class over the whole table; run "
                          "--in-memory, or drop person_id")  # fmt: skip
    steps, quasi, sensitive = _fit_steps(plan, sample)
    searching = privacy is not None and bool(quasi)
    for i, step in enumerate(steps):  # rare combinations: counted over every row first
        if isinstance(step.transform, SuppressRows) and step.transform.rare is not None:
            clock = time.perf_counter()
            report.step(f"counting the combinations policy {step.where} withholds when rare "
                        "(a pass of its own)")  # fmt: skip
            report.expect(total)
            combination = step.transform.columns_
            whole: Frequencies | None = None
            for batch in source.batches(batch_rows):
                part = Frequencies.of(_through(steps[:i], batch), combination)
                whole = part if whole is None else whole.merge(part)
                report.advance(len(batch))
            assert whole is not None
            step.transform.use_counts(whole.counts, COUNT)
            seconds[f"counting {step.where}"] = time.perf_counter() - clock

    # first pass: the counts the search needs, the input's classes and fingerprint
    clock = time.perf_counter()
    report.step("counting the quasi-identifiers' combinations (first pass)")
    report.expect(total)
    wanted = [*quasi, *sensitive[:1]] if searching else []
    counted: Frequencies | None = None
    before_counts: Frequencies | None = None
    fingerprint = RowFingerprint()
    rows_in = 0
    judged = [d.column for d in plan.decisions if d.by == "scan" and d.role != "identifier"]
    for batch in source.batches(batch_rows):
        _confirm(batch, judged, rows_in)
        fingerprint.update(batch)
        rows_in += len(batch)
        if plan.quasi:
            part = Frequencies.of(batch, plan.quasi)
            before_counts = part if before_counts is None else before_counts.merge(part)
        if searching:
            out = _through(steps, batch)
            part = Frequencies.of(out, wanted)
            counted = part if counted is None else counted.merge(part)
        report.advance(len(batch))
    seconds["first pass"] = time.perf_counter() - clock

    search_info: dict[str, Any] | None = None
    records = [StepRecord(s.name, s.where, s.transform.describe(), 0, 0) for s in steps]
    models: list[Any] = []
    apply: Callable[[pd.DataFrame], pd.DataFrame] = lambda frame: frame  # noqa: E731
    if searching:
        assert counted is not None
        assert privacy is not None
        clock = time.perf_counter()
        report.step(f"searching generalizations of {', '.join(quasi)}")
        counts = counted.counts
        used, models, searched, target = search_setup(plan, counts, quasi, sensitive)
        _reachable(counts, searched, target)
        table = FrequencyTable.from_counts(counts, quasi, used, sensitive=target, count=COUNT)
        result = search(table, searched, make_metric(privacy.metric),
                        max_suppression=privacy.max_suppression, method=privacy.method,
                        time_limit=privacy.time_limit, progress=progress)  # fmt: skip
        if result.levels is None:
            raise CheckFailedError(
                f"no generalization of {quasi} meets {', '.join(m.name for m in searched)} "
                f"with at most {privacy.max_suppression:.1%} of records suppressed; allow more "
                "suppression, coarser hierarchies, or weaker goals"
            )
        levels = result.levels
        evaluation = check_groups(table.roll_up(table.bottom, levels), searched, table.rows)
        failing = evaluation.failing[table.entry_classes(levels)]
        entries = pd.MultiIndex.from_arrays(list(table.bottom.leaves.T))
        suppressed = int(table.bottom.sizes[failing].sum())
        apply = _generalizer(quasi, used, levels, entries, failing)
        search_info = {
            "levels": dict(zip(quasi, levels, strict=True)), "loss": result.loss,
            "metric": privacy.metric, "suppressed": suppressed, "method": result.method,
            "optimal": result.optimal, "evaluated": result.evaluated, "nodes": result.nodes,
            "seconds": round(result.seconds, 4), "models": [m.name for m in searched],
            "rows_in": table.rows,
        }  # fmt: skip
        description = (
            f"Search({'; '.join(m.name for m in searched)}: levels {list(levels)}, "
            f"{privacy.metric} {result.loss:.6g}, {suppressed} suppressed)"
        )
        records.append(StepRecord("search", "privacy", description, table.rows - suppressed, 0))
        seconds["search"] = time.perf_counter() - clock

    # second pass (and the shuffle's third): apply, withhold, write, hash, count
    clock = time.perf_counter()
    report.step("applying the release (second pass)")
    report.expect(total)
    writer = BatchWriter(output, fmt, formats=source.formats, escape=escape_formulas)
    released = _released_batches(source, steps, apply, batch_rows, records, report,
                                 False if plan.policy.keep_order else plan.policy.random_state,
                                 output, _identifiers(plan))  # fmt: skip
    digest: ContentHash | None = None
    columns: list[str] = []
    release_counts: Frequencies | None = None
    measured = [*quasi, *sensitive[:1]] if quasi else []
    for batch in released:
        batch = writer.prepared(batch)
        if digest is None:
            columns = list(batch.columns)
            digest = ContentHash(columns)
        digest.update(batch)
        writer.write(batch)
        if measured:
            part = Frequencies.of(batch, measured)
            release_counts = part if release_counts is None else release_counts.merge(part)
    if digest is None:  # every row withheld: the columns as the steps leave them
        columns = list(_through(steps, sample.head(0)).columns)
        digest = ContentHash(columns)
    writer.close(columns)
    seconds["second pass"] = time.perf_counter() - clock

    content = digest.hexdigest()
    if release_counts is None:
        release_counts = Frequencies(
            tuple(measured), None, pd.DataFrame({**{c: [] for c in measured}, COUNT: []})
        )
    before = _stats(before_counts, plan.quasi, rows_in)
    after = _stats(release_counts, quasi, writer.rows)
    distinct_in = before_counts.counts if before_counts is not None else sample.head(0)
    warnings = empty_victories(distinct_in, release_counts.counts, quasi, search_info, rows_in,
                               rows_out=writer.rows)  # fmt: skip
    certificate = Certificate(
        veil_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        source_fingerprint=fingerprint.hexdigest(),
        release_fingerprint=content,
        policy_sha256=plan.policy.fingerprint(),
        rows_in=rows_in,
        rows_out=writer.rows,
        columns_in=tuple(map(str, source.columns)),
        columns_out=tuple(map(str, columns)),
        roles={d.column: d.role for d in plan.decisions},
        steps=tuple(records),
        quasi_identifiers=tuple(quasi),
        sensitive=tuple(sensitive),
        before=before,
        after=after,
        privacy=None if privacy is None else privacy.model_dump(exclude_unset=True),
        search=search_info,
        decisions=plan.decisions,
        warnings=tuple(warnings),
        release_sha256=content,
        escaped_cells=writer.escaped,
        sensitive_hierarchy=sensitive_tree(models) if searching else None,
    )
    report.step("verifying the release against its certificate (from what was written)")
    verification = verify_counts(release_counts.counts, certificate.to_dict(), digest=content,
                                 count=COUNT)  # fmt: skip
    checks = verification.goals() if privacy is not None else {}
    certificate = replace(certificate, checks=checks)
    failed = [goal for goal, met in checks.items() if not met]
    if failed:
        raise CheckFailedError(
            f"the release does not meet {', '.join(failed)} on {quasi} (k = {after.k}, "
            f"{after.unique_rows} unique records); allow the search more suppression "
            "(privacy.max_suppression), coarser hierarchies, or weaker goals"
        )
    if not verification.ok:
        broken = [f"{c} ({d})" for c, ok, d in verification.claims if not ok]
        raise CheckFailedError(f"the release failed its own verification: {'; '.join(broken)}")
    return StreamedRelease(certificate, seconds, rows_in)


def _fit_steps(plan: Plan, sample: pd.DataFrame) -> tuple[list[Any], list[str], list[str]]:
    """The policy's steps fitted on the sample (each refused if it cannot run batch by batch),
    and the quasi-identifiers and sensitive columns they leave."""
    quasi, sensitive = list(plan.quasi), list(plan.sensitive)
    identifiers = _identifiers(plan)
    frame = sample
    steps = list(plan.policy.planned_steps())
    for step in steps:
        counted = isinstance(step.transform, SuppressRows)  # given the table's counts later
        why = None if counted else step.transform.batchwise()
        if why is not None:
            raise PolicyError(f"policy {step.where} ({step.name}) cannot run on a table read in "
                              f"batches: {why}; or run --in-memory (the table must fit in "
                              "memory)")  # fmt: skip
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
    from veil.scan import scan
    from veil.scan.text import label
    from veil.schema import ColumnRole

    for finding in scan(batch[columns]).columns:
        if finding.role is ColumnRole.IDENTIFIER and finding.entity is not None:
            raise PolicyError(
                f"column {finding.name!r}: rows {first_row + 1:,} to {first_row + len(batch):,} "
                f"hold {label(finding.entity)}, which the first {SAMPLE_ROWS:,} rows did not "
                f"show; give {finding.name} its own steps in the policy (drop, pseudonymize, "
                "mask or redact)"
            )


def _generalizer(quasi: list[str], hierarchies: list[Hierarchy], levels: tuple[int, ...],
                 entries: pd.MultiIndex, failing: np.ndarray
                 ) -> Callable[[pd.DataFrame], pd.DataFrame]:  # fmt: skip
    """A batch's quasi-identifiers generalized to ``levels``, the rows of failing classes out."""

    def apply(batch: pd.DataFrame) -> pd.DataFrame:
        leaves = [h.encode(batch[q]) for q, h in zip(quasi, hierarchies, strict=True)]
        entry = entries.get_indexer(pd.MultiIndex.from_arrays(leaves))
        if (entry < 0).any():  # the first pass counted every row: the input changed since
            raise CheckFailedError(
                "a row of the second reading was not in the first: the "
                "input changed while it was released; run again"
            )
        out = batch.copy(deep=False)
        for column, h, level, codes in zip(quasi, hierarchies, levels, leaves, strict=True):
            labels = np.asarray(h.labels[level], dtype=object)
            out[column] = pd.Series(labels[h.maps[level][codes]].tolist(), index=batch.index,
                                    name=column)  # fmt: skip
        return out.loc[~failing[entry]]

    return apply


def _released_batches(source: TableStream, steps: list[Any],
                      apply: Callable[[pd.DataFrame], pd.DataFrame], batch_rows: int,
                      records: list[StepRecord], report: Progress, shuffle: int | bool | None,
                      output: Path, identifiers: set[str]) -> Iterator[pd.DataFrame]:  # fmt: skip
    """The release's rows a batch at a time: in the input's order when ``shuffle`` is False,
    else through random buckets (``shuffle``: the seed, None for a fresh one)."""
    rows_after = [0] * len(records)

    tallies: list[dict[str, Any]] = [{} for _ in steps]

    def produced() -> Iterator[pd.DataFrame]:
        for batch in source.batches(batch_rows):
            for i, step in enumerate(steps):
                batch = step.transform.transform(batch)
                tallies[i] = step.transform.add_tallies(tallies[i])  # every batch's counts
                _mask_hides(step, identifiers)
                rows_after[i] += len(batch)
            out = apply(batch)
            if len(records) > len(steps):
                rows_after[-1] += len(out)
            report.advance(len(batch))
            yield out

    def finish(columns: int) -> None:
        for i, record in enumerate(records):
            if i < len(steps):  # what the step did, counted over every batch
                transform = steps[i].transform
                records[i] = StepRecord(record.name, record.where, transform.describe(),
                                        rows_after[i], columns,
                                        counts=getattr(transform, "counts_", None))  # fmt: skip
            else:
                records[i] = StepRecord(record.name, record.where, record.description,
                                        rows_after[i], columns)  # fmt: skip

    if shuffle is False:
        width = 0
        for out in produced():
            width = out.shape[1]
            yield out
        finish(width)
        return
    rng = np.random.default_rng(shuffle if isinstance(shuffle, int) else None)
    buckets = max(1, math.ceil(int(source.rows or 0) / batch_rows))
    folder = Path(tempfile.mkdtemp(prefix=f".{output.name}.veil-shuffle-", dir=output.parent))
    try:
        handles = [open(folder / f"{b}.pickle", "wb") for b in range(buckets)]  # noqa: SIM115
        width = 0
        try:
            for out in produced():
                width = out.shape[1]
                if buckets == 1:
                    pickle.dump(out, handles[0], protocol=pickle.HIGHEST_PROTOCOL)
                    continue
                chosen = rng.integers(0, buckets, len(out))
                for b in np.unique(chosen):
                    pickle.dump(out.iloc[np.flatnonzero(chosen == b)], handles[b],
                                protocol=pickle.HIGHEST_PROTOCOL)  # fmt: skip
        finally:
            for handle in handles:
                handle.close()
        finish(width)
        report.step("writing the release in a random order (third pass)")
        for b in range(buckets):
            parts = list(_pickled(folder / f"{b}.pickle"))
            if not parts:
                continue
            bucket = pd.concat(parts) if len(parts) > 1 else parts[0]
            (folder / f"{b}.pickle").unlink()
            yield bucket.iloc[rng.permutation(len(bucket))]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
    return ClassStats(tuple(quasi), rows, len(sizes), int(sizes.min()), int((sizes == 1).sum()),
                      float(rows / len(sizes)))  # fmt: skip
