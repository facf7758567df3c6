"""The search for the generalization of the quasi-identifiers: optimal (``engine``, as ARX's
Flash) when the lattice is small enough to bound, heuristic (``heuristic``) when it is not or
when asked. The choice lives here, above both."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from veil.exceptions import ParameterError
from veil.frequency import CodedFrequencies
from veil.privacy.criteria import Criterion
from veil.privacy.engine import optimal_search
from veil.privacy.heuristic import heuristic_search
from veil.privacy.lattice import MAX_EXHAUSTIVE, SearchResult
from veil.privacy.metrics import Metric

__all__ = ["METHODS", "search"]

#: ``optimal`` proves optimality when the lattice has at most ``MAX_EXHAUSTIVE`` nodes and
#: falls back to the heuristic beyond; ``heuristic`` always runs the heuristic.
METHODS = ("optimal", "heuristic")


def search(
    table: CodedFrequencies,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_suppression: float = 0.0,
    method: str = "optimal",
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """The node with the least ``metric`` loss whose classes meet ``criteria`` after
    suppressing at most ``max_suppression`` of the records (classes failing a criterion are
    suppressed whole)."""
    if not 0 <= max_suppression <= 1:
        raise ParameterError(f"max_suppression must be in [0, 1], got {max_suppression!r}")
    if method not in METHODS:
        raise ParameterError(f"method must be one of {list(METHODS)}, got {method!r}")
    max_outliers = math.floor(max_suppression * table.rows)
    if method == "heuristic" or math.prod(table.heights) > MAX_EXHAUSTIVE:
        metric.prepare(table)
        return heuristic_search(
            table,
            criteria,
            metric,
            max_outliers=max_outliers,
            time_limit=30.0 if time_limit is None else time_limit,
            progress=progress,
        )
    return optimal_search(
        table,
        criteria,
        metric,
        max_outliers=max_outliers,
        time_limit=time_limit,
        progress=progress,
    )
