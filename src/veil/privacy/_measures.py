"""What ``check`` measures once the classes are counted: the goals asked for, checked, and
the measures of the classes' sizes (and their sensitive histograms), without pandas: whatever
counted the classes (a DataFrame, Arrow, DuckDB, a cluster) ends here."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from veil._html import Shown
from veil.exceptions import ParameterError
from veil.privacy.criteria import (
    Criterion,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    build,
)
from veil.risk.population import PopulationRisk, population_risk
from veil.risk.reidentification import PersonRisk, Risk, risk

if TYPE_CHECKING:
    from veil.hierarchy import Hierarchy


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


def asked_goals(
    sensitive: str | None,
    *,
    k: int | None = None,
    l: int | None = None,  # noqa: E741
    t: float | None = None,
    t_distance: str | None = None,
    risk_threshold: float = 0.2,
    models: Sequence[Criterion | Mapping[str, Any]] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
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


def measures(
    rows: int,
    qis: list[str],
    sensitive: str | None,
    sizes: np.ndarray,
    hist: np.ndarray | None,
    values: list[str],
    numeric: bool,
    goals: tuple[list[Criterion], int, Hierarchy | None],
    *,
    t_distance: str | None = None,
    l: int | None = None,  # noqa: E741
    risk_threshold: float = 0.2,
    population: float | None = None,
    sampling_fraction: float | None = None,
    people: PersonRisk | None = None,
    estimates: PopulationRisk | None = None,
) -> CheckResult:
    """The measures of classes ``sizes`` (and their sensitive ``hist`` over ``values``);
    ``goals`` from ``asked_goals``. The estimates beyond the sample are ``estimates``, or made
    from the sizes alone given a ``population`` or a ``sampling_fraction`` (classes counted
    without their rows: a stream's, a cluster's, Arrow's; weights need the rows)."""
    asked, t_index, tree = goals
    if estimates is None and (population is not None or sampling_fraction is not None):
        estimates = population_risk(
            sizes,
            population=population,
            sampling_fraction=sampling_fraction,
            threshold=risk_threshold,
        )
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
