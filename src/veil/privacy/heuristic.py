"""Search for lattices too large to enumerate (ARX refuses beyond 100,000 nodes): a greedy
descent from the fully generalized node, then iterated local search with random kicks until
the time limit. Every node it returns was evaluated and meets the criteria, so the release is
valid; optimality is claimed only when the best-first phase ran out of nodes to beat it."""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence

import numpy as np

from veil.criteria import Criterion
from veil.frequency import CodedFrequencies, Groups
from veil.privacy.lattice import NodeEvaluation, SearchResult, check
from veil.privacy.metrics import Metric


class _Evaluator:
    def __init__(
        self, table: CodedFrequencies, criteria: Sequence[Criterion], max_outliers: int
    ) -> None:
        self.table, self.criteria, self.max_outliers = table, list(criteria), max_outliers
        self.seen: dict[tuple[int, ...], NodeEvaluation] = {}
        self.base: list[Groups] = [table.bottom]
        for criterion in self.criteria:
            criterion.prepare(table.sensitive_values)

    def __call__(self, levels: tuple[int, ...]) -> NodeEvaluation:
        if levels not in self.seen:
            node = np.array(levels)
            base = min(
                (g for g in self.base if np.all(np.array(g.levels) <= node)), key=len
            )  # the smallest evaluated node below: the cheapest roll-up
            groups = self.table.roll_up(base, levels)
            self.seen[levels] = check(groups, self.criteria, self.max_outliers)
            if len(groups) < len(self.table.bottom) // 4 and len(self.base) < 64:
                self.base.append(groups)
        return self.seen[levels]


def heuristic_search(
    table: CodedFrequencies,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_outliers: int,
    time_limit: float = 30.0,
    progress: Callable[[str], None] | None = None,
    random_state: int = 0,
) -> SearchResult:
    """A time-limited search for lattices too large for the optimal one: a greedy climb from
    the bottom with random restarts, keeping the best anonymous node found (not proven optimal).
    """
    start = time.perf_counter()
    heights = np.array(table.heights)
    evaluate = _Evaluator(table, criteria, max_outliers)

    losses: dict[tuple[int, ...], float | None] = {}

    def loss(levels: tuple[int, ...]) -> float | None:
        if levels not in losses:
            result = evaluate(levels)
            if not result.anonymous:
                losses[levels] = None
            elif metric.independent:
                losses[levels] = float(metric.lower_bounds(np.array([levels]))[0])
            else:
                losses[levels] = metric.loss(result)
        return losses[levels]

    def out_of_time() -> bool:
        return time.perf_counter() - start > time_limit

    def neighbours(levels: tuple[int, ...], swaps: bool) -> list[tuple[int, ...]]:
        """One level lower in one column; with ``swaps``, also one lower here and one higher
        there (moves along a plateau that a plain descent cannot make)."""
        array = np.array(levels)
        out = []
        for down in np.flatnonzero(array > 0):
            step = list(levels)
            step[down] -= 1
            out.append(tuple(step))
            if swaps:
                for up in np.flatnonzero(array < heights - 1):
                    if up != down:
                        swap = list(step)
                        swap[up] += 1
                        out.append(tuple(swap))
        return out

    def descend(
        levels: tuple[int, ...], current: float, randomize: np.random.Generator | None = None
    ) -> tuple[tuple[int, ...], float]:
        """Steepest descent while the node stays anonymous; at a local optimum, swap moves.
        With ``randomize``, a single step goes to one of the three best moves at random
        (GRASP), so repeated descents from the same node explore different valleys."""
        swaps = False
        while not out_of_time():
            best_step: tuple[tuple[int, ...], float] | None = None
            steps = neighbours(levels, swaps)
            if not steps:
                break
            bounds = metric.lower_bounds(np.array(steps))
            improving: list[tuple[tuple[int, ...], float]] = []
            for index in np.argsort(bounds):
                if randomize is None and best_step is not None and bounds[index] >= best_step[1]:
                    break
                if randomize is not None and bounds[index] >= current:
                    break
                value = loss(steps[index])
                if value is not None and value < current:
                    improving.append((steps[index], value))
                if value is not None and (best_step is None or value < best_step[1]):
                    best_step = (steps[index], value)
            if randomize is not None and improving and not swaps:
                improving.sort(key=lambda item: item[1])
                best_step = improving[int(randomize.integers(0, min(3, len(improving))))]
            if best_step is None or best_step[1] >= current:
                if swaps:
                    break
                swaps = True  # a local optimum for single steps: try swaps once
                continue
            levels, current = best_step
            swaps = False
        return levels, current

    top = tuple(int(h - 1) for h in heights)
    top_loss = loss(top)
    if top_loss is None:  # even full generalization fails (e.g. l-diversity): no solution
        return SearchResult(
            None,
            None,
            0,
            len(evaluate.seen),
            int(np.prod(heights)),
            time.perf_counter() - start,
            "heuristic",
            False,
        )
    best_levels, best_loss = descend(top, top_loss)

    # Iterated local search: kick the best node up in a few random columns, descend again.
    rng = np.random.default_rng(random_state)
    kicks_until = start + 0.6 * time_limit
    rounds = 0
    while time.perf_counter() < kicks_until:
        rounds += 1
        if rounds % 2 == 0:  # a randomized descent from the top
            levels, value = descend(top, top_loss, rng)
            if value < best_loss:
                best_levels, best_loss = levels, value
            continue
        kick = np.array(best_levels)
        size = int(rng.integers(1, min(5, len(heights)) + 1))
        for column in rng.choice(len(heights), size=size, replace=False):
            kick[column] = min(heights[column] - 1, kick[column] + int(rng.integers(1, 3)))
        start_levels = tuple(int(x) for x in kick)
        if start_levels == best_levels:
            continue
        start_loss = loss(start_levels)
        if start_loss is None:
            continue
        levels, value = descend(start_levels, start_loss)
        if value < best_loss:
            best_levels, best_loss = levels, value

    # Then best-first from the bottom, in lower-bound order (as ARX's Lightning does): nodes
    # whose bound cannot beat the best are never generated, nodes below a failing node are
    # skipped (monotonicity), and every anonymous node found is polished by descent.
    failing = np.empty((0, len(heights)), dtype=np.int64)
    bottom = tuple([0] * len(heights))
    queue: list[tuple[float, int, tuple[int, ...]]] = [
        (float(metric.lower_bounds(np.array([bottom]))[0]), 0, bottom)
    ]
    queued = {bottom}
    rounds = 0
    while queue and not out_of_time():
        bound, _, node = heapq.heappop(queue)
        if bound >= best_loss:
            break  # every remaining node is bounded above the best: this is the optimum
        rounds += 1
        array = np.array(node)
        if not (len(failing) and np.any(np.all(failing >= array, axis=1))):
            found = loss(node)
            if found is None:
                failing = np.vstack([failing, array[None, :]])
            elif found < best_loss:
                best_levels, best_loss = descend(node, found)
        successors: list[tuple[int, ...]] = []
        for column in np.flatnonzero(array < heights - 1):
            up = list(node)
            up[column] += 1
            if tuple(up) not in queued:
                successors.append(tuple(up))
        if successors:
            bounds = metric.lower_bounds(np.array(successors))
            for successor, successor_bound in zip(successors, bounds, strict=True):
                if successor_bound < best_loss:
                    queued.add(successor)
                    entry = (float(successor_bound), sum(successor), successor)
                    heapq.heappush(queue, entry)
        if progress is not None and rounds % 200 == 0:
            progress(f"heuristic search: {len(evaluate.seen):,} nodes, best loss {best_loss:.6g}")
    finished = not queue or queue[0][0] >= best_loss
    final = evaluate(best_levels)
    return SearchResult(
        levels=best_levels,
        loss=best_loss,
        suppressed=final.suppressed,
        evaluated=len(evaluate.seen),
        nodes=int(np.prod(heights)),
        seconds=time.perf_counter() - start,
        method="heuristic",
        optimal=finished,
        evaluation=final,
    )
