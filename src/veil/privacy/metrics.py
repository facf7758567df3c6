"""Quality models (information loss) compatible with ARX's, computed on a frequency table.

- ``loss``: ARX's default "Loss" (generalized information loss, gs-factor 0.5, geometric mean
  over attributes, each attribute's loss floored at 1e-10 as ARX does).
- ``entropy``: ARX's non-uniform entropy, monotonic precomputed variant (sum over attributes).
- ``precision``: Sweeney's precision (mean generalization height share).
- ``discernibility``: ARX's discernibility (class size squared; a suppressed record costs the
  table size); ``dm_star``: ARX's monotonic DM* (suppressed classes cost their size squared).
- ``aecs``: average equivalence-class size.

Every metric gives a lower bound per node from its levels alone; metrics whose loss *is* that
bound (``independent``) never need the classes.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from veil.exceptions import ParameterError
from veil.registry import Registry

if TYPE_CHECKING:
    from veil.frequency import CodedFrequencies
    from veil.privacy.lattice import NodeEvaluation

_FACTOR = 1e10  # ARX compares losses on their first 10 decimals (floor)
_LN2 = math.log(2)


def floor10(value: float) -> float:
    """``value`` rounded down to 10 decimals: losses equal up to rounding compare equal."""
    return math.floor(value * _FACTOR) / _FACTOR


def geometric_mean(values: np.ndarray) -> np.ndarray:
    """ARX's aggregate: prod((v + 1) ** (1/n)) - 1, along the last axis."""
    n = values.shape[-1]
    result = np.ones(values.shape[:-1])
    for i in range(n):  # the same order of multiplications as ARX, for identical floats
        result = result * np.power(values[..., i] + 1.0, 1.0 / n)
    return result - 1.0


class Metric(ABC):
    """An information-loss metric of a lattice node (ARX's): its loss, and a lower bound of the
    loss of every node above it."""

    name: str
    independent = False  # the loss depends on the levels only (never on the classes)

    def prepare(self, table: CodedFrequencies) -> None:
        """Precompute what the bounds need."""

    @abstractmethod
    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """A lower bound of the loss of every node at or above each of ``nodes`` (levels per
        row): the branch and bound prunes a subtree whose bound exceeds the best loss found."""

    @abstractmethod
    def loss(self, evaluation: NodeEvaluation) -> float:
        """The information loss of an evaluated node (lower is better)."""

    def successor_bound(self, evaluation: NodeEvaluation) -> float | None:
        """A lower bound of the loss of every node above an evaluated one (generalizing
        further), when its classes give a tighter one than the levels alone; else None."""
        return None


class LossMetric(Metric):
    """ARX's Loss: each quasi-identifier's share of its domain a released value covers, averaged
    over records."""

    name = "loss"

    def prepare(self, table: CodedFrequencies) -> None:
        """Learn each hierarchy level's generalized share of the domain from the frequency table."""
        self.table = table
        self.shares = [h.shares() for h in table.hierarchies]
        self.components = []  # [column][level] normalized loss without suppression
        bottom = table.bottom
        for c, h in enumerate(table.hierarchies):
            per_level = []
            for level in range(h.height):
                raw = float(np.dot(bottom.sizes, self.shares[c][level][bottom.leaves[:, c]]))
                per_level.append(self._normalize(raw, c))
            self.components.append(np.array(per_level))

    def _normalize(self, aggregate: float, column: int) -> float:
        rows = self.table.rows
        low = rows / self.table.hierarchies[column].listed  # ARX: rows the hierarchy lists
        value = (aggregate - low) / (rows - low) if rows > low else 0.0
        return floor10(max(value, 0.0))

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """Every node's loss without suppression: a bound no node above it can beat."""
        values = np.column_stack([self.components[c][nodes[:, c]] for c in range(nodes.shape[1])])
        return geometric_mean(values)

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The node's loss, suppressed records counting as fully generalized."""
        groups = evaluation.groups
        if not evaluation.failing.any():
            return float(self.lower_bounds(np.array([groups.levels]))[0])
        values = []
        for c, level in enumerate(groups.levels):
            # every record of a class shares its generalized value, hence its share; suppressed
            # records lose everything (share 1): gs-factor 0.5 weighs both alike
            share = self.shares[c][level][groups.leaves[:, c]]
            raw = float(np.dot(groups.sizes, np.where(evaluation.failing, 1.0, share)))
            values.append(self._normalize(raw, c))
        return float(geometric_mean(np.array([values]))[0])


class EntropyMetric(Metric):
    """Non-uniform entropy: sum over records and attributes of -log2 P(value | generalization)."""

    name = "entropy"
    independent = True

    def prepare(self, table: CodedFrequencies) -> None:
        """Learn each level's conditional entropy of the leaves from the frequency table."""
        self.components = []
        bottom = table.bottom
        for c, h in enumerate(table.hierarchies):
            a = np.bincount(bottom.leaves[:, c], weights=bottom.sizes, minlength=h.domain_size)
            # ARX sums values in order of first appearance in the data: same floats
            order = _first_appearance(table, c)
            per_level = []
            for level in range(h.height):
                gen = h.maps[level]
                b = np.bincount(gen, weights=a)[gen]
                total = 0.0
                for i in order:
                    if a[i] != 0:
                        total += a[i] * (math.log(a[i] / b[i]) / _LN2)
                per_level.append(floor10(-total if total != 0 else 0.0))
            self.components.append(np.array(per_level))

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """Every node's entropy loss without suppression: a bound for the nodes above it."""
        total = np.zeros(len(nodes))
        for c in range(nodes.shape[1]):
            total = total + self.components[c][nodes[:, c]]
        return total

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The node's non-uniform entropy loss, suppressed records counting as fully generalized."""
        return float(self.lower_bounds(np.array([evaluation.groups.levels]))[0])


def _first_appearance(table: CodedFrequencies, column: int) -> np.ndarray:
    per_row = table.bottom.leaves[table.row_entry, column]
    _, first = np.unique(per_row, return_index=True)
    return per_row[np.sort(first)]


class PrecisionMetric(Metric):
    """Sweeney's precision loss: the mean of level / (height - 1) over attributes."""

    name = "precision"
    independent = True

    def prepare(self, table: CodedFrequencies) -> None:
        """Learn the hierarchies' heights."""
        self.heights = np.array([max(h.height - 1, 1) for h in table.hierarchies], dtype=float)

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """Every node's precision loss: its levels over the heights (suppression adds to it)."""
        return (nodes / self.heights).mean(axis=1)

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The node's precision loss, suppressed records counting as fully generalized."""
        return float(self.lower_bounds(np.array([evaluation.groups.levels]))[0])


class DiscernibilityMetric(Metric):
    """DM*: every record is charged the size of its class; suppressed ones the table size."""

    name = "discernibility"

    def prepare(self, table: CodedFrequencies) -> None:
        """Learn the number of records."""
        self.rows = table.rows
        self.entries = len(table.bottom)
        # distinct generalized values per column and level
        self.cardinality = [np.array([len(lab) for lab in h.labels]) for h in table.hierarchies]

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """n^2 / C, C bounding the number of classes: the product of the columns' generalized
        cardinalities (and the bottom's combinations). Sum of squares over C classes holding n
        records is at least n^2 / C, and suppression only charges more."""
        classes = np.full(len(nodes), float(self.entries))
        product = np.ones(len(nodes))
        for c, cards in enumerate(self.cardinality):
            product = np.minimum(product * cards[nodes[:, c]], float(self.entries))
        classes = np.minimum(classes, product)
        return float(self.rows) ** 2 / np.maximum(classes, 1.0)

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The sum over records of their class's size, a suppressed record counting as the whole
        table."""
        sizes = evaluation.groups.sizes.astype(float)
        kept = ~evaluation.failing
        return float((sizes[kept] ** 2).sum() + evaluation.suppressed * self.rows)

    def successor_bound(self, evaluation: NodeEvaluation) -> float | None:
        """Every class's size squared, suppressed ones too (ARX's DM* bound): generalizing
        further only merges classes, which raises the sum of squares, and charging a
        suppressed record the table size is never less than its class's size."""
        sizes = evaluation.groups.sizes.astype(float)
        return float((sizes**2).sum())


class DMStarMetric(DiscernibilityMetric):
    """ARX's DM* (its monotonic discernibility, ``createDiscernabilityMetric(true)``): every
    class charged its size squared, suppressed classes too, so the loss never falls as the
    generalization rises."""

    name = "dm_star"

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The discernibility of the classes kept (ARX's DM*): suppressed records are not
        counted."""
        return float((evaluation.groups.sizes.astype(float) ** 2).sum())


class AECSMetric(Metric):
    """Average equivalence-class size (suppressed records form one class)."""

    name = "aecs"

    def prepare(self, table: CodedFrequencies) -> None:
        """Learn the number of records."""
        self.rows = table.rows

    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """Every node's average class size without suppression: a bound for the nodes above it."""
        return np.ones(len(nodes))

    def loss(self, evaluation: NodeEvaluation) -> float:
        """The node's average equivalence class size."""
        kept = ~evaluation.failing
        classes = int(kept.sum()) + (1 if evaluation.failing.any() else 0)
        return self.rows / max(classes, 1)


METRICS: Registry[type[Metric]] = Registry("metric")
METRICS.add("loss", LossMetric, aliases=("generalized-loss",))
METRICS.add("entropy", EntropyMetric, aliases=("non-uniform-entropy", "nue"))
METRICS.add("precision", PrecisionMetric)
METRICS.add("discernibility", DiscernibilityMetric, aliases=("dm", "discernability"))
METRICS.add("dm_star", DMStarMetric, aliases=("dm*", "dmstar"))
METRICS.add("aecs", AECSMetric, aliases=("average-class-size",))
#: Other names users know these metrics by (ARX's, the literature's).
ALIASES = METRICS.aliases()


def make_metric(name: str) -> Metric:
    """The quality model called ``name``: ``loss`` (ARX's default), ``entropy``,
    ``precision``, ``discernibility``, ``dm_star`` or ``aecs``.
    """
    key = name.lower()
    if key not in METRICS:
        close = METRICS.suggest(key)
        raise ParameterError(
            f"metric must be one of {sorted(METRICS)} (or {', '.join(sorted(ALIASES))}), "
            f"got {name!r}" + (f"; did you mean {close!r}?" if close else "")
        )
    return METRICS[key]()
