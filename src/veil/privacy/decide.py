"""Every column gets a decided role before anything is released: what the policy says, else what
the scan finds. Fail closed: a column the scan calls a direct identifier is never released as it
is unless the policy says so (``keep: true`` with a ``reason``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from veil.exceptions import PolicyError
from veil.policy import ColumnPolicy, Policy, treat_identifiers
from veil.schema import ColumnRole


@dataclass(frozen=True)
class Decision:
    """How one input column's role was decided, and what protects it."""

    column: str
    role: str
    by: str  # "policy", "hierarchy" (ARX's convention), "scan", or "unlisted: drop"
    entity: str | None = None
    confidence: float | None = None
    evidence: str | None = None
    treatment: str | None = None  # for identifiers: the step that protects it, or "kept"
    reason: str | None = None  # why an identifier is kept as it is (the policy's words)

    def to_dict(self) -> dict[str, Any]:
        """The decision as JSON values."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        """The decision ``to_dict`` wrote."""
        return cls(**{f: data.get(f) for f in cls.__dataclass_fields__})  # type: ignore[arg-type]


def decide(
    data: pd.DataFrame,
    policy: Policy,
    *,
    hierarchy_columns: Collection[str] = (),
    sensitive: Sequence[str] = (),
    key_file: str | None = None,
    progress: Any = None,
) -> tuple[Policy, tuple[Decision, ...]]:
    """The policy with a role (and, for identifiers, a treatment) for every column of ``data``.

    ``hierarchy_columns`` are quasi-identifiers by ARX's convention when the policy names none;
    ``sensitive`` are the columns the privacy goals protect. Columns the policy leaves out are
    scanned (``unlisted: scan``), dropped or refused; declared columns that no drop,
    pseudonymize, mask, fake or redact step protects are scanned too, and refused if the scan
    finds a direct identifier in them.
    """
    from veil.suggest import suggested_steps

    columns, by = _roles_given(data, policy, hierarchy_columns, sensitive)
    unlisted = [str(c) for c in data.columns if str(c) not in columns]
    if unlisted and policy.unlisted == "error":
        raise PolicyError(
            f"the policy does not list the column(s) {unlisted}; give each a role under "
            "columns:, or set unlisted: scan (veil decides from the values) or unlisted: drop"
        )
    decisions: dict[str, Decision] = {}
    dropped: list[str] = []
    if policy.unlisted == "drop":
        # dropped last, so that the table-level steps can still read them
        for name in unlisted:
            columns[name] = ColumnPolicy(role=ColumnRole.INSENSITIVE)
            decisions[name] = Decision(name, "insensitive", "unlisted: drop", treatment="drop")
        dropped, unlisted = unlisted, []

    treated = policy.model_copy(update={"columns": columns}).identifier_treatments()
    protected = set(treated) | set(dropped)
    as_is = _released_as_is(policy, columns, unlisted, protected)
    given = _searched_as_given(policy, columns, unlisted, protected)
    found = _scanned(data, columns, unlisted, as_is, progress)
    _refuse_held(data, given, {n: f.held for n, f in found.items() if n in as_is})
    for name in unlisted:
        finding = found[name]
        steps: list[Any] = []
        if finding.role is ColumnRole.IDENTIFIER or finding.held is not None:
            steps, _ = suggested_steps(finding, key_file)  # a treatment, or held ones redacted
        columns[name] = ColumnPolicy(role=finding.role, steps=steps)
        decisions[name] = Decision(
            name,
            finding.role.value,
            "scan",
            finding.entity,
            round(finding.confidence, 3),
            finding.evidence,
            _treatment(steps) if steps else None,
        )
    ordered = [
        decisions.get(name) or _given(name, columns[name], by, found.get(name), treated)
        for name in map(str, data.columns)
    ]
    # keep the policy's column order, then the decided columns in the table's order
    effective = policy.model_copy(
        update={
            "columns": {**policy.columns, **{d.column: columns[d.column] for d in ordered}},
            "steps": _insert_drop(policy.steps, dropped),
        }
    )
    effective._base_dir = policy._base_dir
    return effective, tuple(ordered)


def _insert_drop(steps: list[Any], dropped: list[str]) -> list[Any]:
    """The table steps with the unlisted columns dropped after every step that may read them
    and before the first one that renames columns."""
    if not dropped:
        return list(steps)
    renames = [
        i for i, step in enumerate(steps) if next(iter(step)) in {"rename_columns", "pca_mask"}
    ]
    at = renames[0] if renames else len(steps)
    return [*steps[:at], {"drop": {"columns": dropped}}, *steps[at:]]


def _roles_given(
    data: pd.DataFrame,
    policy: Policy,
    hierarchy_columns: Collection[str],
    sensitive: Sequence[str],
) -> tuple[dict[str, ColumnPolicy], dict[str, str]]:
    """The columns the policy gives a role, and by whom: its own, the sensitive ones, and
    those with a hierarchy when it declares no quasi-identifier (ARX's convention)."""
    columns = dict(policy.columns)
    by = dict.fromkeys(columns, "policy")
    declared_qi = any(c.role is ColumnRole.QUASI_IDENTIFIER for c in columns.values())
    for name in map(str, data.columns):
        if name in columns:
            continue
        if name in sensitive:
            columns[name], by[name] = ColumnPolicy(role=ColumnRole.SENSITIVE), "policy"
        elif name in hierarchy_columns and not declared_qi:
            columns[name], by[name] = ColumnPolicy(role=ColumnRole.QUASI_IDENTIFIER), "hierarchy"
    return columns, by


def released_as_is(policy: Policy) -> list[str]:
    """The columns a decided policy (``decide``'s) releases with their values, whoever gave
    their role: what the scan must find no direct identifier in, in every batch of a table
    read in batches as in the whole of a table in memory."""
    columns = dict(policy.columns)
    return _released_as_is(policy, columns, [], set(policy.identifier_treatments()))


def _released_as_is(
    policy: Policy,
    columns: dict[str, ColumnPolicy],
    unlisted: list[str],
    protected: set[str],
) -> list[str]:
    """Declared columns released with their values: only drop/pseudonymize/mask/fake protect
    an identifier, so a column shuffled, noised or generalized by the policy still has its
    values scanned. Quasi-identifiers under a privacy goal are the search's to protect."""
    searched = policy.privacy is not None
    return [
        name
        for name, col in columns.items()
        if name not in unlisted
        and col.role is not ColumnRole.IDENTIFIER
        and not col.keep
        and name not in protected
        and not (searched and col.role is ColumnRole.QUASI_IDENTIFIER)
    ]


def searched_as_given(policy: Policy) -> list[str]:
    """The quasi-identifiers a decided policy (``decide``'s) declares under a privacy goal
    with no step that protects an identifier: the search may release their values as they
    are (at a hierarchy's lowest level, in a class large enough), so every value is searched
    for the direct identifiers text holds by their pattern, in every batch of a table read in
    batches as in the whole of a table in memory."""
    columns = dict(policy.columns)
    return _searched_as_given(policy, columns, [], set(policy.identifier_treatments()))


def _searched_as_given(
    policy: Policy, columns: dict[str, ColumnPolicy], unlisted: list[str], protected: set[str]
) -> list[str]:
    if policy.privacy is None:  # then every declared column is released as it is
        return []
    return [
        name
        for name, col in columns.items()
        if name not in unlisted
        and col.role is ColumnRole.QUASI_IDENTIFIER
        and not col.keep
        and name not in protected
    ]


def _refuse_held(data: pd.DataFrame, given: list[str], held: dict[str, Any]) -> None:
    """Refuse, in one line, direct identifiers among the values of the columns released with
    their values: ``held`` (the scan's search of each, ``ColumnFinding.held``) and every value
    of the quasi-identifiers the policy declares (``given``, searched here). The scan decides
    on a sample, so one value in 30,000 is seldom in it; a column the policy leaves to the scan
    has what it holds redacted instead (``suggested_steps``)."""
    from veil.scan.core import SAMPLE_SIZE, held_identifiers

    for found, what in (
        (held, f"the scan's sample of {SAMPLE_SIZE:,} values did not show"),
        (
            {name: held_identifiers(data[name]) for name in given},
            "among the values of a quasi-identifier the search may release as they are",
        ),
    ):
        listed = [f"column {name!r}: {seen}" for name, seen in found.items() if seen is not None]
        if listed:
            raise PolicyError(
                f"would release direct identifier(s) {what}: {'; '.join(listed)}; in the "
                f"policy, {treat_identifiers()}"
            )


def _scanned(
    data: pd.DataFrame,
    columns: dict[str, ColumnPolicy],
    unlisted: list[str],
    as_is: list[str],
    progress: Any,
) -> dict[str, Any]:
    """The scan's findings on the unlisted columns and those released as they are; refused
    when the scan calls one of the latter a direct identifier."""
    from veil.scan import scan

    to_scan = [c for c in map(str, data.columns) if c in set(unlisted) | set(as_is)]
    if not to_scan:
        return {}
    if progress is not None:
        progress(f"scanning {len(to_scan)} column(s) the policy releases or leaves open")
    found = {f.name: f for f in scan(data, columns=to_scan).columns}
    refused = [
        f"{name} (the policy says {columns[name].role.value}, the scan finds "
        f"{found[name].entity or 'a unique key'}: {found[name].evidence})"
        for name in as_is
        if name in found and found[name].role is ColumnRole.IDENTIFIER
    ]
    if refused:
        raise PolicyError(
            f"would release direct identifier(s) as they are: {'; '.join(refused)}; "
            f"{treat_identifiers()}"
        )
    return found


def _given(
    name: str, col: ColumnPolicy, by: dict[str, str], seen: Any, treated: dict[str, str]
) -> Decision:
    """The decision on a column the policy (or a hierarchy) gave its role."""
    return Decision(
        name,
        col.role.value,
        by.get(name, "policy"),
        entity=seen.entity if seen else None,
        confidence=round(seen.confidence, 3) if seen else None,
        treatment="kept" if col.keep else treated.get(name),
        reason=col.reason if col.keep else None,
    )


def _treatment(steps: list[Any]) -> str:
    first = steps[0]
    return first if isinstance(first, str) else next(iter(first))
