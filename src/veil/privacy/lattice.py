"""What the searches share besides the frequency table (``veil.frequency.CodedFrequencies``,
whose classes at a lattice node are ``Groups``, rolled up from a more specific node): the
check of a node against the privacy criteria (``check``) and a search's result.

The optimal search (``engine``), the heuristic one (``heuristic``) and the loss metrics
(``metrics``) import this module, and it imports none of them; ``search`` chooses between the
two searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.frequency import CodedFrequencies, Groups
from veil.privacy.criteria import Criterion

__all__ = [
    "MAX_EXHAUSTIVE",
    "CodedFrequencies",
    "Groups",
    "NodeEvaluation",
    "SearchResult",
    "check",
]

#: Lattice nodes up to which the optimal search runs (beyond it, the heuristic): its arrays
#: hold a few numbers per node (1M nodes: about 100 MB), and branch and bound evaluates a small
#: part of them (adult's 108,000-node lattice of built hierarchies: 762 nodes, 0.12 s).
MAX_EXHAUSTIVE = 1_000_000


@dataclass
class NodeEvaluation:
    """One lattice node's classes, which of them fail the models, the records those hold, and
    whether suppressing them stays within the limit."""

    groups: Groups
    failing: np.ndarray  # (classes,) classes that fail a criterion: suppressed
    suppressed: int
    anonymous: bool


#: Rounds of re-measuring t against the classes still released before a node is given up.
_T_ROUNDS = 20


def check(groups: Groups, criteria: Sequence[Criterion], max_outliers: int) -> NodeEvaluation:
    """Which classes of ``groups`` fail ``criteria`` (suppressed), and whether they hold at
    most ``max_outliers`` records. Models measured against the released distribution
    (t-closeness) are iterated to a fixed point, since suppressing classes changes it.
    """
    relative = [c for c in criteria if c.relative]
    failing = np.zeros(len(groups), dtype=bool)
    if groups.histograms is not None:  # the cells the roll-up made: no model reads every one
        for criterion in criteria:
            criterion.knows(groups.histograms, groups.cells)
    for criterion in criteria:
        if not criterion.relative:
            failing |= ~criterion.holds(groups.sizes, groups.histograms)
    if relative:
        # t is measured against the release's distribution (as the verifier does), which
        # depends on which classes are suppressed: iterate to a fixed point
        others, failing = failing, failing.copy()
        for _ in range(_T_ROUNDS):
            now = others.copy()
            for criterion in relative:
                now |= ~criterion.holds(groups.sizes, groups.histograms, ~failing)
            if np.array_equal(now, failing):
                break
            failing = now
        else:
            failing = np.ones(len(groups), dtype=bool)  # no stable release: none
    suppressed = int(groups.sizes[failing].sum())
    return NodeEvaluation(groups, failing, suppressed, suppressed <= max_outliers)


@dataclass
class SearchResult:
    """The node the search chose (each quasi-identifier's level), its loss and evaluation, and
    how many nodes it evaluated."""

    levels: tuple[int, ...] | None
    loss: float | None
    suppressed: int
    evaluated: int
    nodes: int
    seconds: float
    method: str
    optimal: bool  # proven optimal (the branch and bound ran to its end)
    evaluation: NodeEvaluation | None = None
