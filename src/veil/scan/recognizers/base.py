"""Recognizers: what a column's values say it is.

A recognizer looks at a ``ColumnSample`` (a random sample of the column's values, plus the
whole column for confirmation) and returns ``Evidence`` or None. Kinds, as in Presidio:

- ``PatternRecognizer``: regular expressions plus an optional ``validate`` hook (a checksum
  from python-stdnum, a phone-number parse) that confirms or drops each hit; the shape is then
  confirmed on every row with one vectorized regex.
- ``VocabularyRecognizer``: the share of values found in a word list (genders, places...).
- Numeric and date recognizers live in ``numeric.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.io._dates import mostly_dates
from veil.scan.recognizers.normalize import normalize

_CONFIRM_DISTINCT = 100_000
#: No entry of a word list is longer: a longer cell is not looked up (nor normalized, which a
#: cell of megabytes would make the scan's slowest step).
LONGEST_WORD = 256
#: A value (``normalize``d) that says the answer is not known: "Unknown", "N/A", "Not stated",
#: "Refused", FARS's "Not a fatal(N/A)". No vocabulary is of it, so it counts neither for a
#: column being of one nor against (a race column half "Not a fatal(N/A)" is still of races).
NOT_STATED = re.compile(
    r"^(?:unknown|unk|n/?a|missing|blank|refused|no answer|prefer not to say|don'?t know"
    r"|not (?:stated|known|available|applicable|reported|specified|recorded|given))$"
    r"|(?:^|\s)n/a(?:\s|$)"
)
#: No value a pattern recognizes (an e-mail address has at most 254 characters, an IBAN 34) is
#: longer: a longer cell is not matched whole against every pattern.
LONGEST_VALUE = 512
# Two words of letters. Linear in the cell: a word is tried only where one starts and is taken
# whole (possessive), so a run of a million letters is one step, not a million (the pattern
# without them backtracked over every start: quadratic, minutes on a cell of 100,000 letters).
_TWO_WORDS = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}+[\s,;:.!?-]++[^\W\d_]{2}")


@dataclass(frozen=True)
class Entity:
    """What a recognizer finds, declared once beside it: the role the entity gives its
    column, the words of a column name that hint at it (English and Swahili), whether a
    pseudonym keeps its shape (an ID other tables join on) and whether it is searched for
    inside free text. ``veil.scan`` reads every fact from here; a new entity is one
    declaration in its recognizer's module."""

    name: str
    role: str  # "identifier", "quasi_identifier" or "sensitive"
    hints: tuple[str, ...] = ()
    keeps_shape: bool = False
    in_text: bool = False
    #: words shortly before a match in free text that make a merely possible one count ("call
    #: 555-0100"), as Presidio's context words; with ``context_required`` nothing counts
    #: without them (8 digits are a Kenyan ID after "ID no", an amount otherwise)
    context: tuple[str, ...] = ()
    context_required: bool = False
    #: the entity in a sentence: "a phone number" (evidence, reports)
    label: str = ""
    #: column-name words that mean this entity only in a table of its kind: in a health table
    #: "slope", "ca", "observation" and the model's "target" are clinical; elsewhere not
    table_hints: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in {"identifier", "quasi_identifier", "sensitive"}:
            raise ValueError(f"entity {self.name}: role must be a personal role, got {self.role!r}")


@dataclass(frozen=True)
class Evidence:
    """One reason to think a column holds ``entity``; ``score`` in [0, 1]."""

    entity: str | None  # None: personal but not a named entity (a unique key, free text)
    score: float
    detail: str
    role: str | None = None  # set when the role does not follow from the entity
    # read from a distribution (ages, amounts, keys), not a pattern: a meaningful column name
    # that hints at nothing else weakens it ("HourlyRate" holds numbers 30-100, not ages)
    heuristic: bool = False


@dataclass(frozen=True)
class Numbers:
    """What number recognizers read of a whole column: its range, median, whether every value
    is whole, and its skewness (population moments)."""

    count: int
    low: float
    high: float
    median: float
    integral: bool
    skew: float

    @classmethod
    def of(cls, values: np.ndarray) -> Numbers:
        """The facts of ``values`` (floats, none missing)."""
        if not len(values):
            return cls(0, np.nan, np.nan, np.nan, False, 0.0)
        std = values.std()
        skew = float(((values - values.mean()) ** 3).mean() / std**3) if std > 0 else 0.0
        return cls(
            len(values),
            float(values.min()),
            float(values.max()),
            float(np.median(values)),
            bool(np.all(values == np.round(values))),
            skew,
        )


def value_texts(values: np.ndarray, kind: str, integral: bool) -> pa.Array:
    """Present values as Arrow strings, as patterns are confirmed on them: numbers of a column
    whose every value is whole (``integral``, over the whole column) without ``.0``."""
    if kind == "numeric":
        if np.issubdtype(values.dtype, np.floating) and integral:
            values = values.astype(np.int64)
        return pa.array(values.astype(str))
    return pa.array(pd.Series(values).astype(str).to_numpy(dtype=object), type=pa.string())


def matching(texts: pa.Array | pa.ChunkedArray, regex: str) -> int:
    """How many of ``texts`` (spaces trimmed) fully match ``regex`` (vectorized)."""
    trimmed = pc.utf8_trim_whitespace(texts)
    return int(pc.sum(pc.match_substring_regex(trimmed, f"^(?:{regex})$")).as_py() or 0)


class WholeColumn:
    """A column's facts over all its rows, which recognizers confirm their sample's verdict on:
    how many values match a pattern, the values' counts, the numbers' range and shape. In
    memory they are read from the series; a table read in batches measures them in passes
    (``veil.scan.passes``)."""

    def matching(self, regex: str) -> int:
        """How many present values fully match ``regex``."""
        raise NotImplementedError

    def value_counts(self) -> pd.Series | None:
        """Rows per present value; None when the column has more than ``COUNTED`` values."""
        raise NotImplementedError

    def numbers(self) -> Numbers:
        """The facts of a number column's present values."""
        raise NotImplementedError


#: Value counts are kept up to this many distinct values (vocabulary shares are exact below it).
COUNTED = _CONFIRM_DISTINCT


class InMemory(WholeColumn):
    """The facts read from the whole series in memory."""

    def __init__(self, series: pd.Series, kind: str) -> None:
        self.series, self.kind = series, kind

    @cached_property
    def _valid(self) -> np.ndarray:
        return self.series.dropna().to_numpy()

    def matching(self, regex: str) -> int:
        """Whether every row's value matches the pattern (all rows are in memory here)."""
        values = self._valid
        integral = self.kind == "numeric" and self.numbers().integral
        return matching(value_texts(values, self.kind, integral), regex)

    def value_counts(self) -> pd.Series | None:
        """The column's values with their counts."""
        return self._counts

    @cached_property
    def _counts(self) -> pd.Series | None:
        counts = self.series.value_counts(dropna=True)
        return counts if len(counts) <= COUNTED else None

    def numbers(self) -> Numbers:
        """The column's values as numbers (missing where they are not)."""
        return self._numbers

    @cached_property
    def _numbers(self) -> Numbers:
        return Numbers.of(self._valid.astype(float))


@dataclass
class ColumnSample:
    """A column as recognizers see it: a sample to decide, the whole column to confirm."""

    name: str
    whole: WholeColumn
    sample: pd.Series  # non-missing values, randomly sampled
    n_rows: int
    n_valid: int
    n_distinct: int
    kind: str  # "numeric", "datetime", "boolean", "text"
    positions: np.ndarray | None = field(default=None, repr=False)  # the sample's rows
    _texts: list[str] | None = field(default=None, repr=False)

    @property
    def texts(self) -> list[str]:
        """The sample as stripped strings (integral floats without ``.0``)."""
        if self._texts is None:
            values = self.sample.to_numpy(dtype=object)
            self._texts = [
                (str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)).strip()
                for v in values
            ]
        return self._texts

    @property
    def distinct_ratio(self) -> float:
        """Distinct values over present values in the whole column (1.0: every value is unique)."""
        return self.n_distinct / self.n_valid if self.n_valid else 0.0

    @cached_property
    def sample_distinct(self) -> int:
        return len(set(self.texts))

    @cached_property
    def mean_length(self) -> float:
        return float(np.mean([len(t) for t in self.texts])) if self.texts else 0.0

    @cached_property
    def is_free_text(self) -> bool:
        """Sentences rather than values: long, spaced, mostly distinct."""
        if self.kind != "text" or not self.texts:
            return False
        spaced = sum(" " in t for t in self.texts) / len(self.texts)
        return self.mean_length >= 25 and spaced >= 0.5 and self.distinct_ratio >= 0.5

    @cached_property
    def has_prose(self) -> bool:
        """Words rather than codes in a good share of cells (notes, comments, short
        messages): worth searching inside for entities. A few values each repeated over many
        rows ("Diabetes mellitus Typ 2", "United-States") are a category, not prose."""
        if self.kind != "text" or not self.texts or self.sample_distinct < 2:
            return False
        worded = sum(bool(_TWO_WORDS.search(t)) for t in self.texts) / len(self.texts)
        if worded < 0.3 or not (self.is_free_text or self.mean_length >= 12):
            return False
        counts = self.whole.value_counts()
        if counts is None or len(counts) > 200:
            return True
        # a note written once is a singleton of a few words, in more than one row in a
        # thousand; a rare category ("Armed-Forces" once in 500 rows) is a singleton too, but
        # shaped like the other categories
        singles = counts.index[counts == 1]
        written = sum(len(str(v).split()) >= 3 for v in singles)
        return written > 0.001 * self.n_valid

    @cached_property
    def dates(self) -> pd.Series | None:
        """The sample as dates, if at least 90% of it reads as dates, as ``read`` reads them
        (spaces trimmed, day/month order detected even when a real export mixes them:
        2021/04/13 and 2021/13/04); None otherwise. Parsed once, for every date recognizer."""
        if self.kind == "datetime":
            return self.sample
        if self.kind != "text" or not self.texts or self.mean_length > 30:
            return None
        return mostly_dates(pd.Series(self.texts))

    def confirm(self, regex: str) -> float:
        """Share of all non-missing values that fully match ``regex``."""
        if not self.n_valid:
            return 0.0
        return self.whole.matching(regex) / self.n_valid


def percent(x: float) -> str:
    """A share as a short percentage: ``0.5`` -> ``50%``, ``0.004`` -> ``0.4%``."""
    return f"{100 * x:.0f}%" if x >= 0.01 or x == 0 else f"{100 * x:.1f}%"


@dataclass(frozen=True)
class Pattern:
    """A regular expression for an entity, with its score and an optional checksum that confirms
    a match."""

    name: str
    regex: str
    score: float  # confidence of a shape-only hit (before validation)
    #: searched for inside free text only, never as a whole value (bare digits are a phone
    #: number after "call ... on", and account numbers in a column)
    text_only: bool = False


class PatternRecognizer:
    """Values whose shape matches a pattern, confirmed by ``validate`` where one exists.

    ``validate`` returns True (confirmed: the hit scores 1.0), False (a look-alike: dropped)
    or None (no opinion: the pattern's score stands).
    """

    def __init__(
        self,
        entity: str,
        patterns: Sequence[Pattern],
        *,
        description: str,
        validate: Callable[[str], bool | None] | None = None,
        min_share: float = 0.6,
        numeric_ok: bool = False,
        heuristic: bool = False,
    ) -> None:
        self.entity = entity
        self.heuristic = heuristic
        self.patterns = tuple(patterns)
        self.description = description
        self.validate = validate
        self.min_share = min_share
        self.numeric_ok = numeric_ok
        self.text_patterns = self.patterns
        self.patterns = tuple(p for p in self.patterns if not p.text_only)
        self.union = "|".join(f"(?:{p.regex})" for p in self.patterns)
        #: every pattern, for the search inside free text
        self.text_union = "|".join(f"(?:{p.regex})" for p in self.text_patterns)

    # the compiled patterns are made when first used: most commands match no value against
    # them, and compile none of the recognizers' ~150 expressions at start-up

    @cached_property
    def _shapes(self) -> list[tuple[re.Pattern[str], bool, float]]:
        """(whole-value pattern, text only, score) of each pattern, for ``score_value``."""
        return [(re.compile(f"^(?:{p.regex})$"), p.text_only, p.score) for p in self.patterns]

    @cached_property
    def _text_shapes(self) -> list[tuple[re.Pattern[str], bool, float]]:
        """``_shapes`` of every pattern, those searched inside free text only too."""
        return [(re.compile(f"^(?:{p.regex})$"), p.text_only, p.score) for p in self.text_patterns]

    @cached_property
    def _any_full(self) -> re.Pattern[str] | None:
        """Any pattern, as a whole value."""
        return re.compile(f"^(?:{self.union})$") if self.patterns else None

    def score_value(self, text: str, *, in_text: bool = False) -> float:
        """How sure one value is this entity: the matching pattern's score, 1.0 when its checksum
        validates, 0.0 when no pattern matches or the checksum fails. ``in_text``: a hit
        inside free text, where the text-only patterns count too.
        """
        for compiled, text_only, score in self._text_shapes if in_text else self._shapes:
            if compiled.match(text):
                verdict = self.validate(text) if self.validate is not None else None
                if verdict is False:
                    return 0.0
                # a text-only shape counts with its context words, however it validates
                return 1.0 if verdict and not text_only else score
        return 0.0

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence from the share of sampled values the patterns match (checksums validated),
        or None below the recognizer's threshold.
        """
        if column.kind == "datetime" or (column.kind == "numeric" and not self.numeric_ok):
            return None
        texts = column.texts
        if not texts:
            return None
        # one regex of every pattern: a value matches it exactly when it matches one of them
        if self._any_full is None:
            return None  # no pattern of whole values (text only): no value matches
        shape = [len(t) <= LONGEST_VALUE and self._any_full.match(t) is not None for t in texts]
        n_shape = sum(shape)
        if n_shape / len(texts) < self.min_share:  # too few, even if every one validated
            return None
        scores = [self.score_value(t) if ok else 0.0 for t, ok in zip(texts, shape, strict=True)]
        n_valid = sum(s > 0 for s in scores)
        if n_valid / len(texts) < self.min_share:
            return None
        # the shape is confirmed on every row (one vectorized regex); validation, a Python call
        # per value, is measured on the sample and extrapolated
        share = column.confirm(self.union) * (n_valid / n_shape)
        if share < self.min_share:
            return None
        detail = f"{percent(share)} of {column.n_valid:,} values look like {self.description}"
        return Evidence(
            self.entity, share * sum(scores) / n_valid, detail, heuristic=self.heuristic
        )


class VocabularyRecognizer:
    """Values found in a word list, weighted by how often each value occurs."""

    def __init__(
        self,
        entity: str,
        words: Callable[[], Collection[str]],
        *,
        description: str,
        min_share: float = 0.7,
        max_distinct: int | None = None,
        min_distinct: int = 1,
        weight: float = 0.9,
        normalizer: Callable[[str], str] = normalize,
    ) -> None:
        self.normalizer = normalizer
        self.entity = entity
        self.words = words
        self.description = description
        self.min_share = min_share
        self.max_distinct = max_distinct
        self.min_distinct = min_distinct
        self.weight = weight

    def shares(self, counts: pd.Series) -> tuple[float, float, int]:
        """How much of a column's values (``counts``: value -> rows) the vocabulary knows:
        the share of its distinct values, each weighted by the log of its frequency; the share
        of its rows; the number of distinct values known. The first decides: a column is of
        places when most of its values are places, not when one frequent word is ("Well", 636
        of 693 health statuses, is also a place name somewhere)."""
        vocabulary = self.words()
        texts = [str(t) for t in counts.index]
        keys = [self.normalizer(t) if len(t) <= LONGEST_WORD else None for t in texts]
        known = np.fromiter((k is not None and k in vocabulary for k in keys), bool, len(keys))
        # a value saying the answer is not known is neither for the vocabulary nor against it,
        # even one a word list holds ("unknown" among genders); read from the words already
        # normalized where the list's own normalizer is the plain one (all but places')
        plain = (
            keys
            if self.normalizer is normalize
            else [normalize(t) if k is not None else None for t, k in zip(texts, keys, strict=True)]
        )
        silent = np.fromiter(
            (p is not None and NOT_STATED.search(p) is not None for p in plain), bool, len(keys)
        )
        known &= ~silent
        rows = counts.to_numpy(dtype=float)
        weights = np.where(silent, 0.0, np.log1p(rows))
        total = weights.sum()
        if not total:
            return 0.0, 0.0, 0
        return (
            float(weights[known].sum() / total),
            float(rows[known].sum() / rows.sum()),
            int(known.sum()),
        )

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence from the share of the column's distinct values found in the vocabulary
        (weighted by the log of their frequency), or None below ``min_share``."""
        if column.kind != "text" or not column.texts:
            return None
        if self.max_distinct is not None and column.n_distinct > self.max_distinct:
            return None
        if column.n_distinct < self.min_distinct:
            return None
        share, rows, known = self.shares(pd.Series(column.texts).value_counts())
        distinct = len(set(column.texts))
        scope = "sampled values"
        if share >= self.min_share and column.n_distinct <= _CONFIRM_DISTINCT:
            # confirm on every row: one value_counts
            counts = column.whole.value_counts()
            if counts is not None:
                share, rows, known = self.shares(counts)
                distinct, scope = len(counts), f"{column.n_valid:,} values"
        if share < self.min_share:
            return None
        detail = (
            f"{known:,} of {distinct:,} distinct values ({percent(rows)} of {scope}) are "
            f"{self.description}"
        )
        return Evidence(self.entity, share * self.weight, detail)
