"""Search for lattices too large to enumerate (ARX refuses beyond 100,000 nodes): a greedy
descent from the fully generalized node, then iterated local search with random kicks until
the time limit. Every node it returns was evaluated and meets the criteria, so the release is
valid; optimality is not claimed (``optimal=False``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from veil.privacy.criteria import Criterion
from veil.privacy.engine import Evaluation, FrequencyTable, Groups, SearchResult, check
from veil.privacy.metrics import Metric


class _Evaluator:
    def __init__(
        self, table: FrequencyTable, criteria: Sequence[Criterion], max_outliers: int
    ) -> None:
        self.table, self.criteria, self.max_outliers = table, list(criteria), max_outliers
        self.seen: dict[tuple[int, ...], Evaluation] = {}
        self.base: list[Groups] = [table.bottom]
        for criterion in self.criteria:
            criterion.prepare(table.sensitive_values)

    def __call__(self, levels: tuple[int, ...]) -> Evaluation:
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
    table: FrequencyTable,
    criteria: Sequence[Criterion],
    metric: Metric,
    *,
    max_outliers: int,
    time_limit: float = 30.0,
    progress: Callable[[str], None] | None = None,
    random_state: int = 0,
) -> SearchResult:
    start = time.perf_counter()
    heights = np.array(table.heights)
    evaluate = _Evaluator(table, criteria, max_outliers)
    rng = np.random.default_rng(random_state)

    def loss(levels: tuple[int, ...]) -> float | None:
        result = evaluate(levels)
        if not result.anonymous:
            return None
        if metric.independent:
            return float(metric.lower_bounds(np.array([levels]))[0])
        return metric.loss(result)

    def out_of_time() -> bool:
        return time.perf_counter() - start > time_limit

    def descend(levels: tuple[int, ...], current: float) -> tuple[tuple[int, ...], float]:
        """Steepest descent: lower one level at a time while the node stays anonymous."""
        while not out_of_time():
            best_step: tuple[tuple[int, ...], float] | None = None
            # cheap bound first: try the steps whose lower bound is smallest
            steps = []
            for column in np.flatnonzero(np.array(levels) > 0):
                step = list(levels)
                step[column] -= 1
                steps.append(tuple(step))
            if not steps:
                break
            bounds = metric.lower_bounds(np.array(steps))
            for index in np.argsort(bounds):
                if best_step is not None and bounds[index] >= best_step[1]:
                    break
                value = loss(steps[index])
                if value is not None and (best_step is None or value < best_step[1]):
                    best_step = (steps[index], value)
            if best_step is None or best_step[1] > current:
                break
            levels, current = best_step
        return levels, current

    top = tuple(int(h - 1) for h in heights)
    top_loss = loss(top)
    if top_loss is None:  # even full generalization fails (e.g. l-diversity): no solution
        return SearchResult(None, None, 0, len(evaluate.seen), int(np.prod(heights)),
                            time.perf_counter() - start, "heuristic", False)  # fmt: skip
    best_levels, best_loss = descend(top, top_loss)
    rounds = 0
    while not out_of_time():
        rounds += 1
        kick = np.array(best_levels)
        for column in rng.choice(len(heights), size=min(3, len(heights)), replace=False):
            kick[column] = min(heights[column] - 1, kick[column] + int(rng.integers(1, 3)))
        start_levels = tuple(int(x) for x in kick)
        start_loss = loss(start_levels)
        if start_loss is None:
            continue
        levels, value = descend(start_levels, start_loss)
        if value < best_loss:
            best_levels, best_loss = levels, value
        if progress is not None and rounds % 20 == 0:
            progress(f"heuristic search: {len(evaluate.seen):,} nodes, best loss {best_loss:.6g}")
    final = evaluate(best_levels)
    return SearchResult(
        levels=best_levels,
        loss=best_loss,
        suppressed=final.suppressed,
        evaluated=len(evaluate.seen),
        nodes=int(np.prod(heights)),
        seconds=time.perf_counter() - start,
        method="heuristic",
        optimal=False,
        evaluation=final,
    )
