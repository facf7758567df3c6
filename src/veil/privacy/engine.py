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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.exceptions import InputError, ParameterError
from veil.hierarchy import Hierarchy
from veil.privacy.criteria import Criterion, TCloseness
from veil.privacy.metrics import Metric
from veil.privacy.models import sensitive_codes

MAX_EXHAUSTIVE = 100_000  # lattice nodes; beyond this the heuristic search runs
_MAX_HISTOGRAM_CELLS = 50_000_000
_CACHE = 256  # evaluated nodes kept for roll-up


def _combine(codes: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    """One int64 per row for the combination of its codes (re-coding if the space overflows)."""
    key = np.zeros(len(codes), dtype=np.int64)
    space = 1
    for j, r in enumerate(radix):
        r = max(int(r), 1)
        if space * r >= 2**62:
            key, uniques = pd.factorize(key)
            key = key.astype(np.int64)
            space = len(uniques)
        key = key * r + codes[:, j]
        space *= r
    return key


def _group(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group of every row, first row of every group)."""
    group, uniques = pd.factorize(key)
    first = np.full(len(uniques), len(key), dtype=np.int64)
    np.minimum.at(first, group, np.arange(len(key)))
    return group.astype(np.int64), first


@dataclass
class Groups:
    """Equivalence classes at a node: one representative leaf combination per class, the class
    sizes and (with a sensitive column) the sensitive-value histogram per class."""

    levels: tuple[int, ...]
    leaves: np.ndarray  # (classes, quasi-identifiers)
    sizes: np.ndarray  # (classes,)
    histograms: np.ndarray | None  # (classes, sensitive values)

    def __len__(self) -> int:
        return len(self.sizes)


@dataclass
class FrequencyTable:
    hierarchies: list[Hierarchy]
    bottom: Groups  # the table at level 0 everywhere: distinct leaf combinations
    rows: int
    row_entry: np.ndarray  # (rows,) the bottom group of every input row
    sensitive_values: list[str]

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        *,
        sensitive: str | None = None,
    ) -> FrequencyTable:
        if not quasi_identifiers:
            raise ParameterError("the search needs at least one quasi-identifier with a hierarchy")
        leaves = np.column_stack(
            [h.encode(frame[q]) for q, h in zip(quasi_identifiers, hierarchies, strict=True)]
        )
        key = _combine(leaves, [h.domain_size for h in hierarchies])
        entry, first = _group(key)
        sizes = np.bincount(entry).astype(np.int64)
        histograms = None
        values: list[str] = []
        if sensitive is not None:
            codes, values = sensitive_codes(frame[sensitive])
            if len(sizes) * len(values) > _MAX_HISTOGRAM_CELLS:
                raise InputError(
                    f"sensitive column {sensitive!r} has {len(values):,} distinct values over "
                    f"{len(sizes):,} combinations; generalize it first (e.g. bins)"
                )
            flat = np.bincount(entry * len(values) + codes, minlength=len(sizes) * len(values))
            histograms = flat.reshape(len(sizes), len(values))
        bottom = Groups(tuple([0] * len(hierarchies)), leaves[first], sizes, histograms)
        return cls(list(hierarchies), bottom, len(frame), entry, values)

    @property
    def heights(self) -> list[int]:
        return [h.height for h in self.hierarchies]

    @property
    def _radix(self) -> list[list[int]]:
        """Distinct generalized values per column and level."""
        if not hasattr(self, "_radix_cache"):
            self._radix_cache = [[len(lab) for lab in h.labels] for h in self.hierarchies]
        return self._radix_cache

    def roll_up(self, base: Groups, levels: Sequence[int]) -> Groups:
        """The classes at ``levels`` from the classes of a more specific node ``base``."""
        klass, first = _group(self._key(base.leaves, levels))
        sizes = np.bincount(klass, weights=base.sizes).astype(np.int64)
        histograms = None
        if base.histograms is not None:
            histograms = np.zeros((len(first), base.histograms.shape[1]), dtype=np.int64)
            np.add.at(histograms, klass, base.histograms)
        return Groups(tuple(int(x) for x in levels), base.leaves[first], sizes, histograms)

    def entry_classes(self, levels: Sequence[int]) -> np.ndarray:
        """The class (at ``levels``) of every bottom entry: for applying a result to rows."""
        klass, _ = _group(self._key(self.bottom.leaves, levels))
        return klass

    def _key(self, leaves: np.ndarray, levels: Sequence[int]) -> np.ndarray:
        """One int64 per row of ``leaves`` for its generalized combination at ``levels``:
        the generalized codes in mixed radix, built column by column (no stacking)."""
        key = np.zeros(len(leaves), dtype=np.int64)
        space = 1
        for c, (h, level) in enumerate(zip(self.hierarchies, levels, strict=True)):
            radix = self._radix[c][level]
            if space * radix >= 2**62:  # re-code to keep the space small
                key, uniques = pd.factorize(key)
                key = key.astype(np.int64)
                space = len(uniques)
            key *= radix
            key += h.maps[level][leaves[:, c]]
            space *= radix
        return key


@dataclass
class Evaluation:
    groups: Groups
    failing: np.ndarray  # (classes,) classes that fail a criterion: suppressed
    suppressed: int
    anonymous: bool


#: Rounds of re-measuring t against the classes still released before a node is given up.
_T_ROUNDS = 20


def check(groups: Groups, criteria: Sequence[Criterion], max_outliers: int) -> Evaluation:
    closeness = [c for c in criteria if isinstance(c, TCloseness)]
    failing = np.zeros(len(groups), dtype=bool)
    for criterion in criteria:
        if criterion not in closeness:
            failing |= ~criterion.holds(groups.sizes, groups.histograms)
    if closeness:
        # t is measured against the release's distribution (as the verifier does), which
        # depends on which classes are suppressed: iterate to a fixed point
        others, failing = failing, failing.copy()
        for _ in range(_T_ROUNDS):
            now = others.copy()
            for criterion in closeness:
                far = criterion.distances(groups.histograms, ~failing) > criterion.t + 1e-12
                now |= far
            if np.array_equal(now, failing):
                break
            failing = now
        else:
            failing = np.ones(len(groups), dtype=bool)  # no stable release: none
    suppressed = int(groups.sizes[failing].sum())
    return Evaluation(groups, failing, suppressed, suppressed <= max_outliers)


@dataclass
class SearchResult:
    levels: tuple[int, ...] | None
    loss: float | None
    suppressed: int
    evaluated: int
    nodes: int
    seconds: float
    method: str
    optimal: bool  # proven optimal (the branch and bound ran to its end)
    evaluation: Evaluation | None = None


class Search:
    """State of one search: the lattice, node statuses, and evaluated nodes for roll-up."""

    UNKNOWN, ANONYMOUS, FAILING = 0, 1, -1

    def __init__(
        self, table: FrequencyTable, criteria: Sequence[Criterion], max_outliers: int
    ) -> None:
        self.table = table
        self.criteria = list(criteria)
        self.max_outliers = max_outliers
        self.heights = np.array(table.heights)
        grids = np.meshgrid(*[np.arange(h) for h in table.heights], indexing="ij")
        self.nodes = np.column_stack([g.ravel() for g in grids]).astype(np.int64)
        self.status = np.zeros(len(self.nodes), dtype=np.int8)
        # the same memory as a grid: tagging all successors of a node is one slice assignment
        self.grid = self.status.reshape(tuple(table.heights))
        self._strides = np.array(self.grid.strides, dtype=np.int64)  # int8: bytes = positions
        self.cache: dict[tuple[int, ...], Groups] = {}
        # the cache as arrays, to pick a roll-up base with one vectorized comparison
        self._cache_levels = np.empty((0, len(table.heights)), dtype=np.int64)
        self._cache_sizes = np.empty(0, dtype=np.int64)
        self._cache_keys: list[tuple[int, ...]] = []
        self.evaluated = 0
        for criterion in self.criteria:
            criterion.prepare(table.sensitive_values)

    def index(self, levels: Sequence[int]) -> int:
        return int(np.dot(levels, self._strides))

    def groups(self, levels: Sequence[int]) -> Groups:
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

    def evaluate(self, levels: Sequence[int]) -> Evaluation:
        self.evaluated += 1
        result = check(self.groups(levels), self.criteria, self.max_outliers)
        if result.anonymous:  # so is every node above it
            self.grid[tuple(slice(int(v), None) for v in levels)] = self.ANONYMOUS
        else:  # and every node below it fails
            self.grid[tuple(slice(None, int(v) + 1) for v in levels)] = self.FAILING
        return result

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


def _unsettled(order: np.ndarray, status: np.ndarray, block: int = 512) -> Iterator[int]:
    """Positions of ``order`` not already known to fail, skipping failed ones a block at a time
    (most of a lattice is usually tagged failing long before the search reaches it)."""
    for start in range(0, len(order), block):
        chunk = order[start : start + block]
        for position in chunk[status[chunk] != Search.FAILING]:
            if status[position] != Search.FAILING:  # tags change while the block is walked
                yield int(position)


def search(
    table: FrequencyTable,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_suppression: float = 0.0,
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """The node with the least ``metric`` loss whose classes meet ``criteria`` after
    suppressing at most ``max_suppression`` of the records (classes failing a criterion are
    suppressed whole)."""
    if not 0 <= max_suppression <= 1:
        raise ParameterError(f"max_suppression must be in [0, 1], got {max_suppression!r}")
    start = time.perf_counter()
    max_outliers = math.floor(max_suppression * table.rows)
    size = math.prod(table.heights)
    metric.prepare(table)
    if size > MAX_EXHAUSTIVE:
        from veil.privacy.heuristic import heuristic_search

        return heuristic_search(
            table, criteria, metric, max_outliers=max_outliers,
            time_limit=30.0 if time_limit is None else time_limit, progress=progress,
        )  # fmt: skip

    state = Search(table, criteria, max_outliers)
    nodes = state.nodes
    bounds = metric.lower_bounds(nodes)
    totals = nodes.sum(axis=1)
    order = np.lexsort((totals, bounds))  # bound first, then total level (ARX's tie-break)
    best: tuple[float, int, Evaluation | None, tuple[int, ...]] | None = None
    finished = True
    for visited, position in enumerate(_unsettled(order, state.status)):
        bound, total = float(bounds[position]), int(totals[position])
        if best is not None and (bound, total) >= (best[0], best[1]):
            break
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
        if best is None or (loss, total) < (best[0], best[1]):
            best = (loss, total, evaluation, levels)
        if progress is not None and visited % 500 == 0:
            progress(f"searching: {visited:,} of {size:,} nodes, best loss {best[0]:.6g}")
        if time_limit is not None and time.perf_counter() - start > time_limit:
            finished = False
            break
    if best is None:
        return SearchResult(None, None, 0, state.evaluated, size,
                            time.perf_counter() - start, "optimal", finished)  # fmt: skip
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
