"""Search for lattices too large to enumerate (ARX refuses beyond 100,000 nodes): a greedy
descent from the fully generalized node, then iterated local search with random kicks until
the time limit. Every node it returns was evaluated and meets the criteria, so the release is
valid; optimality is claimed only when the best-first phase ran out of nodes to beat it."""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence

import numpy as np

from veil.frequency import CodedFrequencies, Groups
from veil.privacy.criteria import Criterion
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
    climb = _Climb(table, criteria, metric, max_outliers, time_limit)
    heights = climb.heights
    top = tuple(int(h - 1) for h in heights)
    top_loss = climb.loss(top)
    if top_loss is None:  # even full generalization fails (e.g. l-diversity): no solution
        return SearchResult(
            None,
            None,
            0,
            len(climb.evaluate.seen),
            int(np.prod(heights)),
            time.perf_counter() - climb.start,
            "heuristic",
            False,
        )
    best = climb.descend(top, top_loss)
    best = climb.kicked(best, top, top_loss, np.random.default_rng(random_state))
    best, finished = climb.best_first(best, progress)
    final = climb.evaluate(best[0])
    return SearchResult(
        levels=best[0],
        loss=best[1],
        suppressed=final.suppressed,
        evaluated=len(climb.evaluate.seen),
        nodes=int(np.prod(heights)),
        seconds=time.perf_counter() - climb.start,
        method="heuristic",
        optimal=finished,
        evaluation=final,
    )


Node = tuple[int, ...]


class _Climb:
    """The heuristic search's state: the nodes evaluated and their losses, and the clock."""

    def __init__(
        self,
        table: CodedFrequencies,
        criteria: Sequence[Criterion],
        metric: Metric,
        max_outliers: int,
        time_limit: float,
    ) -> None:
        self.start, self.time_limit = time.perf_counter(), time_limit
        self.heights = np.array(table.heights)
        self.metric = metric
        self.evaluate = _Evaluator(table, criteria, max_outliers)
        self.losses: dict[Node, float | None] = {}

    def loss(self, levels: Node) -> float | None:
        """The node's loss, or None when it is not anonymous."""
        if levels not in self.losses:
            result = self.evaluate(levels)
            if not result.anonymous:
                self.losses[levels] = None
            elif self.metric.independent:
                self.losses[levels] = float(self.metric.lower_bounds(np.array([levels]))[0])
            else:
                self.losses[levels] = self.metric.loss(result)
        return self.losses[levels]

    def out_of_time(self) -> bool:
        return time.perf_counter() - self.start > self.time_limit

    def neighbours(self, levels: Node, swaps: bool) -> list[Node]:
        """One level lower in one column; with ``swaps``, also one lower here and one higher
        there (moves along a plateau that a plain descent cannot make)."""
        array = np.array(levels)
        out = []
        for down in np.flatnonzero(array > 0):
            step = list(levels)
            step[down] -= 1
            out.append(tuple(step))
            if swaps:
                for up in np.flatnonzero(array < self.heights - 1):
                    if up != down:
                        swap = list(step)
                        swap[up] += 1
                        out.append(tuple(swap))
        return out

    def descend(
        self, levels: Node, current: float, randomize: np.random.Generator | None = None
    ) -> tuple[Node, float]:
        """Steepest descent while the node stays anonymous; at a local optimum, swap moves.
        With ``randomize``, a single step goes to one of the three best moves at random
        (GRASP), so repeated descents from the same node explore different valleys."""
        swaps = False
        while not self.out_of_time():
            steps = self.neighbours(levels, swaps)
            if not steps:
                break
            best_step = self._step(steps, current, randomize, swaps)
            if best_step is None or best_step[1] >= current:
                if swaps:
                    break
                swaps = True  # a local optimum for single steps: try swaps once
                continue
            levels, current = best_step
            swaps = False
        return levels, current

    def _step(
        self,
        steps: list[Node],
        current: float,
        randomize: np.random.Generator | None,
        swaps: bool,
    ) -> tuple[Node, float] | None:
        """The move a descent makes from ``steps``, in lower-bound order."""
        best_step: tuple[Node, float] | None = None
        bounds = self.metric.lower_bounds(np.array(steps))
        improving: list[tuple[Node, float]] = []
        for index in np.argsort(bounds):
            if randomize is None and best_step is not None and bounds[index] >= best_step[1]:
                break
            if randomize is not None and bounds[index] >= current:
                break
            value = self.loss(steps[index])
            if value is not None and value < current:
                improving.append((steps[index], value))
            if value is not None and (best_step is None or value < best_step[1]):
                best_step = (steps[index], value)
        if randomize is not None and improving and not swaps:
            improving.sort(key=lambda item: item[1])
            best_step = improving[int(randomize.integers(0, min(3, len(improving))))]
        return best_step

    def kicked(
        self, best: tuple[Node, float], top: Node, top_loss: float, rng: np.random.Generator
    ) -> tuple[Node, float]:
        """Iterated local search: kick the best node up in a few random columns, descend
        again; every other round a randomized descent from the top."""
        heights = self.heights
        kicks_until = self.start + 0.6 * self.time_limit
        rounds = 0
        while time.perf_counter() < kicks_until:
            rounds += 1
            if rounds % 2 == 0:  # a randomized descent from the top
                found = self.descend(top, top_loss, rng)
                best = found if found[1] < best[1] else best
                continue
            kick = np.array(best[0])
            size = int(rng.integers(1, min(5, len(heights)) + 1))
            for column in rng.choice(len(heights), size=size, replace=False):
                kick[column] = min(heights[column] - 1, kick[column] + int(rng.integers(1, 3)))
            start_levels = tuple(int(x) for x in kick)
            if start_levels == best[0]:
                continue
            start_loss = self.loss(start_levels)
            if start_loss is None:
                continue
            found = self.descend(start_levels, start_loss)
            best = found if found[1] < best[1] else best
        return best

    def best_first(
        self, best: tuple[Node, float], progress: Callable[[str], None] | None
    ) -> tuple[tuple[Node, float], bool]:
        """Best-first from the bottom, in lower-bound order (as ARX's Lightning does): nodes
        whose bound cannot beat the best are never generated, nodes below a failing node are
        skipped (monotonicity), and every anonymous node found is polished by descent. With
        whether the queue ran out before the clock (the best is then optimal)."""
        heights, metric = self.heights, self.metric
        best_levels, best_loss = best
        failing = np.empty((0, len(heights)), dtype=np.int64)
        bottom = tuple([0] * len(heights))
        queue: list[tuple[float, int, Node]] = [
            (float(metric.lower_bounds(np.array([bottom]))[0]), 0, bottom)
        ]
        queued = {bottom}
        rounds = 0
        while queue and not self.out_of_time():
            bound, _, node = heapq.heappop(queue)
            if bound >= best_loss:
                break  # every remaining node is bounded above the best: this is the optimum
            rounds += 1
            array = np.array(node)
            if not (len(failing) and np.any(np.all(failing >= array, axis=1))):
                found = self.loss(node)
                if found is None:
                    failing = np.vstack([failing, array[None, :]])
                elif found < best_loss:
                    best_levels, best_loss = self.descend(node, found)
            successors: list[Node] = []
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
                        heapq.heappush(queue, (float(successor_bound), sum(successor), successor))
            if progress is not None and rounds % 200 == 0:
                seen = len(self.evaluate.seen)
                progress(f"heuristic search: {seen:,} nodes, best loss {best_loss:.6g}")
        finished = not queue or queue[0][0] >= best_loss
        return (best_levels, best_loss), finished
