"""Privacy models, each in one class: its parameters (validated when a policy loads), its
test of every equivalence class on a frequency table (the search's check) and its measure of
a release (``check`` and ``verify``).

A policy lists them under ``privacy.models``, each named by ``model:`` (a pydantic tagged
union, as ARX's ``config.addPrivacyModel``); ``k``, ``l`` and ``t`` at the top of ``privacy``
are shorthand for the common ones. Adding a model is one class here, added to
``PrivacyModel``.

The models: k-anonymity, l-diversity (distinct, entropy, recursive (c,l)) and t-closeness
(equal, ordered and hierarchical distance EMD, Li et al. 2007). All are monotone under
generalization, which the search relies on.

>>> import numpy as np
>>> from veil.privacy.criteria import KAnonymity, DistinctLDiversity
>>> sizes = np.array([3, 2])                  # two classes, of 3 and 2 records
>>> hist = np.array([[2, 1], [2, 0]])         # their counts of each sensitive value
>>> KAnonymity(k=3).holds(sizes, hist).tolist()
[True, False]
>>> model = DistinctLDiversity(l=2)
>>> model.measure(sizes, hist), model.goal, model.met(model.measure(sizes, hist))
(1, 'l >= 2 (distinct)', False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, get_args

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from veil.exceptions import ParameterError

if TYPE_CHECKING:
    from veil.hierarchy import Hierarchy

__all__ = [
    "MODELS",
    "SHORTHAND",
    "Criterion",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "KAnonymity",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "ShorthandError",
    "TCloseness",
    "build",
    "by_name",
    "class_entropy",
    "expand_shorthand",
    "hierarchical_emd",
]

_TOLERANCE = 1e-12


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"must be a whole number, got {value!r}")
    return int(value)


#: an integer parameter: a bool, a string or 5.0 is refused rather than converted
Whole = Annotated[int, BeforeValidator(_whole)]


def _need(histograms: np.ndarray | None) -> np.ndarray:
    if histograms is None:
        raise ParameterError("l-diversity and t-closeness need a sensitive column; pass sensitive")
    return histograms


class Criterion(BaseModel):
    """A privacy model. ``sizes[class]`` counts each equivalence class's records and
    ``histograms[class, value]`` each sensitive value in each class (None without a sensitive
    column).

    A subclass declares ``model`` (its name in a policy), its parameters as fields, and
    ``holds`` (which classes satisfy it), ``measure`` (the release's value) and ``met``.
    """

    # each model's validator is built when it first validates, not at import: a command that
    # checks k never pays for t-closeness's (pydantic's schema building is most of this
    # module's import)
    model_config = ConfigDict(extra="forbid", defer_build=True)

    #: needs a sensitive column (l-diversity, t-closeness)
    needs_sensitive: ClassVar[bool] = True
    #: measured against the distribution of the released classes, so it depends on which
    #: classes are suppressed (the search iterates it to a fixed point)
    relative: ClassVar[bool] = False
    #: Mondrian's splits check it
    mondrian: ClassVar[bool] = False
    #: the ``privacy:`` shorthand key that sets it (k, l or t); one model per key
    shorthand: ClassVar[str | None] = None

    @model_serializer(mode="wrap")
    def _named(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Every dump names the model, even one without defaults (the tag is a default)."""
        data = handler(self)
        return {"model": self.kind(), **data} if isinstance(data, dict) else data

    @classmethod
    def kind(cls) -> str:
        """The model's name in a policy (``model:``), e.g. ``k_anonymity``."""
        return str(get_args(cls.model_fields["model"].annotation)[0])

    def prepare(self, values: Sequence[str]) -> None:
        """Learn the sensitive column's values (their order, for ordered distance)."""

    @property
    def name(self) -> str:
        """How the literature names it, e.g. ``5-anonymity``."""
        raise NotImplementedError

    @property
    def goal(self) -> str:
        """The claim a release makes, e.g. ``k >= 5``: the key of a certificate's checks."""
        raise NotImplementedError

    def holds(
        self,
        sizes: np.ndarray,
        histograms: np.ndarray | None,
        released: np.ndarray | None = None,
    ) -> np.ndarray:
        """True for every class that satisfies the model (``released``: the classes kept, for
        a ``relative`` model)."""
        raise NotImplementedError

    def knows(
        self, histograms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Told the cells of ``histograms`` that are not zero (each one's class, value and
        count: ``Groups.cells``) before it measures them; a model that sums over the cells
        keeps them, the others need nothing."""

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> float | None:
        """The release's value of the model's parameter (None: no class to measure)."""
        raise NotImplementedError

    def met(self, value: float | None) -> bool:
        """Whether a measured value meets the goal."""
        raise NotImplementedError

    def unreachable(self, rows: int, distinct: int | None) -> str | None:
        """Why no generalization or suppression of ``rows`` records (with ``distinct``
        sensitive values) can meet the model, said before searching; None if it may."""
        return None


class KAnonymity(Criterion):
    """Every record shares its quasi-identifiers with at least k - 1 others (Sweeney 2002)."""

    model: Literal["k_anonymity"] = "k_anonymity"
    k: Whole = Field(ge=1)
    needs_sensitive: ClassVar[bool] = False
    mondrian: ClassVar[bool] = True
    shorthand: ClassVar[str | None] = "k"

    @property
    def name(self) -> str:
        return f"{self.k}-anonymity"

    @property
    def goal(self) -> str:
        return f"k >= {self.k}"

    def holds(
        self, sizes: np.ndarray, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Classes of at least k records."""
        return sizes >= self.k

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> int:
        """The smallest class's size: the release's k (0 without a class)."""
        return int(sizes.min()) if len(sizes) else 0

    def met(self, value: float | None) -> bool:
        """Whether the measured k reaches the model's k."""
        return value is not None and value >= self.k

    def unreachable(self, rows: int, distinct: int | None) -> str | None:
        """k above the number of records: no release can meet it."""
        if self.k <= rows:
            return None
        return (
            f"k = {self.k} exceeds the number of records ({rows:,}): no release can put every "
            f"record in a group of {self.k}; lower k"
        )


def _too_few_values(l: float, distinct: int | None) -> str | None:  # noqa: E741
    if distinct is None or l <= distinct:
        return None
    return (
        f"l = {l:g} exceeds the number of distinct values of the sensitive column "
        f"({distinct}): no group can hold {l:g} different values; lower l"
    )


class _Last:
    """The last histograms a model measured and what it drew from them, kept between calls:
    no part of what the model is (any two compare equal)."""

    def __init__(self) -> None:
        # replaced whole: a thread reading it never sees one call's histograms with another's
        self.kept: tuple[np.ndarray, Any] | None = None
        #: the values' order, for ordered distance (made once for the values prepared)
        self.ordering: np.ndarray | None = None

    def of(self, histograms: np.ndarray) -> Any:
        """What was drawn from ``histograms`` (the same array), or None."""
        kept = self.kept
        return kept[1] if kept is not None and kept[0] is histograms else None

    def keep(self, histograms: np.ndarray, drawn: Any) -> None:
        """Keep what was drawn from ``histograms``."""
        self.kept = (histograms, drawn)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Last)

    __hash__ = None  # type: ignore[assignment]


class DistinctLDiversity(Criterion):
    """Every class holds at least l different sensitive values (Machanavajjhala et al.)."""

    model: Literal["distinct_l_diversity"] = "distinct_l_diversity"
    l: Whole = Field(ge=1)  # noqa: E741 (the model's name)
    mondrian: ClassVar[bool] = True
    shorthand: ClassVar[str | None] = "l"
    _last: _Last = PrivateAttr(default_factory=_Last)

    @property
    def name(self) -> str:
        return f"distinct-{self.l}-diversity"

    def knows(
        self, histograms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Counts each class's values from the cells a roll-up made, not from every cell."""
        self._last.keep(histograms, np.bincount(cells[0], minlength=len(histograms)))

    @property
    def goal(self) -> str:
        return f"l >= {self.l} (distinct)"

    def holds(
        self, sizes: np.ndarray, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Classes holding at least l different sensitive values."""
        hist = _need(histograms)
        distinct = self._last.of(hist)
        if distinct is None:
            distinct = (hist > 0).sum(axis=1)
        return np.asarray(distinct >= self.l)

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> int | None:
        """The fewest different sensitive values in a class (None without a class)."""
        hist = _need(histograms)
        return int((hist > 0).sum(axis=1).min()) if len(hist) else None

    def met(self, value: float | None) -> bool:
        """Whether the measured l reaches the model's l."""
        return value is not None and value >= self.l

    def unreachable(self, rows: int, distinct: int | None) -> str | None:
        """l above the sensitive column's number of values: no class can meet it."""
        return _too_few_values(self.l, distinct)


def class_entropy(hist: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of every class's sensitive distribution."""
    totals = hist.sum(axis=1, keepdims=True)
    p = np.divide(hist, totals, out=np.zeros_like(hist, dtype=float), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p), 0.0)
    return -terms.sum(axis=1)


class EntropyLDiversity(Criterion):
    """Every class's sensitive values have entropy at least log(l): its measure is exp of the
    smallest entropy, the 'effective number' of values in the least diverse class."""

    model: Literal["entropy_l_diversity"] = "entropy_l_diversity"
    l: float = Field(ge=1)  # noqa: E741
    shorthand: ClassVar[str | None] = "l"
    _last: _Last = PrivateAttr(default_factory=_Last)

    def knows(
        self, histograms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Each class's entropy from the cells a roll-up made, not from every cell."""
        at, _, count = cells
        share = count / np.bincount(at, count, len(histograms))[at]
        self._last.keep(histograms, -np.bincount(at, share * np.log(share), len(histograms)))

    @property
    def name(self) -> str:
        return f"entropy-{self.l:g}-diversity"

    @property
    def goal(self) -> str:
        return f"l >= {self.l:g} (entropy)"

    def holds(
        self, sizes: np.ndarray, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        # a tiny tolerance: a class with exactly l equally frequent values has entropy log(l)
        """Classes whose sensitive values' entropy is at least log(l) (within a rounding
        tolerance)."""
        hist = _need(histograms)
        entropy = self._last.of(hist)
        if entropy is None:
            entropy = class_entropy(hist)
        return np.asarray(entropy >= math.log(self.l) - _TOLERANCE)

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> float | None:
        """exp of the smallest class entropy: the least diverse class's effective number of
        values."""
        hist = _need(histograms)
        return float(math.exp(class_entropy(hist).min())) if len(hist) else None

    def met(self, value: float | None) -> bool:
        """Whether the measured effective number of values reaches l."""
        return value is not None and math.log(value) >= math.log(self.l) - _TOLERANCE

    def unreachable(self, rows: int, distinct: int | None) -> str | None:
        """l above the sensitive column's number of values: no class can meet it."""
        return _too_few_values(self.l, distinct)


class RecursiveCLDiversity(Criterion):
    """r1 < c (r_l + ... + r_m) for every class's value counts sorted r1 >= r2 >= ... >= rm.
    Its measure is the least c that holds: the largest r1 / (r_l + ... + r_m)."""

    model: Literal["recursive_cl_diversity"] = "recursive_cl_diversity"
    c: float = Field(gt=0)
    l: Whole = Field(ge=1)  # noqa: E741
    shorthand: ClassVar[str | None] = "l"
    _last: _Last = PrivateAttr(default_factory=_Last)

    def knows(
        self, histograms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Each class's ratio from the cells a roll-up made, each class's counts sorted among
        its own values, where they are few beside every class x value (a sort of the cells
        costs more per cell than the histograms' own: adult's top nodes hold few classes)."""
        at, _, count = cells
        if len(at) * _SPARSE > histograms.size:
            return
        classes = len(histograms)
        # each class's counts, the largest first: one integer key sorts quicker than two
        if np.issubdtype(count.dtype, np.integer) and len(count):
            most = int(count.max()) + 1
            by = np.argsort(at.astype(np.int64) * most + (most - 1 - count))
        else:
            by = np.lexsort((-count, at))
        at, count = at[by], count[by]
        first = np.ones(len(at), dtype=bool)
        first[1:] = at[1:] != at[:-1]
        rank = np.arange(len(at)) - np.flatnonzero(first)[np.cumsum(first) - 1]
        top = np.zeros(classes)
        top[at[first]] = count[first]
        tail = np.bincount(at, np.where(rank >= self.l - 1, count, 0), classes)
        self._last.keep(histograms, _ratio(top, tail))

    @property
    def name(self) -> str:
        return f"recursive-({self.c:g},{self.l})-diversity"

    @property
    def goal(self) -> str:
        return f"l >= {self.l} (recursive, c = {self.c:g})"

    def _ratios(self, histograms: np.ndarray | None) -> np.ndarray:
        hist = _need(histograms)
        kept = self._last.of(hist)
        if kept is not None:
            return np.asarray(kept)
        hist = -np.sort(-hist, axis=1)
        if hist.shape[1] < self.l:
            return np.full(len(hist), np.inf)
        return _ratio(hist[:, 0], hist[:, self.l - 1 :].sum(axis=1))

    def holds(
        self, sizes: np.ndarray, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Classes where the most frequent value's count is below c times the l-th and rarer
        ones'."""
        return self._ratios(histograms) < self.c

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> float | None:
        """The least c that holds: the largest ratio of the top count to the tail's."""
        ratios = self._ratios(histograms)
        return float(ratios.max()) if len(ratios) else None

    def met(self, value: float | None) -> bool:
        """Whether the measured least c is below the model's c."""
        return value is not None and value < self.c


#: cells fewer than a histogram's size over this are sorted themselves for recursive l
_SPARSE = 16


def _ratio(top: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """r1 / (r_l + ... + r_m) of each class, infinite where the tail is empty."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tail > 0, top / np.maximum(tail, 1), np.inf)


@dataclass
class _Cells:
    """Histograms' cells that are not zero: each one's class, value, count and share of its
    class; and the classes' distributions, drawn when a distance needs them whole."""

    at: np.ndarray
    value: np.ndarray
    count: np.ndarray
    share: np.ndarray
    whole: np.ndarray | None = None
    order: tuple[np.ndarray, ...] | None = None  # ``ranked``'s, made once

    def ranked(self, order: np.ndarray, m: int) -> tuple[np.ndarray, ...]:
        """The cells for ordered distance over ``m`` values in ``order``, each class's in the
        values' order: each cell's class, the class's cumulative share from it to its next
        cell, the values ``[a, b)`` that share spans (within the first m-1), the classes
        holding a cell and the value each starts at. Made once for the cells: the search
        measures them against each release its suppressions leave."""
        if self.order is None:
            rank = np.empty(m, dtype=np.int64)
            rank[order] = np.arange(m)
            ranks = rank[self.value]
            key = self.at * m + ranks
            if len(key) and bool((key[1:] < key[:-1]).any()):  # by class, then value
                by = np.argsort(key)  # each key once: no order among equals to keep
                at, start, share = self.at[by], ranks[by], self.share[by]
            else:
                at, start, share = self.at, ranks, self.share
            first = np.ones(len(at), dtype=bool)
            first[1:] = at[1:] != at[:-1]
            level = np.cumsum(share)
            level -= (level - share)[first][np.cumsum(first) - 1]  # from the class's start
            end = np.full(len(at), m - 1, dtype=np.int64)
            end[:-1] = np.where(first[1:], m - 1, start[1:])
            a, b = np.minimum(start, m - 1), np.minimum(end, m - 1)
            self.order = (at, level, a, b, at[first], a[first])
        return self.order

    def shares(self, hist: np.ndarray) -> np.ndarray:
        """Each class's distribution of the values (for hierarchical distance)."""
        if self.whole is None:
            self.whole = hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)
        return self.whole


class TCloseness(Criterion):
    """Earth mover's distance between each class's sensitive distribution and the release's.

    ``distance``: ``equal`` (categorical: half the L1 distance), ``ordered`` (numeric or ordinal:
    cumulative differences over m-1), ``hierarchical`` (the sensitive column's hierarchy).
    """

    model: Literal["t_closeness"] = "t_closeness"
    t: float = Field(ge=0, le=1)
    distance: Literal["equal", "ordered", "hierarchical"] = "equal"
    order: list[str] | None = None  # the sensitive values' order, for ordered distance
    relative: ClassVar[bool] = True
    shorthand: ClassVar[str | None] = "t"
    _values: list[str] = PrivateAttr(default_factory=list)
    _hierarchy: Any = PrivateAttr(default=None)
    _last: _Last = PrivateAttr(default_factory=_Last)

    @property
    def name(self) -> str:
        return f"{self.t:g}-closeness ({self.distance} distance)"

    @property
    def goal(self) -> str:
        return f"t <= {self.t:g} ({self.distance} distance)"

    def prepare(self, values: Sequence[str]) -> None:
        """Learn the sensitive values, in the order the histograms count them."""
        self._values = list(values)
        self._last = _Last()

    def use_hierarchy(self, hierarchy: Hierarchy | None) -> None:
        """The sensitive column's hierarchy, for hierarchical distance."""
        self._hierarchy = hierarchy

    @property
    def hierarchy(self) -> Hierarchy | None:
        """The hierarchy given for hierarchical distance (None for the other distances)."""
        return self._hierarchy if self.distance == "hierarchical" else None

    def distances(
        self, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Each class's distance to the distribution of the released classes (``released``, a
        mask; default all): Li et al. compare with the table as published, so classes the
        search suppresses are not part of it."""
        hist = _need(histograms)
        n_classes = hist.shape[0]
        kept = self._kept(hist)
        counted = kept.count if released is None else np.where(released[kept.at], kept.count, 0)
        overall = np.bincount(kept.value, counted, hist.shape[1])
        if overall.sum() == 0:  # nothing released: no distribution to be close to
            return np.ones(n_classes)
        q = overall / overall.sum()
        if self.distance == "equal":
            # half the L1 distance, summed over the values a class holds: where it holds none
            # the distance is q's share, and the shares of q add up to 1
            beside = np.abs(kept.share - q[kept.value]) - q[kept.value]
            return 0.5 * (1 + np.bincount(kept.at, beside, n_classes))
        if self.distance == "ordered":
            order = self._order()
            if hist.shape[1] < 2 or order is None:
                return np.zeros(n_classes)
            return _ordered_emd(kept, q, order, n_classes)
        p = kept.shares(hist)
        if self._hierarchy is None:
            raise ParameterError(
                "hierarchical t-closeness needs the sensitive column's hierarchy: give it one "
                "under privacy.hierarchies"
            )
        return hierarchical_emd(p - q, self._values, self._hierarchy)

    def _order(self) -> np.ndarray | None:
        """The values' order, for ordered distance (None for the others)."""
        if self.distance != "ordered":
            return None
        last = self._last
        if last.ordering is None:
            last.ordering = _value_order(self._values, self.order)
        return last.ordering

    def _kept(self, hist: np.ndarray) -> _Cells:
        """The cells of ``hist`` that are not zero, kept for the same histograms: the search
        measures a node against each release its suppressions leave, one round after
        another, and a class holds few of the values."""
        kept: _Cells | None = self._last.of(hist)
        if kept is not None:
            return kept
        flat = np.flatnonzero(hist)  # the rows' cells in a row: quicker than nonzero's pairs
        at, value = np.divmod(flat, hist.shape[1])
        self.knows(hist, (at, value, hist.reshape(-1)[flat]))
        kept = self._last.of(hist)
        assert kept is not None
        return kept

    def knows(
        self, histograms: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Keeps the cells of ``histograms``, which the roll-up that made them knew: finding
        them again read every class x value."""
        at, value, count = cells
        sizes = np.bincount(at, count, len(histograms))
        self._last.keep(histograms, _Cells(at, value, count, count / sizes[at]))

    def holds(
        self, sizes: np.ndarray, histograms: np.ndarray | None, released: np.ndarray | None = None
    ) -> np.ndarray:
        """Classes whose sensitive distribution is within t of the released records'
        (``released``: the classes kept)."""
        return self.distances(histograms, released) <= self.t + _TOLERANCE

    def measure(self, sizes: np.ndarray, histograms: np.ndarray | None) -> float | None:
        """The largest distance of a class's sensitive distribution to the whole release's."""
        distances = self.distances(histograms)
        return float(distances.max()) if len(distances) else None

    def met(self, value: float | None) -> bool:
        """Whether the measured largest distance is at most t."""
        return value is not None and value <= self.t + _TOLERANCE


def _ordered_emd(kept: _Cells, q: np.ndarray, order: np.ndarray, classes: int) -> np.ndarray:
    """Li et al.'s ordered distance of each class to ``q``: the sum over the values, in
    ``order``, of the difference of the two cumulative distributions, over m-1. Summed from
    the class's cells that are not zero: between two of its values the class's cumulative
    share stays the same, and q's rises, so the sum over the values between is read off q's
    prefix sums either side of where q's passes it. A class of 20,000 holding 2 of 119 values
    costs 3 segments, not 119 values (adult's ordered t on capital-gain: 36 s, most of it here).
    """
    m = len(q)
    cumulative = np.cumsum(q[order])[: m - 1]  # the sum runs over the first m-1 values
    prefix = np.concatenate(([0.0], np.cumsum(cumulative)))  # prefix[i]: values before i
    at, level, a, b, firsts, leads = kept.ranked(order, m)
    cross = np.clip(np.searchsorted(cumulative, level, side="left"), a, b)
    # sum over [a, b) of |level - cumulative|: below the crossing level is above, after it below
    gaps = (
        level * (cross - a)
        - (prefix[cross] - prefix[a])
        + (prefix[b] - prefix[cross])
        - level * (b - cross)
    )
    total = np.bincount(at, gaps, classes)
    # before a class's first value its cumulative share is 0: the sum is q's alone
    lead = np.full(classes, prefix[m - 1])
    lead[firsts] = prefix[leads]
    return (total + lead) / (m - 1)


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


#: The type of an entry of ``privacy.models``: one of the models, chosen by its ``model`` key.
#: A new model is a class above, added here.
PrivacyModel = Annotated[
    KAnonymity | DistinctLDiversity | EntropyLDiversity | RecursiveCLDiversity | TCloseness,
    Field(discriminator="model"),
]
#: Every privacy model (``veil transforms`` lists them).
MODELS: tuple[type[Criterion], ...] = get_args(get_args(PrivacyModel)[0])
_ADAPTER: TypeAdapter[Criterion] = TypeAdapter(PrivacyModel, config=ConfigDict(defer_build=True))
_BY_NAME = {kind.kind(): kind for kind in MODELS}

#: ``privacy:`` shorthand keys and what they stand for: ``k: 5`` is ``{model: k_anonymity,
#: k: 5}``; ``l: 3`` with ``l_variant`` (distinct, entropy, recursive; with ``c``) is that
#: l-diversity; ``t: 0.2`` with ``t_distance`` is t-closeness.
SHORTHAND = ("k", "l", "l_variant", "c", "t", "t_distance")
#: ``l_variant`` -> the l-diversity model it names, and back
_L_MODELS = {
    "distinct": "distinct_l_diversity",
    "entropy": "entropy_l_diversity",
    "recursive": "recursive_cl_diversity",
}
_VARIANTS = {model: variant for variant, model in _L_MODELS.items()}


class ShorthandError(ValueError):
    """A shorthand key's value is invalid; ``key`` is the key as the policy wrote it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def expand_shorthand(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` (a ``privacy:`` mapping) with its shorthand keys turned into ``models`` entries.
    A shorthand key beside a listed model of the same kind is refused (which of the two would
    count is not clear); ``override`` is how a command-line flag replaces a policy's goal."""
    data = dict(raw)
    given = {key: data.pop(key) for key in SHORTHAND if key in data}
    if not given:
        return data
    wanted: list[tuple[str, dict[str, Any], dict[str, str]]] = []  # model, params, key of param
    if given.get("k") is not None:
        wanted.append(("k_anonymity", {"k": given["k"]}, {"k": "k"}))
    variant = given.get("l_variant") or "distinct"
    if given.get("l") is not None:
        if variant not in _L_MODELS:
            raise ShorthandError(
                "l_variant", f"must be distinct, entropy or recursive, got {variant!r}"
            )
        params = {"l": given["l"]}
        if given.get("c") is not None and variant != "recursive":
            raise ShorthandError("c", f"is for l_variant recursive, not {variant}")
        if variant == "recursive":
            if given.get("c") is None:
                raise ShorthandError("c", "l_variant recursive needs c, e.g. c: 3")
            params["c"] = given["c"]
        wanted.append((_L_MODELS[variant], params, {"l": "l", "c": "c"}))
    elif given.get("l_variant") is not None or given.get("c") is not None:
        key = "l_variant" if given.get("l_variant") is not None else "c"
        raise ShorthandError(key, "describes l-diversity: give l too, e.g. l: 3")
    if given.get("t") is not None:
        params = {"t": given["t"]}
        if given.get("t_distance") is not None:
            params["distance"] = given["t_distance"]
        wanted.append(("t_closeness", params, {"t": "t", "distance": "t_distance"}))
    elif given.get("t_distance") is not None:
        raise ShorthandError("t_distance", "describes t-closeness: give t too, e.g. t: 0.2")
    models = data.get("models") or []
    if not isinstance(models, list):
        raise ShorthandError("models", "must be a list, e.g. [{model: k_anonymity, k: 5}]")
    models = list(models)  # entries are validated as models after this
    for name, params, keys in wanted:
        try:
            model = _BY_NAME[name].model_validate({"model": name, **params})
        except ValidationError as err:
            first = err.errors()[0]
            field = str(first["loc"][-1]) if first["loc"] else ""
            message = str(first["msg"]).removeprefix("Value error, ")
            if first["type"] != "value_error":
                message += f", got {first.get('input')!r}"
            raise ShorthandError(keys.get(field, field), message) from err
        if any(_family(m) == model.shorthand for m in models):
            raise ShorthandError(
                str(model.shorthand),
                f"privacy.models already lists a model that {model.shorthand} sets; "
                "keep one of them",
            )
        models.append(model)
    data["models"] = models
    return data


def by_name(name: str) -> type[Criterion] | None:
    """The model a policy names ``name`` (``model: k_anonymity``), if there is one."""
    return _BY_NAME.get(name)


def _family(model: Any) -> str | None:
    """The shorthand key that sets a model of this kind (k, l, t), if any."""
    if isinstance(model, Criterion):
        return model.shorthand
    if not isinstance(model, Mapping):
        return None  # not a model: its validation says so
    kind = _BY_NAME.get(str(model.get("model")))
    return kind.shorthand if kind is not None else None


def _letter(key: str) -> str:
    """The goal a shorthand key belongs to: k, l (``l``, ``l_variant``, ``c``) or t."""
    return "l" if key in {"l_variant", "c"} else key[:1]


def _as_shorthand(model: Any) -> dict[str, Any]:
    """A listed k, l or t model in shorthand keys (``{"l": 3, "l_variant": "entropy"}``)."""
    spec = model.model_dump() if isinstance(model, Criterion) else dict(model)
    name = spec.get("model")
    if name == "t_closeness":
        return {"t": spec.get("t"), "t_distance": spec.get("distance")}
    if name in _VARIANTS:
        return {"l": spec.get("l"), "c": spec.get("c"), "l_variant": _VARIANTS[str(name)]}
    return {"k": spec.get("k")}


def override(raw: Mapping[str, Any], shorthand: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` (a ``privacy:`` mapping) with the goals in ``shorthand`` (``{"k": 10}``)
    replacing those it sets, listed or shorthand: the command line's ``-k 10`` over a
    policy's ``k: 5``. A flag for one part of a goal keeps the rest of the policy's
    (``--l-variant entropy`` alone keeps its l; ``--l 4`` keeps its variant and c)."""
    data = dict(raw)
    families = {_letter(key) for key in shorthand}
    before = {key: data.pop(key) for key in SHORTHAND if key in data and _letter(key) in families}
    kept = []
    for model in data.get("models") or []:
        if _family(model) in families:
            before.update(_as_shorthand(model))
        else:
            kept.append(model)
    data["models"] = kept
    merged = {key: value for key, value in {**before, **shorthand}.items() if value is not None}
    if "c" not in shorthand and merged.get("l_variant", "distinct") != "recursive":
        merged.pop("c", None)  # the old goal's c, meaningless for the new variant
    return {**data, **merged}


def build(spec: Mapping[str, Any] | Criterion, *, where: str | None = None) -> Criterion:
    """A privacy model from its mapping (``{"model": "k_anonymity", "k": 5}``); a bad one is
    a ``ParameterError`` that names the parameter (as ``where``, if given) and what it allows.
    """
    if isinstance(spec, Criterion):
        return spec
    # a known model is validated by its own class (only its validator is built); anything
    # else by the union, whose error lists the models
    named = spec.get("model")
    kind = _BY_NAME.get(named) if isinstance(named, str) else None
    try:
        if kind is not None:
            return kind.model_validate(dict(spec))
        return _ADAPTER.validate_python(dict(spec))
    except ValidationError as err:
        first = err.errors()[0]
        where_in = first["loc"] if kind is not None else first["loc"][1:]
        name = where or ".".join(str(p) for p in where_in) or "model"
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] not in {"value_error", "union_tag_invalid"}:
            message += f", got {first.get('input')!r}"
        raise ParameterError(f"{name}: {message}") from err
