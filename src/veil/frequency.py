"""The frequency table: veil's engine (the README's Architecture), at the bottom of the layers.

Columns are integer-coded once (``CodedColumns``); the equivalence classes over a set of columns
are a mixed-radix code per row and one ``bincount`` (``class_sizes``); a sensitive column's
values, spelling variants merged (``sensitive_codes``), give each class its histogram
(``histograms``). ``scan`` (uniqueness), ``privacy`` (the models, the search, the verifier) and
``report`` all count classes here, the same way.

``Frequencies`` is the same table kept as values rather than codes, so that it can be built
from batches and two of them merged: the form in which a stream of chunks or a Dask cluster
summarizes a table too large for one pass in memory ("summarize distributed, search local").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from veil import _codes
from veil.exceptions import InputError, ParameterError
from veil.hierarchy import Hierarchy
from veil.schema import require_columns

__all__ = [
    "COUNT",
    "WEIGHT",
    "CodedColumns",
    "CodedFrequencies",
    "Frequencies",
    "FrequencySum",
    "Groups",
    "class_histograms",
    "class_sizes",
    "first_seen_groups",
    "histograms",
    "mixed_radix",
    "sensitive_codes",
    "sensitive_key",
    "sensitive_text",
]


def mixed_radix(codes: Sequence[np.ndarray], radix: Sequence[int]) -> tuple[np.ndarray, int]:
    """One int64 per row for the combination of its codes (``codes[j]`` of column j, in
    ``0..radix[j]-1``), and the size of the key space; re-coded (factorized) whenever the space
    would pass 2**62, so it never overflows."""
    return _codes.mixed_radix(codes, radix, recode=_factorize)


def _factorize(key: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(key)
    return codes.astype(np.int64), len(uniques)


#: A sensitive column's histograms hold at most this many cells (classes x values).
_MAX_HISTOGRAM_CELLS = 50_000_000


def class_histograms(
    klass: np.ndarray,
    codes: np.ndarray,
    classes: int,
    values: int,
    weights: np.ndarray | None = None,
    *,
    sensitive: str,
) -> np.ndarray:
    """(classes x values) counts of each sensitive code per class: ``klass`` and ``codes``
    per row, each row standing for ``weights`` records (a table of distinct rows) or one.
    Raises InputError, naming the column ``sensitive``, past ``_MAX_HISTOGRAM_CELLS`` cells
    (200,000 classes of 60,000 diagnoses would take 96 GB: numpy's MemoryError named none)."""
    if classes * values > _MAX_HISTOGRAM_CELLS:
        raise InputError(
            f"sensitive column {sensitive!r} has {values:,} distinct values over "
            f"{classes:,} combinations of the quasi-identifiers; generalize it or them first "
            "(e.g. bins or a hierarchy)"
        )
    flat = np.bincount(klass * values + codes, weights=weights, minlength=classes * values)
    return flat.astype(np.int64).reshape(classes, values)


@dataclass
class CodedColumns:
    """Columns as integer codes 0..cardinality-1 (missing values are a code of their own)."""

    names: list[str]
    codes: list[np.ndarray]
    cardinalities: list[int]

    @classmethod
    def of(cls, frame: pd.DataFrame, columns: Sequence[str]) -> CodedColumns:
        """Integer-code ``columns`` of ``frame`` (each value its code, missing values one code)."""
        require_columns(frame, columns, where="quasi_identifiers")
        codes, cards = [], []
        for name in columns:
            values, uniques = pd.factorize(frame[name], use_na_sentinel=False)
            codes.append(np.asarray(values, dtype=np.int64))  # no copy of int64 codes
            cards.append(max(len(uniques), 1))
        return cls(list(columns), codes, cards)

    def combined(self, indices: Sequence[int]) -> tuple[np.ndarray, int, bool]:
        """One code per row for the combination of the columns at ``indices``, the codes'
        space, and whether a bincount over it counts them (``veil._codes.class_key``)."""
        chosen = list(indices)
        if not chosen:
            n = len(self.codes[0]) if self.codes else 0
            return np.zeros(n, dtype=np.int64), 1, True
        return _codes.class_key(
            [self.codes[i] for i in chosen],
            [self.cardinalities[i] for i in chosen],
            recode=_factorize,
        )

    def class_sizes(
        self, indices: Sequence[int], weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(class index per row, size per class) for the combination at ``indices``; each row
        counts ``weights`` records (a table of distinct rows with their counts) or one."""
        key, space, dense = self.combined(indices)
        if dense:
            counts = np.bincount(key, minlength=space)
            present = np.flatnonzero(counts)
            remap = np.empty(space, dtype=np.int64)
            remap[present] = np.arange(len(present))
            klass = remap[key]
            if weights is None:
                return klass, counts[present]
        else:
            _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
            klass = inverse.reshape(-1)
            if weights is None:
                return klass, counts
        sizes = np.bincount(klass, weights=weights, minlength=int(klass.max(initial=-1)) + 1)
        return klass, np.rint(sizes).astype(np.int64)


def class_sizes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Equivalence classes of ``frame`` over ``columns``: (class per row, size per class)."""
    if not len(columns):
        n = len(frame)
        return np.zeros(n, dtype=np.int64), np.array([n] if n else [], dtype=np.int64)
    coded = CodedColumns.of(frame, columns)
    return coded.class_sizes(range(len(columns)))


def sensitive_key(value: str) -> str:
    """How sensitive values are told apart: "HIV", "hiv", " HIV" and "Hiv " are one value (NFKC,
    inner whitespace collapsed, case folded), else a class of five spellings of one diagnosis
    would count as five diverse values."""
    return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()


def sensitive_text(series: pd.Series) -> pd.Series:
    """A sensitive column as the text its values are told apart by (then ``sensitive_key``):
    in a float column -0.0 is 0.0, as Arrow counts it, not a second diverse value."""
    if series.dtype.kind == "f":
        series = series + 0.0  # IEEE: -0.0 + 0.0 is 0.0
    return series.astype(str)


def sensitive_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A code per row and a label per code for a sensitive column, spelling variants merged
    (``sensitive_key``); a label is the variant met first. Used by the search, Mondrian and the
    verifier alike, so that they count l and t the same way."""
    # missing is a value of its own ("nan", as the text pandas 2 made of it), never the -1
    # code that would count it as the last value found
    raw_codes, raw = pd.factorize(sensitive_text(series), use_na_sentinel=False)
    keys = [sensitive_key(str(v)) for v in raw]
    merged, _ = pd.factorize(pd.Index(keys))
    labels: dict[int, str] = {}
    for code, value in zip(merged.tolist(), raw, strict=True):
        labels.setdefault(code, str(value))
    return merged[raw_codes].astype(np.int64), [labels[i] for i in range(len(labels))]


def histograms(
    frame: pd.DataFrame, klass: np.ndarray, sensitive: str, classes: int
) -> tuple[np.ndarray, list[str]]:
    """Each class's counts of each value of ``sensitive``: an array (classes x values) for
    the class codes ``klass`` (from ``class_sizes``), and the values (spelling variants merged).
    """
    codes, values = sensitive_codes(frame[sensitive])
    return class_histograms(klass, codes, classes, len(values), sensitive=sensitive), values


#: The count column of ``Frequencies.counts``.
COUNT = "__veil_count__"
#: The column of ``Frequencies.counts`` summing sampling weights (people the rows stand for).
WEIGHT = "__veil_weight__"


@dataclass(frozen=True)
class Frequencies:
    """How many records share each combination of quasi-identifier values (and, with a
    sensitive column, each sensitive value within it): a table that can be built batch by batch
    and merged, whose class sizes and histograms equal those of the whole table.

    >>> import pandas as pd
    >>> a = pd.DataFrame({"age": ["30-39", "40-49"], "county": ["Kisumu", "Nyeri"]})
    >>> b = pd.DataFrame({"age": ["30-39"], "county": ["Kisumu"]})
    >>> both = Frequencies.of(a, ["age", "county"]).merge(Frequencies.of(b, ["age", "county"]))
    >>> sorted(both.sizes().tolist())
    [1, 2]
    """

    quasi_identifiers: tuple[str, ...]
    sensitive: str | None
    counts: pd.DataFrame  # one row per combination: the QI values, the sensitive key, the count

    @classmethod
    def of(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        sensitive: str | None = None,
        *,
        weights: np.ndarray | None = None,
        codes: Mapping[str, tuple[np.ndarray, int]] | None = None,
    ) -> Frequencies:
        """The frequencies of one table (or one batch of it); with ``weights`` (people each
        row stands for), their sums too (``WEIGHT``). ``codes``: some quasi-identifiers' values
        already coded (each row's code, and how many codes there are; equal values one code, a
        missing value a code of its own), the others coded here: the same table, counted
        without coding those columns' texts again."""
        columns = [*quasi_identifiers, *([sensitive] if sensitive else [])]
        require_columns(frame, columns, where="frequencies")
        if codes is not None and sensitive is None and weights is None and quasi_identifiers:
            keys = list(quasi_identifiers)
            return cls(tuple(keys), None, _counted(frame, keys, codes))
        data = frame[list(quasi_identifiers)].copy()
        if sensitive is not None:  # spelling variants are one value, as everywhere
            values = sensitive_text(frame[sensitive])  # pandas 3 keeps a missing value missing
            data[sensitive] = values.map(sensitive_key, na_action="ignore")
        keys = list(data.columns)
        data[COUNT] = 1
        if weights is not None:
            data[WEIGHT] = np.asarray(weights, dtype=float)
        counts = data.groupby(keys, dropna=False, sort=False, observed=True).sum().reset_index()
        return cls(tuple(quasi_identifiers), sensitive, counts)

    @classmethod
    def of_batches(
        cls,
        batches: Iterable[pd.DataFrame],
        quasi_identifiers: Sequence[str],
        sensitive: str | None = None,
    ) -> Frequencies:
        """One table from many batches (chunks of a file, partitions of a cluster)."""
        summed = FrequencySum()
        for batch in batches:
            summed.add(cls.of(batch, quasi_identifiers, sensitive))
        total = summed.total()
        if total is None:
            raise ValueError("no batches: a frequency table needs at least one")
        return total

    def merge(self, other: Frequencies) -> Frequencies:
        """The table of both tables' records together."""
        return Frequencies.merge_all([self, other])

    @staticmethod
    def merge_all(tables: Sequence[Frequencies]) -> Frequencies:
        """The table of all ``tables``' records together: one group-by of them all, with the
        combinations in the order ``merge`` one after another gives (first seen first)."""
        first = tables[0]
        columns = (first.quasi_identifiers, first.sensitive)
        if any((t.quasi_identifiers, t.sensitive) != columns for t in tables[1:]):
            raise ValueError("only tables over the same columns merge")
        if len(tables) == 1:
            return first
        keys = [c for c in first.counts.columns if c not in (COUNT, WEIGHT)]
        every = pd.concat([t.counts for t in tables], ignore_index=True)
        merged = every.groupby(keys, dropna=False, sort=False, observed=True).sum().reset_index()
        return Frequencies(first.quasi_identifiers, first.sensitive, merged)

    def project(self, quasi_identifiers: Sequence[str]) -> Frequencies:
        """The table over fewer quasi-identifiers (and no sensitive column): the counts of the
        combinations that agree on them, summed."""
        keys = list(quasi_identifiers)
        sums = [c for c in (COUNT, WEIGHT) if c in self.counts.columns]
        rolled = (
            self.counts.groupby(keys, dropna=False, sort=False, observed=True)[sums]
            .sum()
            .reset_index()
        )
        return Frequencies(tuple(keys), None, rolled)

    @property
    def rows(self) -> int:
        """How many records the table counts."""
        return int(self.counts[COUNT].sum())

    def _classes(self) -> tuple[np.ndarray, int]:
        klass, sizes = class_sizes(self.counts, list(self.quasi_identifiers))
        return klass, len(sizes)

    def sizes(self) -> np.ndarray:
        """The size of every equivalence class."""
        klass, classes = self._classes()
        return np.bincount(klass, weights=self.counts[COUNT], minlength=classes).astype(np.int64)

    def coded(self, hierarchies: Sequence[Hierarchy]) -> CodedFrequencies:
        """This table coded for the lattice by ``hierarchies`` (one per quasi-identifier)."""
        return CodedFrequencies.from_counts(
            self.counts, self.quasi_identifiers, hierarchies, sensitive=self.sensitive, count=COUNT
        )

    def histograms(self) -> tuple[np.ndarray, list[str]]:
        """(classes x sensitive values) counts, and the values."""
        if self.sensitive is None:
            raise ValueError("no sensitive column: give one to Frequencies.of")
        klass, classes = self._classes()
        codes, values = pd.factorize(self.counts[self.sensitive], use_na_sentinel=False)
        counted = class_histograms(
            klass,
            codes.astype(np.int64),
            classes,
            len(values),
            weights=self.counts[COUNT].to_numpy(),
            sensitive=self.sensitive,
        )
        return counted, [str(v) for v in values]


#: Rows of batch tables ``FrequencySum`` holds before it merges them (when they also outnumber
#: the merged table's).
SUM_ROWS = 1_000_000


class FrequencySum:
    """Frequencies added batch by batch (a stream's, a cluster's partitions'), merged in bulk:
    each merge regroups every row of the table so far, so merging at every batch regrouped the
    growing table once per batch (a second of 17 at 10M rows); the parts wait until their rows
    outnumber the merged table's and ``SUM_ROWS``, so each row is regrouped a few times at
    most. ``total()`` equals merging the parts one after another."""

    def __init__(self) -> None:
        self._merged: Frequencies | None = None
        self._parts: list[Frequencies] = []
        self._rows = 0

    def add(self, part: Frequencies | None) -> FrequencySum:
        """Count ``part``'s records too (None: nothing); returns self, to fold with."""
        if part is not None:
            self._parts.append(part)
            self._rows += len(part.counts)
            merged = 0 if self._merged is None else len(self._merged.counts)
            if self._rows > max(SUM_ROWS, merged):
                self.total()
        return self

    def total(self) -> Frequencies | None:
        """Every record added, as one table (None when nothing was)."""
        if self._parts:
            tables = [self._merged, *self._parts] if self._merged is not None else self._parts
            self._merged = Frequencies.merge_all(tables)
            self._parts, self._rows = [], 0
        return self._merged


def _combine(codes: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    """One int64 per row for the combination of its codes (``veil.frequency.mixed_radix``)."""
    return mixed_radix([codes[:, j] for j in range(codes.shape[1])], radix)[0]


def first_seen_groups(key: np.ndarray, space: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(group of every row, first row of every group), the groups numbered as first seen.
    With ``space`` (every key below it; the caller passes it only where a table of that many
    slots is cheap beside the rows, as ``_counted`` does up to twice the rows or 65,536), each
    key's first row is found by one pass over a table of the space rather than pandas' hash
    table: 500,000 rows in 5 ms rather than 15."""
    if space is not None:
        rows = len(key)
        first = np.full(space, rows, dtype=np.int64)
        np.minimum.at(first, key, np.arange(rows, dtype=np.int64))
        firsts = np.sort(first[first < rows])  # each group's first row, in the rows' order
        number = np.empty(space, dtype=np.int64)
        number[key[firsts]] = np.arange(len(firsts), dtype=np.int64)
        return number[key], firsts
    group, _ = pd.factorize(key)
    group = group.astype(np.int64)
    # groups are numbered as first seen: a group's first row is where the running highest
    # group number rises
    rises = np.diff(np.maximum.accumulate(group), prepend=-1) > 0
    return group, np.flatnonzero(rises)


def _counted(
    frame: pd.DataFrame, keys: list[str], codes: Mapping[str, tuple[np.ndarray, int]]
) -> pd.DataFrame:
    """``Frequencies.of``'s table of ``frame`` over ``keys`` (the combinations as first seen,
    each with its rows' values and its count), from ``codes`` where given."""
    coded, radix = [], []
    for name in keys:
        if name in codes:
            column, size = codes[name]
        else:
            column, uniques = pd.factorize(frame[name], use_na_sentinel=False)
            size = len(uniques)
        coded.append(np.asarray(column, dtype=np.int64))
        radix.append(max(int(size), 1))
    key, space, _ = _codes.class_key(coded, radix, recode=_factorize)
    group, first = first_seen_groups(key, space if space <= max(2 * len(key), 1 << 16) else None)
    out = {name: frame[name].take(first).reset_index(drop=True) for name in keys}
    return pd.DataFrame({**out, COUNT: np.bincount(group, minlength=len(first))})


@dataclass
class Groups:
    """Equivalence classes at a node: one representative leaf combination per class, the class
    sizes and (with a sensitive column) the sensitive-value histogram per class."""

    levels: tuple[int, ...]
    leaves: np.ndarray  # (classes, quasi-identifiers)
    sizes: np.ndarray  # (classes,)
    histograms: np.ndarray | None  # (classes, sensitive values)
    #: ``cells``, where the roll-up that made these classes knew them
    summed_cells: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.sizes)

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The histograms' cells that are not zero: each one's class, sensitive value and
        count. A class holds few of the values, so a roll-up adds these, not every cell."""
        if self.summed_cells is not None:
            return self.summed_cells
        if self.histograms is None:
            raise ValueError("these classes have no sensitive histograms")
        klass, value = np.nonzero(self.histograms)
        return klass, value, self.histograms[klass, value]


@dataclass
class CodedFrequencies:
    """The frequency table coded for the lattice: the quasi-identifiers as their hierarchies'
    leaves, shrunk to distinct combinations with their counts (and sensitive histograms), which
    the search rolls up to every node it evaluates. Built from the rows (``build``), from
    batches (``stream``) or from a ``Frequencies`` (``Frequencies.coded``, ``from_counts``)."""

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
    ) -> CodedFrequencies:
        """The frequency table of ``frame`` over ``quasi_identifiers``, each coded by its hierarchy
        (and with ``sensitive``, each class's histogram).
        """
        if not quasi_identifiers:
            raise ParameterError("the search needs at least one quasi-identifier with a hierarchy")
        leaves = np.column_stack(
            [h.encode(frame[q]) for q, h in zip(quasi_identifiers, hierarchies, strict=True)]
        )
        key = _combine(leaves, [h.domain_size for h in hierarchies])
        entry, first = first_seen_groups(key)
        sizes = np.bincount(entry).astype(np.int64)
        histograms = None
        values: list[str] = []
        if sensitive is not None:
            codes, values = sensitive_codes(frame[sensitive])
            histograms = class_histograms(
                entry, codes, len(sizes), len(values), sensitive=sensitive
            )
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
    ) -> CodedFrequencies:
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
    ) -> CodedFrequencies:
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
        entry, first = first_seen_groups(_combine(leaves, [h.domain_size for h in hierarchies]))
        sizes = np.bincount(entry, weights=weights).astype(np.int64)
        histograms = None
        values: list[str] = []
        if sensitive is not None:
            codes, values = sensitive_codes(counts[sensitive].reset_index(drop=True))
            histograms = class_histograms(
                entry, codes, len(sizes), len(values), weights, sensitive=sensitive
            )
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
        klass, first = first_seen_groups(self._key(base.leaves, levels))
        sizes = np.bincount(klass, weights=base.sizes).astype(np.int64)
        levels = tuple(int(x) for x in levels)
        if base.histograms is None:
            return Groups(levels, base.leaves[first], sizes, None)
        # summed from the base's cells that are not zero, into the new classes' cells: adult's
        # 19,805 combinations x 119 capital gains are 21,113 cells, against 2.4M in the whole
        # matrix, which a search of 12,000 nodes read once per node (49 s of `veil scan
        # --suggest-policy` on adult, now 7 s)
        values = base.histograms.shape[1]
        at, value, count = base.cells
        cell, where = pd.factorize(klass[at] * values + value)
        summed = np.bincount(cell, count, len(where)).astype(np.int64)
        histograms = np.zeros(len(first) * values, dtype=np.int64)
        histograms[where] = summed
        cells = (where // values, where % values, summed)
        shape = (len(first), values)
        return Groups(levels, base.leaves[first], sizes, histograms.reshape(shape), cells)

    def entry_classes(self, levels: Sequence[int]) -> np.ndarray:
        """The class (at ``levels``) of every bottom entry: for applying a result to rows."""
        klass, _ = first_seen_groups(self._key(self.bottom.leaves, levels))
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
