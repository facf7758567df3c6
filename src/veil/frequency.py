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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.schema import require_columns

__all__ = [
    "COUNT",
    "CodedColumns",
    "Frequencies",
    "class_sizes",
    "histograms",
    "sensitive_codes",
    "sensitive_key",
]

_MAX_DENSE = 50_000_000  # largest code space counted with bincount; beyond, np.unique


def mixed_radix(codes: Sequence[np.ndarray], radix: Sequence[int]) -> tuple[np.ndarray, int]:
    """One int64 per row for the combination of its codes (``codes[j]`` of column j, in
    ``0..radix[j]-1``), and the size of the key space; re-coded (factorized) whenever the space
    would pass 2**62, so it never overflows."""
    n = len(codes[0]) if len(codes) else 0
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for column, r in zip(codes, radix, strict=True):
        r = max(int(r), 1)
        if space * r >= 2**62:  # re-code to keep the radix small
            key, uniques = pd.factorize(key)
            key = key.astype(np.int64)
            space = max(len(uniques), 1)
        key = key * r + column
        space *= r
    return key, space


def class_histograms(
    klass: np.ndarray,
    codes: np.ndarray,
    classes: int,
    values: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """(classes x values) counts of each sensitive code per class: ``klass`` and ``codes``
    per row, each row standing for ``weights`` records (a table of distinct rows) or one."""
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
            codes.append(values.astype(np.int64))
            cards.append(max(len(uniques), 1))
        return cls(list(columns), codes, cards)

    def combined(self, indices: Sequence[int]) -> tuple[np.ndarray, int]:
        """One code per row for the combination of the columns at ``indices``."""
        chosen = list(indices)
        if not chosen:
            n = len(self.codes[0]) if self.codes else 0
            return np.zeros(n, dtype=np.int64), 1
        return mixed_radix([self.codes[i] for i in chosen], [self.cardinalities[i] for i in chosen])

    def class_sizes(
        self, indices: Sequence[int], weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(class index per row, size per class) for the combination at ``indices``; each row
        counts ``weights`` records (a table of distinct rows with their counts) or one."""
        key, space = self.combined(indices)
        if space <= _MAX_DENSE:
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


def sensitive_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A code per row and a label per code for a sensitive column, spelling variants merged
    (``sensitive_key``); a label is the variant met first. Used by the search, Mondrian and the
    verifier alike, so that they count l and t the same way."""
    raw_codes, raw = pd.factorize(series.astype(str))
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
    return class_histograms(klass, codes, classes, len(values)), values


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
    ) -> Frequencies:
        """The frequencies of one table (or one batch of it); with ``weights`` (people each
        row stands for), their sums too (``WEIGHT``)."""
        columns = [*quasi_identifiers, *([sensitive] if sensitive else [])]
        require_columns(frame, columns, where="frequencies")
        data = frame[list(quasi_identifiers)].copy()
        if sensitive is not None:  # spelling variants are one value, as everywhere
            values = frame[sensitive].astype(str)
            data[sensitive] = values.map(sensitive_key)
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
        total: Frequencies | None = None
        for batch in batches:
            part = cls.of(batch, quasi_identifiers, sensitive)
            total = part if total is None else total.merge(part)
        if total is None:
            raise ValueError("no batches: a frequency table needs at least one")
        return total

    def merge(self, other: Frequencies) -> Frequencies:
        """The table of both tables' records together."""
        if (self.quasi_identifiers, self.sensitive) != (other.quasi_identifiers, other.sensitive):
            raise ValueError("only tables over the same columns merge")
        keys = [c for c in self.counts.columns if c not in (COUNT, WEIGHT)]
        both = pd.concat([self.counts, other.counts], ignore_index=True)
        merged = both.groupby(keys, dropna=False, sort=False, observed=True).sum().reset_index()
        return Frequencies(self.quasi_identifiers, self.sensitive, merged)

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

    def histograms(self) -> tuple[np.ndarray, list[str]]:
        """(classes x sensitive values) counts, and the values."""
        if self.sensitive is None:
            raise ValueError("no sensitive column: give one to Frequencies.of")
        klass, classes = self._classes()
        codes, values = pd.factorize(self.counts[self.sensitive])
        counted = class_histograms(
            klass,
            codes.astype(np.int64),
            classes,
            len(values),
            weights=self.counts[COUNT].to_numpy(),
        )
        return counted, [str(v) for v in values]
