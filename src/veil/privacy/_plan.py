"""What every release engine does before and after its passes: the plan (each column's role,
the steps, the hierarchies), the search's setup and record, and the certificate."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from veil._version import __version__
from veil.exceptions import CheckFailedError, PolicyError
from veil.frequency import CodedFrequencies
from veil.hierarchy import Hierarchy, hierarchy_from_spec, load_hierarchy_dir
from veil.policy import Policy, PrivacySettings, treat_identifiers
from veil.privacy.certificate import Certificate, StepRecord
from veil.privacy.criteria import Criterion, DistinctLDiversity, KAnonymity, TCloseness
from veil.privacy.decide import decide
from veil.privacy.lattice import SearchResult
from veil.privacy.metrics import make_metric
from veil.privacy.mondrian import mondrian
from veil.privacy.search import search
from veil.scan.hierarchies import build_hierarchy
from veil.schema import require_columns

Progress = Callable[[str], None]


#: A policy as a caller may give it: the object, its dictionary, or its YAML file.
PolicyLike = Policy | Mapping[str, Any] | str | os.PathLike[str]


def _as_policy(policy: PolicyLike) -> Policy:
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, Mapping):
        return Policy.from_dict(policy)
    return Policy.load(policy)


def criteria_for(
    privacy: PrivacySettings, sensitive: str | None, hierarchies: Mapping[str, Hierarchy]
) -> list[Criterion]:
    """The privacy models the policy asks for, ready for the search (copies: the policy's own
    stay as they were)."""
    models: list[Criterion] = [m.model_copy() for m in privacy.models]
    needing = [m.name for m in models if m.needs_sensitive]
    if needing and sensitive is None:
        raise PolicyError(
            f"{needing[0]} needs a sensitive column: set privacy.sensitive or give a column "
            "the role sensitive"
        )
    for model in models:
        if isinstance(model, TCloseness) and model.distance == "hierarchical":
            hierarchy = hierarchies.get(sensitive or "")
            if hierarchy is None:
                raise PolicyError(
                    f"{model.name} needs a hierarchy of the sensitive column {sensitive!r}: "
                    "give one under privacy.hierarchies (or --hierarchies)"
                )
            model.use_hierarchy(hierarchy)
    return models or [KAnonymity(k=1)]


def sensitive_tree(models: Sequence[Criterion]) -> list[list[str]] | None:
    """The hierarchy hierarchical t-closeness measured with, as the certificate keeps it."""
    for model in models:
        if isinstance(model, TCloseness) and model.hierarchy is not None:
            return [list(row) for row in model.hierarchy.table]
    return None


def people_models(
    privacy: PrivacySettings, models: list[Criterion], target: str | None, frame: pd.DataFrame
) -> tuple[list[Criterion], str | None]:
    """With ``privacy.person_id``, the search counts people: k people in a class is k distinct
    person ids in it, distinct l-diversity on the person column (whose histograms add up
    exactly as classes merge)."""
    person = privacy.person_id
    if person is None:
        return models, target
    if target is not None or privacy.method == "mondrian":
        raise PolicyError(
            "privacy.person_id counts k on people; with l-diversity, "
            "t-closeness or method mondrian it is not supported yet: drop one of "
            "them"
        )
    if person not in frame.columns:
        raise PolicyError(
            f"privacy.person_id {person!r} is not a column of the table the search "
            "sees (dropped by a step?): pseudonymize it instead, so that people "
            "can still be counted"
        )
    searched = [DistinctLDiversity(l=m.k) if isinstance(m, KAnonymity) else m for m in models]
    return searched, person


def searched(
    table: CodedFrequencies,
    models: Sequence[Criterion],
    privacy: PrivacySettings,
    quasi: Sequence[str],
    progress: Progress | None,
) -> SearchResult:
    """The search's result on ``table``; one line when no node meets the goals."""
    result = search(
        table,
        models,
        make_metric(privacy.metric),
        max_suppression=privacy.max_suppression,
        method=privacy.method,
        time_limit=privacy.time_limit,
        progress=progress,
    )
    if result.levels is None:
        raise CheckFailedError(
            f"no generalization of {list(quasi)} meets {', '.join(m.name for m in models)} "
            f"with at most {privacy.max_suppression:.1%} of records suppressed; allow more "
            "suppression, coarser hierarchies, or weaker goals"
        )
    return result


def search_record(
    result: SearchResult,
    privacy: PrivacySettings,
    quasi: Sequence[str],
    models: Sequence[Criterion],
    suppressed: int,
    rows_after: int,
    width: int,
) -> tuple[dict[str, Any], StepRecord]:
    """What the certificate says of a search: its ``search`` entry and its step record."""
    assert result.levels is not None
    info = {
        "levels": dict(zip(quasi, result.levels, strict=True)),
        "loss": result.loss,
        "metric": privacy.metric,
        "suppressed": suppressed,
        "method": result.method,
        "optimal": result.optimal,
        "evaluated": result.evaluated,
        "nodes": result.nodes,
        "seconds": round(result.seconds, 4),
        "models": [m.name for m in models],
    }
    description = (
        f"Search({'; '.join(m.name for m in models)}: levels {list(result.levels)}, "
        f"{privacy.metric} {result.loss:.6g}, {suppressed} suppressed)"
    )
    return info, StepRecord("search", "privacy", description, rows_after, width)


def certified(
    certificate: Certificate, verification: Any, measured: bool, quasi: Sequence[str]
) -> Certificate:
    """``certificate`` with the goals as ``verification`` measured them (``measured``: the
    release had privacy goals); one line when a goal is missed or a claim does not hold: the
    release is then never written."""
    checks = verification.goals() if measured else {}
    certificate = dataclasses.replace(certificate, checks=checks)
    failed = [goal for goal, met in checks.items() if not met]
    after = certificate.after
    if failed and certificate.rows_out == 0:
        raise CheckFailedError(
            f"every record was suppressed: the quasi-identifiers {list(quasi)} are too detailed "
            "for the rare-record suppression; generalize them (bins, mappings) before "
            "suppressing"
        )
    if failed:
        raise CheckFailedError(
            f"the release does not meet {', '.join(failed)} on {list(quasi)} (k = {after.k}, "
            f"{after.unique_rows} unique records); allow the search more suppression "
            "(privacy.max_suppression), coarser hierarchies, or weaker goals"
        )
    if not verification.ok:  # the re-check disagrees with the certificate: never write
        broken = [f"{c} ({d})" for c, ok, d in verification.claims if not ok]
        raise CheckFailedError(f"the release failed its own verification: {'; '.join(broken)}")
    return certificate


def mondrian_release(
    frame: pd.DataFrame,
    quasi: list[str],
    hierarchies: list[Hierarchy],
    models: list[Criterion],
    sensitive: str | None,
) -> tuple[pd.DataFrame, dict[str, Any], StepRecord]:
    """Mondrian local recoding, for comparison with the full-domain optimum."""
    local = mondrian(frame, quasi, hierarchies, models, sensitive=sensitive)
    if len(frame) and local.partitions == 0:
        raise CheckFailedError(
            f"Mondrian found no partition of {quasi} that meets "
            f"{', '.join(m.name for m in models)}; weaker goals or more records needed"
        )
    info = {
        "levels": None,
        "loss": local.loss,
        "metric": "loss",
        "suppressed": len(frame) - len(local.data),
        "method": "mondrian",
        "optimal": False,
        "partitions": local.partitions,
        "models": [m.name for m in models],
    }
    description = f"Mondrian({local.partitions} partitions, loss {local.loss:.6g})"
    record = StepRecord("mondrian", "privacy", description, len(local.data), local.data.shape[1])
    return local.data, info, record


@dataclasses.dataclass
class Plan:
    """What a release will do before any row is changed: the policy with a role for every
    column (``decisions`` say by whom), the quasi-identifiers and sensitive columns, and the
    hierarchies given (``given``) or specified (``specs``)."""

    policy: Policy
    decisions: tuple[Any, ...]
    quasi: list[str]
    sensitive: list[str]
    given: dict[str, Hierarchy]
    specs: dict[str, Any]


def plan_release(
    data: pd.DataFrame,
    policy: PolicyLike | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Check ``policy`` against ``data`` (the table, or a sample of it read in batches) and
    decide every column's role: the policy's, else the scan's."""
    pol = Policy() if policy is None else _as_policy(policy)
    given = dict(hierarchies or {})
    specs: dict[str, Any] = {}
    if pol.privacy is not None and isinstance(pol.privacy.hierarchies, str):
        given = {**load_hierarchy_dir(pol.resolve(pol.privacy.hierarchies)), **given}
    elif pol.privacy is not None and isinstance(pol.privacy.hierarchies, dict):
        specs = dict(pol.privacy.hierarchies)
    require_columns(data, list(pol.columns), where="policy columns")
    wanted = list(pol.privacy.sensitive) if pol.privacy and pol.privacy.sensitive else []
    require_columns(data, wanted, where="privacy.sensitive")
    untreated = pol.untreated_identifiers()
    if untreated:
        raise PolicyError(
            f"identifier column(s) {untreated} would be released as they are; {treat_identifiers()}"
        )
    # Every column gets a role before anything runs: the policy's, else the scan's (ARX's
    # convention: with hierarchies and no declared quasi-identifier, those columns are QIs,
    # except the sensitive one, whose hierarchy serves hierarchical t-closeness).
    pol, decisions = decide(
        data,
        pol,
        hierarchy_columns=[c for c in {*given, *specs} if c not in wanted],
        sensitive=wanted,
        progress=progress,
    )
    schema = pol.to_schema()
    sensitive = wanted or list(schema.sensitive)
    quasi = list(schema.quasi_identifiers)
    goals = _goals(pol.privacy)
    if goals and not quasi:
        raise PolicyError(
            f"the privacy goal(s) {', '.join(goals)} cannot be measured: no column is a "
            "quasi-identifier (the policy marks none and the scan found none); give the "
            "identifying columns role: quasi_identifier"
        )
    return Plan(pol, tuple(decisions), quasi, sensitive, given, specs)


def limited(
    hierarchies: Sequence[Hierarchy], quasi: Sequence[str], privacy: PrivacySettings
) -> list[Hierarchy]:
    """``hierarchies`` (one per quasi-identifier) cut at ``privacy.max_levels``, ARX's highest
    level the search may choose per attribute; a limit on no quasi-identifier stops with the
    names."""
    limits = privacy.max_levels
    unknown = sorted(set(limits) - set(quasi))
    if unknown:
        raise PolicyError(
            f"privacy.max_levels names {unknown}, which are not quasi-identifiers "
            f"of the search ({list(quasi)}); name one of them"
        )
    return [
        h.up_to(limits[q]) if q in limits else h for q, h in zip(quasi, hierarchies, strict=True)
    ]


def search_setup(
    plan: Plan,
    frame: pd.DataFrame,
    quasi: list[str],
    sensitive: list[str],
    weights: np.ndarray | None = None,
) -> tuple[list[Hierarchy], list[Criterion], list[Criterion], str | None]:
    """(the quasi-identifiers' hierarchies, the policy's models, the models the search checks,
    the column their histograms count) for ``frame`` after the policy's steps; ``frame`` may be
    any table holding each column's distinct values with ``weights`` (how many rows each row
    stands for: a streamed pass's counts), from which the automatic hierarchies are built."""
    pol, given, specs = plan.policy, plan.given, plan.specs
    assert pol.privacy is not None
    base = pol.resolve(".")

    def built(name: str, values: pd.Series) -> Hierarchy:
        return build_hierarchy(name, values, weights=weights)

    used = [
        given.get(q)
        or hierarchy_from_spec(q, specs.get(q, "auto"), frame[q], base=base, auto=built)
        for q in quasi
    ]
    used = limited(used, quasi, pol.privacy)
    target = sensitive[0] if sensitive else None
    trees = dict(given)
    if target is not None and target not in trees and target in specs:
        # the sensitive column's own tree, named per column, for hierarchical t
        trees[target] = hierarchy_from_spec(target, specs[target], frame[target], base=base)
    models = criteria_for(pol.privacy, target, trees)
    if not any(m.needs_sensitive for m in models):
        target = None
    searched, target = people_models(pol.privacy, models, target, frame)
    return used, models, searched, target


def shuffle_order(rows: int, random_state: int | None) -> np.ndarray:
    """The positions of ``rows`` released rows in a random order (reproducible with
    ``random_state``): the input's order is information — a sequential id's pseudonym sits next
    to its position. The index labels go with their rows, so a caller who holds the original
    can still align them; files are written without it."""
    return np.random.default_rng(random_state).permutation(rows)


def mask_hides(step: Any, identifiers: set[str]) -> None:
    """A mask counts as treating a direct identifier only if it changed every value: one that
    leaves values as they were (made of preserved characters) protects nothing."""
    mask = step.transform
    left = mask.values_left_unchanged()
    if left is None or not identifiers & set(mask.columns_):
        return
    if left:
        raise PolicyError(
            f"policy {step.where} (mask): {left:,} of {mask.present_:,} values of "
            f"{', '.join(mask.columns_)} are left as they are (made only of the characters in "
            "preserve); preserve fewer characters, or pseudonymize or drop the column"
        )


def _goals(privacy: PrivacySettings | None) -> list[str]:
    return [] if privacy is None else [m.goal for m in privacy.models]


#: A release that withholds more than this share of the records says so (README).
LARGE_SUPPRESSION = 0.10


def release_certificate(
    plan: Plan, content: str, searched: Sequence[Criterion] | None, **fields: Any
) -> Certificate:
    """The certificate of a release of ``plan`` whose cells hash to ``content``: what every
    release states (version, time, policy, roles, decisions, the privacy asked for, the
    sensitive column's hierarchy of the ``searched`` models), and ``fields``, what this one
    measured."""
    privacy = plan.policy.privacy
    return Certificate(
        veil_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        release_fingerprint=content,
        release_sha256=content,
        policy_sha256=plan.policy.fingerprint(),
        roles={d.column: d.role for d in plan.decisions},
        decisions=plan.decisions,
        privacy=None if privacy is None else privacy.model_dump(exclude_unset=True),
        sensitive_hierarchy=sensitive_tree(searched) if searched is not None else None,
        **fields,
    )


def withheld_everything(where: str | None) -> PolicyError:
    """The error of a policy whose steps leave no record to search (``where``: the step that
    left none, when known)."""
    return PolicyError(
        f"the policy's steps withhold every record ({where or 'steps'} leaves none), so there "
        "is nothing to release or search; relax that step (a smaller rare: in suppress_rows), "
        "or generalize the quasi-identifiers before it"
    )


def empty_victories(
    original: pd.DataFrame,
    release: pd.DataFrame,
    quasi: Sequence[str],
    search: Mapping[str, Any] | None,
    rows_in: int,
    *,
    rows_out: int | None = None,
) -> list[str]:
    """Goals met by wiping the data: a quasi-identifier left with one value for everyone, or
    most records withheld. Said in the CLI, the certificate and the report. ``original`` and
    ``release`` may hold each combination once (counts of a streamed release) with ``rows_out``
    the rows released."""
    notes = []
    for name in quasi:
        if name not in release.columns or len(release) == 0 or rows_out == 0:
            continue
        values = release[name].dropna().unique()
        # a renamed quasi-identifier is not in the original: take it to have had information
        had = original[name].nunique() if name in original.columns else 2
        if len(values) <= 1 and had > 1:
            shown = f"{values[0]!s}" if len(values) else "missing"
            notes.append(
                f"{name} carries no information in the release (every record has {shown!r}); "
                "to keep some of it allow the search more suppression (max_suppression), give "
                f"{name} a finer hierarchy, or use method: mondrian (local recoding)"
            )
    withheld = rows_in - (len(release) if rows_out is None else rows_out)
    if rows_in and withheld / rows_in > LARGE_SUPPRESSION:
        by_search = int(search.get("suppressed", 0)) if search else 0
        notes.append(
            f"{withheld:,} of {rows_in:,} records ({withheld / rows_in:.0%}) are withheld "
            f"({by_search:,} by the privacy search, {withheld - by_search:,} by the policy's "
            "steps); generalize the quasi-identifiers further to release more of them"
        )
    return notes


def follow(transform: Any, names: list[str], *, masked: bool = False) -> list[str]:
    """Column names after a step: renamed columns keep their role; dropped ones leave.

    With ``masked``, quasi-identifiers that a PCA mask replaces are followed into its
    components: a rotation of Age and Income identifies people as well as Age and Income do
    (whoever knows three of them recovers the rest by an affine fit), so the components stay in
    the k check. Otherwise (a sensitive column) the masked columns leave."""
    return list(transform.columns_after(names, masked=masked))
