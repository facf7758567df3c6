"""A table as a network (or PCA) reads it, and back: categories as integer codes (missing is
a category of its own), numbers and dates as normal scores of their ranks (a piecewise-linear
map through 1,001 quantiles, exact both ways between them: a column that is 0 for most rows
and large for a few no longer drowns the others' error; missing: the median). ``decode`` turns
a network's outputs (or PCA's inverse) into values of the original columns, which is what a
reconstruction attack compares with the truth."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from veil.schema import DAY_NS, as_numbers, is_continuous

MISSING = "(missing)"


@dataclass
class TableCodec:
    """Fitted on the rows the model learns from; applied alike to every table."""

    numeric: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    categories: dict[str, list[str]] = field(default_factory=dict)  # code -> value
    knots: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # x -> z
    dates: set[str] = field(default_factory=set)
    integers: set[str] = field(default_factory=set)
    blanks: set[str] = field(default_factory=set)  # categorical columns with missing values

    @classmethod
    def fit(cls, frame: pd.DataFrame) -> TableCodec:
        """Which columns are quantities (``veil.schema.is_continuous``) and which categories."""
        codec = cls()
        for name in frame.columns:
            series = frame[name]
            if is_continuous(series):
                values = as_numbers(series)
                codec.numeric.append(name)
                codec.knots[name] = _knots(values[~np.isnan(values)])
                if pd.api.types.is_datetime64_any_dtype(series):
                    codec.dates.add(name)
                elif pd.api.types.is_integer_dtype(series):
                    codec.integers.add(name)
            else:
                codec.categorical.append(name)
                if series.isna().any():
                    codec.blanks.add(name)
                seen = series.dropna().astype(str).value_counts().index.tolist()
                codec.categories[name] = [MISSING, *sorted(seen)]
        return codec

    @property
    def cardinalities(self) -> list[int]:
        """Codes per categorical column (the missing code included)."""
        return [len(self.categories[c]) for c in self.categorical]

    def codes(self, frame: pd.DataFrame) -> np.ndarray:
        """(rows, categorical columns) int64; a value not seen in fitting reads as missing."""
        out = np.zeros((len(frame), len(self.categorical)), dtype=np.int64)
        for j, name in enumerate(self.categorical):
            lookup = {v: i for i, v in enumerate(self.categories[name])}
            text = frame[name].astype("string")
            out[:, j] = [0 if pd.isna(v) else lookup.get(str(v), 0) for v in text]
        return out

    def numbers(self, frame: pd.DataFrame) -> np.ndarray:
        """(rows, numeric columns) float32, normal scores; missing at the median (0)."""
        out = np.zeros((len(frame), len(self.numeric)), dtype=np.float32)
        for j, name in enumerate(self.numeric):
            x, z = self.knots[name]
            values = np.interp(as_numbers(frame[name]), x, z)
            out[:, j] = np.nan_to_num(values, nan=0.0)
        return out

    def one_hot(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Numbers standardized and one 0/1 column per category (what PCA reads)."""
        parts = {f"{c}": self.numbers(frame)[:, j] for j, c in enumerate(self.numeric)}
        codes = self.codes(frame)
        for j, name in enumerate(self.categorical):
            for code, value in enumerate(self.categories[name]):
                parts[f"{name}={value}"] = (codes[:, j] == code).astype(np.float32)
        return pd.DataFrame(parts, index=frame.index)

    def from_one_hot(self, matrix: np.ndarray) -> pd.DataFrame:
        """The inverse of :meth:`one_hot` for a (reconstructed) matrix: each category block
        read by its largest column."""
        k = len(self.numeric)
        numbers = matrix[:, :k]
        logits, start = [], k
        for size in self.cardinalities:
            logits.append(matrix[:, start : start + size])
            start += size
        return self.decode([block.argmax(axis=1) for block in logits], numbers)

    def decode(self, codes: list[np.ndarray], numbers: np.ndarray) -> pd.DataFrame:
        """Values of the original columns from codes per categorical column and standardized
        numbers (a category code 0 reads as missing)."""
        out: dict[str, pd.Series] = {}
        for j, name in enumerate(self.numeric):
            x, z = self.knots[name]
            values = np.interp(numbers[:, j].astype(float), z, x)
            if name in self.dates:
                out[name] = pd.Series(pd.to_datetime(np.round(values * DAY_NS).astype("int64")))
            elif name in self.integers:
                out[name] = pd.Series(np.round(values)).astype("Int64")
            else:
                out[name] = pd.Series(values)
        for j, name in enumerate(self.categorical):
            table = np.array(self.categories[name], dtype=object)
            values = table[np.asarray(codes[j])]
            out[name] = pd.Series(np.where(values == MISSING, None, values), dtype=object)
        return pd.DataFrame({c: out[c].to_numpy() for c in [*self.numeric, *self.categorical]})


def _knots(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Increasing (value, normal score) pairs: each distinct quantile of ``values`` at the
    normal score of the mean level it stands for (a value held by many rows is one knot)."""
    from scipy.stats import norm

    if len(values) == 0:
        return np.array([0.0, 1.0]), np.array([-1.0, 1.0])
    levels = np.linspace(0, 1, 1001)
    quantiles = np.quantile(values, levels)
    x, inverse = np.unique(quantiles, return_inverse=True)
    level = np.bincount(inverse, weights=levels) / np.bincount(inverse)
    z = norm.ppf(np.clip(level, 5e-4, 1 - 5e-4))
    if len(x) == 1:  # one value: a flat column
        return np.array([x[0], x[0] + 1.0]), np.array([0.0, 1e-9])
    return x, z
