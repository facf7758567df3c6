"""What the searches share: the frequency table of the quasi-identifiers' leaves (built from
the rows once), the classes at a lattice node (``Groups``, rolled up from a more specific
node), the check of a node against the privacy criteria (``check``) and a search's result.

The optimal search (``engine``), the heuristic one (``heuristic``) and the loss metrics
(``metrics``) import this module, and it imports none of them; ``search`` chooses between the
two searches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.criteria import Criterion
from veil.exceptions import InputError, ParameterError
from veil.frequency import COUNT, Frequencies, class_histograms, mixed_radix, sensitive_codes
from veil.hierarchy import Hierarchy

__all__ = ["MAX_EXHAUSTIVE", "FrequencyTable", "Groups", "NodeEvaluation", "SearchResult", "check"]

#: Lattice nodes up to which the optimal search runs (beyond it, the heuristic): its arrays
#: hold a few numbers per node (1M nodes: about 100 MB), and branch and bound evaluates a small
#: part of them (adult's 108,000-node lattice of built hierarchies: 762 nodes, 0.12 s).
MAX_EXHAUSTIVE = 1_000_000
_MAX_HISTOGRAM_CELLS = 50_000_000


def _combine(codes: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    """One int64 per row for the combination of its codes (``veil.frequency.mixed_radix``)."""
    return mixed_radix([codes[:, j] for j in range(codes.shape[1])], radix)[0]


def _group(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group of every row, first row of every group)."""
    group, uniques = pd.factorize(key)
    first = np.full(len(uniques), len(key), dtype=np.int64)
    np.minimum.at(first, group, np.arange(len(key)))
    return group.astype(np.int64), first


def _histograms(
    entry: np.ndarray,
    codes: np.ndarray,
    counts: np.ndarray | None,
    classes: int,
    values: int,
    sensitive: str,
) -> np.ndarray:
    """(classes, values) counts of each sensitive code per entry (``counts``: how many rows each
    pair stands for, one when None)."""
    if classes * values > _MAX_HISTOGRAM_CELLS:
        raise InputError(
            f"sensitive column {sensitive!r} has {values:,} distinct values over "
            f"{classes:,} combinations; generalize it first (e.g. bins)"
        )
    return class_histograms(entry, codes, classes, values, weights=counts)


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
    """The quasi-identifiers coded by their hierarchies' leaves, shrunk to distinct combinations
    with their counts (and sensitive histograms): what the search evaluates every lattice node
    on."""

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
        """The frequency table of ``frame`` over ``quasi_identifiers``, each coded by its hierarchy
        (and with ``sensitive``, each class's histogram).
        """
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
            histograms = _histograms(entry, codes, None, len(sizes), len(values), sensitive)
        bottom = Groups(tuple([0] * len(hierarchies)), leaves[first], sizes, histograms)
        return cls(list(hierarchies), bottom, len(frame), entry, values)

    @classmethod
    def stream(
        cls,
        batches: Iterable[pd.DataFrame],
        quasi_identifiers: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        *,
        sensitive: str | None = None,
    ) -> FrequencyTable:
        """The table ``build`` makes, from batches of rows: only the distinct combinations
        (with the sensitive value) and their counts are held, never the rows, so a table larger
        than memory passes through in one reading. Entries and sensitive values come in the
        order they first appear, as in ``build``; ``row_entry`` is empty (no row is kept)."""
        if not quasi_identifiers:
            raise ParameterError("the search needs at least one quasi-identifier with a hierarchy")
        columns = [*quasi_identifiers, *([sensitive] if sensitive is not None else [])]
        counted = Frequencies.of_batches((b[columns] for b in batches), columns)
        return cls.from_counts(
            counted.counts, quasi_identifiers, hierarchies, sensitive=sensitive, count=COUNT
        )

    @classmethod
    def from_counts(
        cls,
        counts: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        *,
        sensitive: str | None = None,
        count: str,
    ) -> FrequencyTable:
        """The table of the rows ``counts`` stands for: one row per distinct combination of the
        quasi-identifiers' values (and the sensitive value), with how many rows hold it in the
        column ``count`` (a streamed pass's or a cluster's group-by-count). Entries come in the
        order of ``counts``' rows; ``row_entry`` is empty."""
        if not quasi_identifiers:
            raise ParameterError("the search needs at least one quasi-identifier with a hierarchy")
        rows = int(counts[count].sum()) if len(counts) else 0
        if rows == 0:
            raise InputError("the table has no rows to search")
        weights = counts[count].to_numpy(dtype=np.int64)
        leaves = np.column_stack(
            [
                h.encode(counts[q].reset_index(drop=True))
                for q, h in zip(quasi_identifiers, hierarchies, strict=True)
            ]
        )
        entry, first = _group(_combine(leaves, [h.domain_size for h in hierarchies]))
        sizes = np.bincount(entry, weights=weights).astype(np.int64)
        histograms = None
        values: list[str] = []
        if sensitive is not None:
            codes, values = sensitive_codes(counts[sensitive].reset_index(drop=True))
            histograms = _histograms(entry, codes, weights, len(sizes), len(values), sensitive)
        bottom = Groups(tuple([0] * len(hierarchies)), leaves[first], sizes, histograms)
        return cls(list(hierarchies), bottom, rows, np.empty(0, dtype=np.int64), values)

    @property
    def heights(self) -> list[int]:
        """Each hierarchy's number of levels: the lattice's shape."""
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
