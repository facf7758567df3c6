"""The search for the optimal full-domain generalization (one level per quasi-identifier).

Rows are touched once: the quasi-identifiers are coded by their hierarchies' leaves and the
table shrinks to its frequency table — distinct combinations with their counts and, when
l-diversity or t-closeness apply, their sensitive-value histograms. A lattice node is evaluated
by *rolling up* the groups of an already evaluated, more specific node: gather each column's
generalized code (``maps[level][leaf]``), combine into one key, group. Numpy throughout.

The search is exact: every node's lower bound (its loss without suppression, from its levels
alone) is computed for all nodes at once, nodes are visited in bound order, and the search
stops when no remaining bound can beat the best loss found. Whether a node is anonymous is
settled Flash-style: a binary search along a chain of nodes through it, each answer tagging
all successors (anonymous) or all predecessors (not anonymous) — the models are monotone.
Ties in loss go to the lower total level, as in ARX.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from veil.exceptions import ParameterError
from veil.frequency import CodedFrequencies, Groups
from veil.privacy.criteria import Criterion
from veil.privacy.lattice import MAX_EXHAUSTIVE, NodeEvaluation, SearchResult, check
from veil.privacy.metrics import Metric

_CACHE = 256  # evaluated nodes kept for roll-up


class Search:
    """State of one search: the lattice, node statuses, and evaluated nodes for roll-up."""

    UNKNOWN, ANONYMOUS, FAILING = 0, 1, -1

    def __init__(
        self, table: CodedFrequencies, criteria: Sequence[Criterion], max_outliers: int
    ) -> None:
        self.table = table
        self.criteria = list(criteria)
        self.max_outliers = max_outliers
        self.heights = np.array(table.heights, dtype=np.int64)
        # the lattice's grid spans the columns with a choice of level: a column held at its
        # one level (a binary column capped below its top, of 61 one-hot columns) adds none,
        # and numpy's arrays have at most 64 dimensions
        self.free = [int(c) for c in np.flatnonzero(self.heights > 1)]
        chosen = tuple(int(h) for h in self.heights[self.free])
        self.shape = chosen or (1,)  # no choice: one node
        self.nodes = np.zeros((math.prod(chosen), len(self.heights)), dtype=np.int64)
        for column, levels in zip(self.free, _positions(chosen), strict=True):
            self.nodes[:, column] = levels
        self.status = np.zeros(len(self.nodes), dtype=np.int8)
        # the same memory as a grid: tagging all successors of a node is one slice assignment
        self.grid = self.status.reshape(self.shape)
        self._strides = np.zeros(len(self.heights), dtype=np.int64)  # int8: bytes = positions
        self._strides[self.free] = self.grid.strides[: len(self.free)]
        self.cache: dict[tuple[int, ...], Groups] = {}
        # the cache as arrays, to pick a roll-up base with one vectorized comparison
        self._cache_levels = np.empty((0, len(table.heights)), dtype=np.int64)
        self._cache_sizes = np.empty(0, dtype=np.int64)
        self._cache_keys: list[tuple[int, ...]] = []
        self.evaluated = 0
        # told of every node checked (tagging included): a metric's bound for the nodes above
        self.on_evaluated: Callable[[Sequence[int], NodeEvaluation], None] | None = None
        for criterion in self.criteria:
            criterion.prepare(table.sensitive_values)

    def index(self, levels: Sequence[int]) -> int:
        """The node's position in the lattice (mixed radix over the hierarchies' heights)."""
        return int(np.dot(levels, self._strides))

    def groups(self, levels: Sequence[int]) -> Groups:
        """The classes at the node ``levels`` (cached; rolled up from the nearest finer node)."""
        key = tuple(int(x) for x in levels)
        if key in self.cache:
            return self.cache[key]
        base = self.table.bottom
        if len(self._cache_keys):
            below = np.all(self._cache_levels <= np.array(key), axis=1)
            if below.any():
                candidates = np.flatnonzero(below)
                best = candidates[np.argmin(self._cache_sizes[candidates])]
                base = self.cache[self._cache_keys[best]]
        groups = self.table.roll_up(base, key)
        if len(self._cache_keys) >= _CACHE:  # forget the oldest
            self.cache.pop(self._cache_keys.pop(0))
            self._cache_levels = self._cache_levels[1:]
            self._cache_sizes = self._cache_sizes[1:]
        self.cache[key] = groups
        self._cache_keys.append(key)
        self._cache_levels = np.vstack([self._cache_levels, np.array(key)[None, :]])
        self._cache_sizes = np.append(self._cache_sizes, len(groups))
        return groups

    def evaluate(self, levels: Sequence[int]) -> NodeEvaluation:
        """The node ``levels`` checked against the criteria: which classes fail, and whether the
        records they hold fit in the suppression budget.
        """
        self.evaluated += 1
        result = check(self.groups(levels), self.criteria, self.max_outliers)
        if self.on_evaluated is not None:
            self.on_evaluated(levels, result)
        if result.anonymous:  # so is every node above it
            self.grid[self.above(levels)] = self.ANONYMOUS
        else:  # and every node below it fails
            self.grid[tuple(slice(None, int(levels[c]) + 1) for c in self.free)] = self.FAILING
        return result

    def above(self, levels: Sequence[int]) -> tuple[slice, ...]:
        """The region of the lattice's grid (``grid``'s shape) at or above the node ``levels``."""
        return tuple(slice(int(levels[c]), None) for c in self.free)

    def resolve(self, position: int) -> None:
        """Settle a node's status by a binary search on a chain through it."""
        node = self.nodes[position]
        down = [node.copy()]
        while True:  # walk down while the status is unknown
            current = down[-1]
            candidates = np.flatnonzero(current > 0)
            if len(candidates) == 0:
                break
            step = current.copy()
            step[candidates[np.argmax(current[candidates])]] -= 1
            if self.status[self.index(step)] != self.UNKNOWN:
                break
            down.append(step)
        up = []
        current = node.copy()
        while True:
            candidates = np.flatnonzero(current < self.heights - 1)
            if len(candidates) == 0:
                break
            step = current.copy()
            step[candidates[np.argmin(current[candidates])]] += 1
            if self.status[self.index(step)] != self.UNKNOWN:
                break
            up.append(step)
            current = step
        chain = down[::-1] + up
        low, high = 0, len(chain) - 1
        while low <= high:
            middle = (low + high) // 2
            status = self.status[self.index(chain[middle])]
            if status == self.UNKNOWN:
                anonymous = self.evaluate(chain[middle]).anonymous
            else:
                anonymous = status == self.ANONYMOUS
            if anonymous:
                high = middle - 1
            else:
                low = middle + 1
        if self.status[position] == self.UNKNOWN:  # not settled by the chain: evaluate it
            self.evaluate(node)


def _positions(shape: tuple[int, ...]) -> list[np.ndarray]:
    """Each axis's index of every position of a C-ordered grid of ``shape``, as ``meshgrid``
    with ``indexing="ij"`` gives them raveled (which takes at most 32 axes)."""
    total = math.prod(shape)
    columns, repeat = [], total
    for height in shape:
        repeat //= height
        columns.append(
            np.tile(
                np.repeat(np.arange(height, dtype=np.int64), repeat), total // (repeat * height)
            )
        )
    return columns


def _unsettled(order: np.ndarray, status: np.ndarray, block: int = 512) -> Iterator[int]:
    """Positions of ``order`` not already known to fail, skipping failed ones a block at a time
    (most of a lattice is usually tagged failing long before the search reaches it)."""
    for start in range(0, len(order), block):
        chunk = order[start : start + block]
        for position in chunk[status[chunk] != Search.FAILING]:
            if status[position] != Search.FAILING:  # tags change while the block is walked
                yield int(position)


def optimal_search(
    table: CodedFrequencies,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_outliers: int,
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """The node with the least ``metric`` loss whose classes meet ``criteria`` after
    suppressing at most ``max_outliers`` records (classes failing a criterion are suppressed
    whole), by branch and bound over the whole lattice."""
    start = time.perf_counter()
    size = math.prod(table.heights)
    if size > MAX_EXHAUSTIVE:
        raise ParameterError(
            f"the lattice has {size:,} nodes, more than the optimal search visits "
            f"({MAX_EXHAUSTIVE:,}); use method heuristic"
        )
    metric.prepare(table)
    state = Search(table, criteria, max_outliers)
    nodes = state.nodes
    bounds = metric.lower_bounds(nodes)
    totals = nodes.sum(axis=1)
    order = np.lexsort((totals, bounds))  # bound first, then total level (ARX's tie-break)
    best: tuple[float, int, NodeEvaluation | None, tuple[int, ...]] | None = None
    floor = bounds.astype(float).copy()  # raised by what evaluated nodes below teach
    floor_grid = floor.reshape(state.shape)  # the same memory, as the lattice's grid

    def raise_floor(levels: Sequence[int], evaluation: NodeEvaluation) -> None:
        above = metric.successor_bound(evaluation)
        if above is not None:  # every node at or above ``levels``: one slice
            region = state.above(levels)
            np.maximum(floor_grid[region], above, out=floor_grid[region])

    bounded = type(metric).successor_bound is not Metric.successor_bound
    if bounded:  # only metrics whose classes bound the nodes above pay for it
        state.on_evaluated = raise_floor
    finished = True
    for visited, position in enumerate(_unsettled(order, state.status)):
        bound, total = float(bounds[position]), int(totals[position])
        if best is not None and (bound, total) >= (best[0], best[1]):
            break
        if bounded and best is not None and (float(floor[position]), total) >= (best[0], best[1]):
            continue  # a node below it already bounds it past the best
        if state.status[position] == Search.UNKNOWN:
            state.resolve(int(position))
        if state.status[position] == Search.FAILING:
            continue
        levels = tuple(int(x) for x in nodes[position])
        if metric.independent:
            loss, evaluation = bound, None
        else:
            evaluation = check(state.groups(levels), criteria, max_outliers)
            loss = metric.loss(evaluation)
            if bounded:
                raise_floor(levels, evaluation)
        if best is None or (loss, total) < (best[0], best[1]):
            best = (loss, total, evaluation, levels)
        if progress is not None and visited % 500 == 0:
            progress(f"searching: {visited:,} of {size:,} nodes, best loss {best[0]:.6g}")
        if time_limit is not None and time.perf_counter() - start > time_limit:
            finished = False
            break
    if best is None:
        return SearchResult(
            None, None, 0, state.evaluated, size, time.perf_counter() - start, "optimal", finished
        )
    loss, _, evaluation, levels = best
    if evaluation is None:
        evaluation = check(state.groups(levels), criteria, max_outliers)
    return SearchResult(
        levels=levels,
        loss=loss,
        suppressed=evaluation.suppressed,
        evaluated=state.evaluated,
        nodes=size,
        seconds=time.perf_counter() - start,
        method="optimal",
        optimal=finished,
        evaluation=evaluation,
    )
