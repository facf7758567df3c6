"""The solution space of a generalization search, as ARX's "explore" view shows it: every node
of the lattice (one level per quasi-identifier) with its loss, the records it would suppress
and whether it meets the goals, and the node the search chose.

The search itself (``veil.privacy.engine``) evaluates only the nodes it must; this module
evaluates every node of a lattice small enough to list (``MAX_NODES``, lowest total level
first), with the same check and the same metric, so that the chosen node can be seen among
the others and another one picked. A node is *minimal* when it meets the goals and no node one
level below it in one attribute does: for the monotone models (k, l, and their suppression)
the search constrained to such a node's levels (``privacy.max_levels``) returns that node.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil._html import Shown
from veil.privacy.criteria import Criterion
from veil.privacy.engine import Search
from veil.privacy.lattice import CodedFrequencies, check
from veil.privacy.metrics import Metric

__all__ = ["MAX_NODES", "Node", "SolutionSpace", "lattice_nodes"]

#: Nodes evaluated at most (lowest total level first): beyond it the space is shown in part.
MAX_NODES = 20_000


@dataclass(frozen=True)
class Node:
    """One generalization: each quasi-identifier's level, the metric's loss, the records the
    goals suppress there, whether it meets the goals within the suppression limit, and whether
    it is minimal (no anonymous node one level below it)."""

    levels: tuple[int, ...]
    loss: float
    suppressed: int
    anonymous: bool
    minimal: bool = False


@dataclass
class SolutionSpace(Shown):
    """The lattice of a search, node by node (``complete``: every node listed), and the node
    the search chose."""

    quasi: tuple[str, ...]
    heights: tuple[int, ...]
    rows: int
    metric: str
    max_suppression: float
    chosen: tuple[int, ...]
    nodes: tuple[Node, ...]
    complete: bool

    def node(self, levels: Sequence[int]) -> Node:
        """The node at ``levels``; a ``KeyError`` names a node the space does not list."""
        wanted = tuple(int(v) for v in levels)
        for node in self.nodes:
            if node.levels == wanted:
                return node
        raise KeyError(f"no node {list(wanted)} in this solution space")

    @property
    def candidates(self) -> list[Node]:
        """The minimal anonymous nodes, least loss first: the releases one may pick."""
        return sorted((n for n in self.nodes if n.minimal), key=lambda n: (n.loss, n.levels))

    def levels_of(self, levels: Sequence[int]) -> dict[str, int]:
        """``levels`` by quasi-identifier, as a policy's ``max_levels`` names them."""
        return dict(zip(self.quasi, (int(v) for v in levels), strict=True))

    def to_dict(self) -> dict[str, Any]:
        """The space as JSON values: one entry per node."""
        return {
            "quasi_identifiers": list(self.quasi),
            "heights": list(self.heights),
            "rows": self.rows,
            "metric": self.metric,
            "max_suppression": self.max_suppression,
            "chosen": list(self.chosen),
            "complete": self.complete,
            "nodes": [
                {
                    "levels": list(n.levels),
                    "loss": n.loss,
                    "suppressed": n.suppressed,
                    "anonymous": n.anonymous,
                    "minimal": n.minimal,
                }
                for n in self.nodes
            ],
        }

    def lines(self) -> list[str]:
        """A summary: the lattice, how many nodes meet the goals, the chosen one."""
        anonymous = sum(n.anonymous for n in self.nodes)
        chosen = self.node(self.chosen)
        return [
            f"{len(self.nodes):,} nodes{'' if self.complete else ' (in part)'} over "
            f"{', '.join(self.quasi)}; {anonymous:,} meet the goals, "
            f"{len(self.candidates):,} of them minimal",
            f"chosen: {self.levels_of(self.chosen)}, loss {chosen.loss:.4g}, "
            f"{chosen.suppressed:,} of {self.rows:,} records suppressed",
        ]


def lattice_nodes(
    table: CodedFrequencies,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_outliers: int,
    limit: int = MAX_NODES,
) -> tuple[list[Node], bool]:
    """Every node of ``table``'s lattice up to ``limit`` (lowest total level first), checked
    against ``criteria`` and measured by ``metric`` as the search measures them; and whether
    that is the whole lattice."""
    heights = table.heights
    order = sorted(itertools.product(*(range(h) for h in heights)), key=lambda n: (sum(n), n))
    complete = len(order) <= limit
    order = order[:limit]
    metric.prepare(table)
    state = Search(table, criteria, max_outliers)  # its roll-up cache and prepared criteria
    bounds = metric.lower_bounds(np.array(order, dtype=np.int64)) if metric.independent else None
    found: dict[tuple[int, ...], Node] = {}
    for position, levels in enumerate(order):
        evaluation = check(state.groups(levels), criteria, max_outliers)
        loss = float(bounds[position]) if bounds is not None else metric.loss(evaluation)
        found[levels] = Node(levels, loss, evaluation.suppressed, evaluation.anonymous)
    nodes = []
    for levels, node in found.items():
        below = [
            found.get((*levels[:i], levels[i] - 1, *levels[i + 1 :]))
            for i in range(len(levels))
            if levels[i] > 0
        ]
        minimal = node.anonymous and not any(b is not None and b.anonymous for b in below)
        nodes.append(Node(node.levels, node.loss, node.suppressed, node.anonymous, minimal))
    return nodes, complete
