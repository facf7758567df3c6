"""Privacy models as per-class tests on a frequency table: k-anonymity, l-diversity (distinct,
entropy, recursive (c,l)) and t-closeness (equal, ordered and hierarchical distance EMD,
Li et al. 2007). All are monotone under generalization, which the search relies on."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from veil.exceptions import ParameterError

if TYPE_CHECKING:
    from veil.hierarchy import Hierarchy


def _need(histograms: np.ndarray | None) -> np.ndarray:
    if histograms is None:
        raise ParameterError("l-diversity and t-closeness need a sensitive column; pass sensitive")
    return histograms


class Criterion(ABC):
    """A privacy model, tested class by class. ``histograms[class, value]`` counts each
    sensitive value in each class (None without a sensitive column)."""

    name: str
    needs_sensitive = True

    def prepare(self, sensitive_values: Sequence[str]) -> None:
        """Learn the sensitive column's values (their order, for ordered distance)."""

    @abstractmethod
    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        """True for every class that satisfies the model."""


class KAnonymity(Criterion):
    needs_sensitive = False

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ParameterError(f"k must be an integer >= 1, got {k!r}")
        self.k = int(k)
        self.name = f"{k}-anonymity"

    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        return sizes >= self.k


class DistinctLDiversity(Criterion):
    def __init__(self, l: int) -> None:  # noqa: E741 (the model's name)
        _check_l(l)
        self.l = l
        self.name = f"distinct-{l}-diversity"

    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        return (_need(histograms) > 0).sum(axis=1) >= self.l


def class_entropy(hist: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of every class's sensitive distribution."""
    totals = hist.sum(axis=1, keepdims=True)
    p = np.divide(hist, totals, out=np.zeros_like(hist, dtype=float), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p), 0.0)
    return -terms.sum(axis=1)


class EntropyLDiversity(Criterion):
    def __init__(self, l: float) -> None:  # noqa: E741
        if not isinstance(l, int | float) or l < 1:
            raise ParameterError(f"l must be a number >= 1, got {l!r}")
        self.l = l
        self.name = f"entropy-{l}-diversity"

    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        # a tiny tolerance: a class with exactly l equally frequent values has entropy log(l)
        return class_entropy(_need(histograms)) >= np.log(self.l) - 1e-12


class RecursiveCLDiversity(Criterion):
    """r1 < c (r_l + ... + r_m) for the class's value counts sorted r1 >= r2 >= ... >= rm."""

    def __init__(self, c: float, l: int) -> None:  # noqa: E741
        _check_l(l)
        if not isinstance(c, int | float) or c <= 0:
            raise ParameterError(f"c must be a positive number, got {c!r}")
        self.c, self.l = c, l
        self.name = f"recursive-({c},{l})-diversity"

    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        hist = -np.sort(-_need(histograms), axis=1)
        if hist.shape[1] < self.l:
            return np.zeros(len(sizes), dtype=bool)
        tail = hist[:, self.l - 1 :].sum(axis=1)
        return (hist[:, 0] < self.c * tail) & ((hist > 0).sum(axis=1) >= self.l)


def _check_l(l: object) -> None:  # noqa: E741
    if isinstance(l, bool) or not isinstance(l, int) or l < 1:
        raise ParameterError(f"l must be an integer >= 1, got {l!r}")


class TCloseness(Criterion):
    """Earth mover's distance between each class's sensitive distribution and the table's.

    ``distance``: ``equal`` (categorical: half the L1 distance), ``ordered`` (numeric or ordinal:
    cumulative differences over m-1), ``hierarchical`` (the sensitive column's hierarchy).
    """

    def __init__(
        self,
        t: float,
        *,
        distance: str = "equal",
        order: Sequence[str] | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        if not isinstance(t, int | float) or not 0 <= t <= 1:
            raise ParameterError(f"t must be in [0, 1], got {t!r}")
        if distance not in {"equal", "ordered", "hierarchical"}:
            raise ParameterError(
                f"t_distance must be equal, ordered or hierarchical, got {distance!r}"
            )
        if distance == "hierarchical" and hierarchy is None:
            raise ParameterError("hierarchical t-closeness needs the sensitive column's hierarchy")
        self.t, self.distance, self.order, self.hierarchy = t, distance, order, hierarchy
        self.values: list[str] = []
        self.name = f"{t}-closeness ({distance} distance)"

    def prepare(self, sensitive_values: Sequence[str]) -> None:
        self.values = list(sensitive_values)

    def distances(
        self, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Each class's distance to the distribution of the released classes (``released``, a
        mask; default all): Li et al. compare with the table as published, so classes the
        search suppresses are not part of it."""
        hist = _need(histograms)
        n_classes = hist.shape[0]
        p = hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)
        overall = hist.sum(axis=0) if released is None else hist[released].sum(axis=0)
        if overall.sum() == 0:  # nothing released: no distribution to be close to
            return np.ones(n_classes)
        q = overall / overall.sum()
        if self.distance == "equal":
            return 0.5 * np.abs(p - q).sum(axis=1)
        if self.distance == "ordered":
            rank = _value_order(self.values, self.order)
            diff = (p - q)[:, rank]
            m = diff.shape[1]
            if m < 2:
                return np.zeros(n_classes)
            return np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
        assert self.hierarchy is not None
        return hierarchical_emd(p - q, self.values, self.hierarchy)

    def holds(self, sizes: np.ndarray, histograms: np.ndarray | None) -> np.ndarray:
        return self.distances(histograms) <= self.t + 1e-12


def _value_order(values: Sequence[str], order: Sequence[str] | None) -> np.ndarray:
    """Positions of ``values`` sorted by ``order``, or numerically if they are all numbers."""
    if order is not None:
        position = {v: i for i, v in enumerate(order)}
        missing = [v for v in values if v not in position]
        if missing:
            raise ParameterError(f"the sensitive order does not list {missing[:5]}")
        return np.argsort([position[v] for v in values], kind="stable")
    try:
        return np.argsort([float(v) for v in values], kind="stable")
    except ValueError:
        return np.argsort(list(values), kind="stable")


def hierarchical_emd(diff: np.ndarray, values: Sequence[str], hierarchy: Hierarchy) -> np.ndarray:
    """Li et al.'s hierarchical EMD for rows of p - q over ``values`` (leaves of ``hierarchy``).

    A node N at level L costs L/H * min(positive, negative extra of its children), where the
    extra of a node is the sum of p - q over the values below it and H the top level.
    """
    leaf_index = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
    missing = [v for v in values if v not in leaf_index]
    if missing:
        raise ParameterError(f"the sensitive hierarchy does not cover {missing[:5]}")
    top = hierarchy.height - 1
    cost = np.zeros(diff.shape[0])
    leaves = np.array([leaf_index[v] for v in values], dtype=np.int64)
    for level in range(1, top + 1):
        child = hierarchy.maps[level - 1][leaves]
        parent = hierarchy.maps[level][leaves]
        child_ids, child_of_value = np.unique(child, return_inverse=True)
        to_child = np.zeros((len(values), len(child_ids)))
        to_child[np.arange(len(values)), child_of_value] = 1.0
        parent_ids, parent_of_value = np.unique(parent, return_inverse=True)
        to_parent = np.zeros((len(child_ids), len(parent_ids)))
        to_parent[child_of_value, parent_of_value] = 1.0
        extra = diff @ to_child  # (rows, children)
        positive = np.clip(extra, 0, None) @ to_parent
        negative = np.clip(-extra, 0, None) @ to_parent
        cost += (level / top) * np.minimum(positive, negative).sum(axis=1)
    return cost
