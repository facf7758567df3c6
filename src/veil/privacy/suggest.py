"""From a scan to a starting policy that releases: ScanResult ──suggest──▶ Policy.

The policy states the goal (k = 5, distinct l = 2 for a sensitive column where it can be
reached, at most 5% of the records withheld) and leaves the quasi-identifiers to the search,
over the hierarchies veil builds for each (``veil.scan.hierarchies``: places through the
gazetteers, dates, intervals, ordered and rare categories), as ARX's users set a goal and let
its search choose levels. The search runs before the policy is written, and what it achieved
is written beside the goal: records kept, classes, each quasi-identifier's level.

Identifiers get their treatment (``veil.suggest.suggested_steps``): keys and national IDs
pseudonymized with their shape kept, contact details and names dropped, row numbers dropped,
free text redacted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import yaml

from veil.exceptions import CheckFailedError, ParameterError, PolicyError
from veil.frequency import COUNT, CodedColumns, CodedFrequencies, Frequencies
from veil.hierarchy import Hierarchy
from veil.policy import Policy, ReadSettings
from veil.privacy.lattice import MAX_EXHAUSTIVE
from veil.scan import ScanResult
from veil.scan.hierarchies import build_hierarchy
from veil.schema import ColumnRole
from veil.suggest import DEFAULT_K, suggested_steps

__all__ = [
    "DEFAULT_L",
    "DEFAULT_MAX_SUPPRESSION",
    "suggest_policy",
    "suggest_policy_yaml",
]

#: The suggested goal: k = 5 (``DEFAULT_K``), distinct l = 2 for the first sensitive column
#: where it can be reached, at most 5% of the records withheld by the search.
DEFAULT_L = 2
DEFAULT_MAX_SUPPRESSION = 0.05
#: The search may keep a quasi-identifier from its top level (one value for everyone) this
#: many times before the suggestion accepts a wiped one.
_ROUNDS = 2
#: The time each heuristic search of the suggestion may take (a lattice too large to search
#: whole); written into the policy, so the release searches as long.
HEURISTIC_SECONDS = 2.0


@dataclass
class SuggestedGoal:
    """What a goal achieved on the table: the goal, the release's figures, or why it failed."""

    goal: dict[str, Any]
    rows_in: int = 0
    rows_out: int = 0
    classes: int = 0
    k: int = 0
    levels: dict[str, int] | None = None
    heights: dict[str, int] = field(default_factory=dict)
    distinct: dict[str, tuple[int, int]] = field(default_factory=dict)  # before, after
    wiped: list[str] = field(default_factory=list)
    method: str = "optimal"
    failure: str | None = None

    @property
    def kept(self) -> float:
        """The share of the records the release keeps."""
        return self.rows_out / self.rows_in if self.rows_in else 0.0


def _measure(
    data: pd.DataFrame,
    quasi: list[str],
    sensitive: list[str],
    goal: dict[str, Any],
    built: dict[str, Hierarchy] | None = None,
) -> SuggestedGoal:
    """What ``goal`` achieves on ``data``: the search on the counts of the quasi-identifiers'
    combinations (``data`` holding ``COUNT``, with the sensitive column when it is in
    ``sensitive``), or Mondrian's local recoding on the rows, released with ``anonymize``.
    Identifiers' steps change no row, so the records kept and the levels are those of the
    whole release. ``built``: the quasi-identifiers' hierarchies, built once on the counts."""
    from veil.privacy._anonymize import anonymize  # the engine, when a goal is tried

    if COUNT in data.columns:
        return _measure_counts(data, quasi, sensitive, goal, built or _built(data, quasi))
    columns: dict[str, Any] = {q: {"role": "quasi_identifier"} for q in quasi}
    columns.update({s: {"role": "sensitive"} for s in sensitive})
    policy = {"columns": columns, "unlisted": "drop", "keep_order": True, "privacy": goal}
    outcome = SuggestedGoal(goal=goal)
    try:
        release = anonymize(data[[*quasi, *sensitive]], policy)
    except (CheckFailedError, PolicyError) as err:
        outcome.failure = str(err)
        return outcome
    cert = release.certificate
    search = cert.search or {}
    outcome.rows_in, outcome.rows_out = cert.rows_in, cert.rows_out
    outcome.classes, outcome.k = cert.after.classes, cert.after.k
    outcome.method = str(search.get("method", "optimal"))
    outcome.levels = search.get("levels")
    for q in quasi:
        before = int(data[q].nunique(dropna=False))
        after = int(release.data[q].nunique(dropna=False))
        outcome.distinct[q] = (before, after)
        if after <= 1 < before:
            outcome.wiped.append(q)
    return outcome


def _counted(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The distinct combinations of ``columns`` with how many rows hold each (``COUNT``)."""
    return Frequencies.of(data, columns).counts


def _built(counts: pd.DataFrame, quasi: list[str]) -> dict[str, Hierarchy]:
    """The hierarchy the release builds for each quasi-identifier, from the counts."""
    weights = counts[COUNT].to_numpy()
    return {q: build_hierarchy(q, counts[q], weights=weights) for q in quasi}


def _measure_counts(
    counts: pd.DataFrame,
    quasi: list[str],
    sensitive: list[str],
    goal: dict[str, Any],
    built: dict[str, Hierarchy],
) -> SuggestedGoal:
    """``_measure`` on counts (of the table in memory, or those a scan in passes kept): the
    release's search on the same hierarchies, the records kept and classes read from the
    search's classes; as fast as the search, whatever the table's size."""
    from veil.privacy._plan import criteria_for, limited, searched

    outcome = SuggestedGoal(goal=goal)
    privacy = Policy.from_dict({"privacy": goal}).privacy
    assert privacy is not None
    hierarchies = limited([built[q] for q in quasi], quasi, privacy)
    target = sensitive[0] if sensitive and any(m.needs_sensitive for m in privacy.models) else None
    table = CodedFrequencies.from_counts(counts, quasi, hierarchies, sensitive=target, count=COUNT)
    models = criteria_for(privacy, target, {})
    try:
        result = searched(table, models, privacy, quasi, None)
    except CheckFailedError as err:
        outcome.failure = str(err)
        return outcome
    assert result.levels is not None
    assert result.evaluation is not None
    groups, failing = result.evaluation.groups, result.evaluation.failing
    kept = ~failing & (groups.sizes > 0)
    outcome.rows_in = table.rows
    outcome.rows_out = int(groups.sizes[kept].sum())
    outcome.classes = int(kept.sum())
    outcome.k = int(groups.sizes[kept].min()) if kept.any() else 0
    outcome.method = result.method
    outcome.levels = dict(zip(quasi, result.levels, strict=True))
    for i, (q, h, level) in enumerate(zip(quasi, hierarchies, result.levels, strict=True)):
        labels = np.asarray(h.labels[level], dtype=object)[h.maps[level][groups.leaves[kept, i]]]
        before, after = int(counts[q].nunique(dropna=False)), len(set(labels.tolist()))
        outcome.distinct[q] = (before, after)
        if after <= 1 < before:
            outcome.wiped.append(q)
    return outcome


#: what a suggested policy and the scan say when no column is a quasi-identifier
UNMARKED = "no column was found to be a quasi-identifier"


def fit_goal(
    data: pd.DataFrame,
    quasi: list[str],
    sensitive: list[str],
    *,
    k: int,
    l: int | None,  # noqa: E741
    max_suppression: float,
) -> tuple[SuggestedGoal, list[str]]:
    """The goal the suggestion writes and what it achieved, with notes on what was tried:
    k (and l where reachable) by the optimal search; a quasi-identifier the optimum wipes is
    kept below its top level (``max_levels``) while the goal is still met; where only local
    recoding keeps every quasi-identifier, or no generalization meets the goal, Mondrian.
    ``data``: the rows, or the counts a scan in passes kept (``COUNT``; no sensitive values,
    so no l, and no Mondrian, which needs the rows). The searches run on the counts of the
    combinations, so the suggestion costs a few searches, not a few releases."""
    notes: list[str] = []
    counted = COUNT in data.columns
    rows = None if counted else data
    counts = data if counted else _counted(data, [*quasi, *sensitive[:1]])
    built = _built(counts, quasi)  # once: every search below cuts them at its max_levels
    heights = {q: h.height for q, h in built.items()}
    if counted and sensitive and l is not None:
        notes.append(
            f"distinct l = {l} on {sensitive[0]} is not suggested for a table read in "
            "passes (the scan counts no sensitive values): add it and the release "
            "measures it"
        )
        l = None  # noqa: E741
    goal: dict[str, Any] = {"k": k, "max_suppression": max_suppression}
    if math.prod(heights.values()) > MAX_EXHAUSTIVE:  # the heuristic: bounded, said in the file
        goal["time_limit"] = HEURISTIC_SECONDS
    if sensitive and l is not None:
        goal.update({"l": l, "sensitive": sensitive[:1]})
    outcome = _measure(counts, quasi, sensitive[:1], goal, built)
    if outcome.failure is not None and "l" in goal:
        notes.append(
            f"distinct l = {l} on {sensitive[0]} cannot be reached with at most "
            f"{max_suppression:.0%} withheld ({outcome.failure.split(';')[0]}); the "
            "goal is k alone"
        )
        goal = {key: value for key, value in goal.items() if key not in {"l", "sensitive"}}
        outcome = _measure(counts, quasi, [], goal, built)
    if outcome.failure is None and outcome.wiped:
        goal, outcome = _keep_every_quasi(counts, quasi, goal, outcome, built, notes)
    if outcome.failure is None and outcome.wiped and rows is not None:
        local = _measure(rows, quasi, list(goal.get("sensitive", [])), _mondrian_goal(goal))
        if local.failure is None and not local.wiped and local.kept >= outcome.kept:
            notes.append(
                f"the best full-domain generalization leaves {', '.join(outcome.wiped)} "
                "with one value for everyone; Mondrian's local recoding (each class "
                "generalized on its own) keeps every quasi-identifier"
            )
            goal, outcome = local.goal, local
    if outcome.failure is not None and rows is not None:
        blocker = _blocking(counts, quasi, k, built)
        notes.append(
            f"no generalization meets the goal ({outcome.failure.split(';')[0]}); "
            f"{blocker} blocks it most (with every other quasi-identifier at its "
            "coarsest level short of *, leaving it out releases the most records): "
            "method mondrian (local recoding) is used instead; local_suppression or "
            f"fewer quasi-identifiers (without {blocker}) are the other ways"
        )
        goal = _mondrian_goal({"k": k})
        outcome = _measure(rows, quasi, [], goal)
    outcome.heights = heights
    return outcome, notes


def _blocking(counts: pd.DataFrame, quasi: list[str], k: int, built: dict[str, Hierarchy]) -> str:
    """The quasi-identifier that keeps the most records from a goal of ``k``: with each at
    its coarsest level short of ``*``, the one whose removal leaves the fewest records in
    classes smaller than ``k``."""
    weights = counts[COUNT].to_numpy()
    coarse = pd.DataFrame(index=counts.index)
    for q in quasi:
        h = built[q]
        level = max(h.height - 2, 0)
        coarse[q] = np.asarray(h.labels[level], dtype=object)[h.maps[level][h.encode(counts[q])]]

    def small(columns: list[str]) -> int:
        coded = CodedColumns.of(coarse, columns)
        klass, sizes = coded.class_sizes(range(len(columns)), weights=np.asarray(weights))
        return int(np.asarray(weights)[sizes[klass] < k].sum())

    return min(quasi, key=lambda q: small([c for c in quasi if c != q]) if len(quasi) > 1 else 0)


def _mondrian_goal(goal: dict[str, Any]) -> dict[str, Any]:
    """``goal`` for Mondrian: k and distinct l only, no suppression or level limits."""
    kept: dict[str, Any] = {key: goal[key] for key in ("k", "l", "sensitive") if key in goal}
    return {**kept, "method": "mondrian"}


def _keep_every_quasi(
    data: pd.DataFrame,
    quasi: list[str],
    goal: dict[str, Any],
    outcome: SuggestedGoal,
    built: dict[str, Hierarchy],
    notes: list[str],
) -> tuple[dict[str, Any], SuggestedGoal]:
    """The goal with ``max_levels`` that keeps the quasi-identifiers the optimum wiped (one
    value for everyone) below their top level, if the goal is still met: first every one at
    once, else one wiped column at a time while fewer end up wiped."""
    least = 1 - float(goal.get("max_suppression", 0.0)) - 1e-9
    sensitive = list(goal.get("sensitive", []))

    def attempt(limits: dict[str, int]) -> SuggestedGoal | None:
        tried = _measure(data, quasi, sensitive, {**goal, "max_levels": limits}, built)
        return tried if tried.failure is None and tried.kept >= least else None

    heights = {q: h.height for q, h in built.items()}
    every = {q: heights[q] - 2 for q in quasi if heights[q] >= 2 and data[q].nunique() > 1}
    found = attempt(every)
    if found is not None:
        return found.goal, found
    if sensitive:  # l-diversity is what needs a column wiped: keeping every column wins
        plain = {key: value for key, value in goal.items() if key not in {"l", "sensitive"}}
        found = _measure(data, quasi, [], {**plain, "max_levels": every}, built)
        if found.failure is None and found.kept >= least:
            notes.append(
                f"distinct l = {goal['l']} on {sensitive[0]} would leave "
                f"{', '.join(outcome.wiped)} with one value for everyone: the goal is "
                "k alone, which keeps every quasi-identifier"
            )
            return found.goal, found
    limits: dict[str, int] = {}
    for _ in range(_ROUNDS):
        for q in outcome.wiped:
            limits[q] = heights[q] - 2
        found = attempt(dict(limits))
        if found is None or len(found.wiped) >= len(outcome.wiped):
            break
        goal, outcome = found.goal, found
    if outcome.wiped:
        notes.append(
            f"keeping {', '.join(outcome.wiped)} from one value for everyone misses "
            "the goal: the search generalizes them fully"
        )
    return goal, outcome


def _outcome_lines(outcome: SuggestedGoal, quasi: list[str]) -> list[str]:
    if outcome.failure is not None:
        return [f"#   not met: {outcome.failure}"]
    lines = [
        f"#   {outcome.rows_out:,} of {outcome.rows_in:,} records kept ({outcome.kept:.1%}), "
        f"{outcome.classes:,} classes, the smallest of {outcome.k} records "
        f"({outcome.method} search)",
    ]
    for q in quasi:
        before, after = outcome.distinct.get(q, (0, 0))
        level = (
            ""
            if outcome.levels is None
            else f"level {outcome.levels[q]} of {outcome.heights.get(q, 1) - 1}, "
        )
        lines.append(f"#   {q}: {level}{after:,} distinct values released, {before:,} in the data")
    return lines


def suggest_policy(
    result: ScanResult,
    data: pd.DataFrame | None = None,
    *,
    k: int = DEFAULT_K,
    key_file: str | None = None,
) -> Policy:
    """A validated starting policy for ``data`` from its scan.

    Parameters
    ----------
    result : ScanResult
        The scan of ``data``.
    data : DataFrame, optional
        The table the goal is fitted on (left out: a scan in passes, fitted on the counts it
        kept).
    k : int
        The k the goal starts from.
    key_file : str, optional
        A key file the pseudonyms read (default: the ``VEIL_KEY`` variable).

    Returns
    -------
    Policy
        The starting policy, to edit.
    """
    text = suggest_policy_yaml(result, data, k=k, key_file=key_file)
    return Policy.from_yaml(text, source="suggested policy")


def personal_query(query: str | None) -> str | None:
    """What personal value a SQL ``query`` holds (``a phone number``...), as the text search
    finds one in a note (an e-mail address, a phone number, an ID confirmed or likely), or
    None: a query naming a person (``WHERE phone = '+2547...'``) is not written into the
    policy the scan suggests, which is shared."""
    if not query:
        return None
    from veil.scan.text import find_entities, label

    found = [span for span in find_entities(query) if span.score >= _LIKELY]
    return label(found[0].entity) if found else None


#: a span the text search is at least this sure of is a personal value in a query
_LIKELY = 0.75


def _read_section(read: Mapping[str, Any] | None) -> list[str]:
    """The policy's ``read:`` section: how the scan read the table (none when it was read as
    it is), without a query naming a person (``personal_query``)."""
    lines = []
    settings = {
        name: value for name, value in (read or {}).items() if name in ReadSettings.model_fields
    }
    held = personal_query(settings.get("query"))
    if held is not None:
        del settings["query"]
        lines.append(f"# the query the scan read holds {held}: a policy is shared, so it is not")
        lines.append("# written here; give --query again")
    if settings:
        lines.append("# read as the scan read it (the command's flags override these)")
        block = yaml.safe_dump({"read": settings}, sort_keys=False, allow_unicode=True)
        lines.extend(block.rstrip("\n").splitlines())
    return lines


def suggest_policy_yaml(
    result: ScanResult,
    data: pd.DataFrame | None = None,
    *,
    k: int = DEFAULT_K,
    l: int | None = DEFAULT_L,  # noqa: E741
    max_suppression: float = DEFAULT_MAX_SUPPRESSION,
    source: str = "the data",
    key_file: str | None = None,
    read: Mapping[str, Any] | None = None,
) -> str:
    """The suggested policy as commented YAML: every column says what veil found and why, and
    the goal says what the search achieved with it on ``data`` (records kept, classes, each
    quasi-identifier's level), and ``read`` how the table was read (its ``read:`` section,
    so the release reads it as the scan did). For a table scanned in passes (``data`` left
    out) it is measured on the counts of the quasi-identifiers' combinations the scan kept
    (``result.counts``).

    Pseudonyms are keyed by ``VEIL_KEY`` unless ``key_file`` names a key file (a path, never
    the key itself, is written into the policy).
    """
    if data is None and result.counts is None:
        raise ParameterError(
            "a suggested policy is fitted on the table: give it (a scan in "
            "passes keeps the counts it needs instead)"
        )
    lines = [
        f"# veil policy suggested by `veil scan` for {source} ({result.rows:,} rows).",
        "# A starting point: check each role, then edit the steps (`veil transforms` lists them).",
        "version: 1",
    ]
    lines.extend(_read_section(read))
    lines.append("columns:")
    for finding in result.columns:
        steps, note = suggested_steps(finding, key_file)
        found = finding.entity or finding.role.value
        lines.append(f"  # {found} ({finding.confidence:.2f}): {finding.evidence}")
        if finding.role is ColumnRole.QUASI_IDENTIFIER:
            searched = "generalized by the search below, over the hierarchy veil builds for it"
            note = f"{note}; then {searched}" if note else searched
        if note:
            lines.append(f"  # suggested: {note}")
        spec: dict[str, Any] = {"role": finding.role.value}
        if steps:
            spec["steps"] = steps
        block = yaml.safe_dump({finding.name: spec}, sort_keys=False, allow_unicode=True)
        lines.extend("  " + line for line in block.rstrip("\n").splitlines())
    quasi = result.quasi_identifiers
    sensitive = [c.name for c in result.columns if c.role is ColumnRole.SENSITIVE]
    goal: dict[str, Any] = {"k": k}
    if data is None:  # a scan in passes: fitted on the counts of the QIs' combinations it kept
        data = result.counts
    if quasi and data is not None:
        outcome, notes = fit_goal(data, quasi, sensitive, k=k, l=l, max_suppression=max_suppression)
        goal = outcome.goal
        lines.append(
            "# the goal, measured on the table by the search before this file was written:"
        )
        lines += _outcome_lines(outcome, quasi)
        lines += [f"# note: {n}" for n in notes]
        if outcome.wiped:
            lines.append(
                f"# {', '.join(outcome.wiped)}: one value for everyone; for more "
                "detail allow more suppression, drop a quasi-identifier, or use "
                "method: mondrian"
            )
    if not quasi:
        lines += [
            f"# {UNMARKED}: mark each column that could single",
            "# someone out (an age, a sex, a place, a date) role: quasi_identifier; until one",
            "# is marked `veil anonymize` stops, since k cannot be measured on no column",
        ]
    lines.append(
        "# checked on the release: every person shares their quasi-identifiers with k-1 others"
    )
    if "max_levels" in goal:
        lines.append(
            "# max_levels: the highest level of each hierarchy the search may choose "
            "(so that none is left with one value for everyone)"
        )
    lines.append("privacy:")
    block = yaml.safe_dump(goal, sort_keys=False, default_flow_style=False, allow_unicode=True)
    lines.extend("  " + line for line in block.rstrip("\n").splitlines())
    return "\n".join(lines) + "\n"
