"""A table as a network (or PCA) reads it, and back: categories as integer codes (missing is
a category of its own), numbers and dates standardized (missing: the mean). ``decode`` turns
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
    mean: dict[str, float] = field(default_factory=dict)
    std: dict[str, float] = field(default_factory=dict)
    dates: set[str] = field(default_factory=set)
    integers: set[str] = field(default_factory=set)

    @classmethod
    def fit(cls, frame: pd.DataFrame) -> TableCodec:
        """Which columns are quantities (``veil.schema.is_continuous``) and which categories."""
        codec = cls()
        for name in frame.columns:
            series = frame[name]
            if is_continuous(series):
                values = as_numbers(series)
                codec.numeric.append(name)
                codec.mean[name] = float(np.nanmean(values))
                codec.std[name] = float(np.nanstd(values)) or 1.0
                if pd.api.types.is_datetime64_any_dtype(series):
                    codec.dates.add(name)
                elif pd.api.types.is_integer_dtype(series):
                    codec.integers.add(name)
            else:
                codec.categorical.append(name)
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
        """(rows, numeric columns) float32, standardized; missing at the mean (0)."""
        out = np.zeros((len(frame), len(self.numeric)), dtype=np.float32)
        for j, name in enumerate(self.numeric):
            values = (as_numbers(frame[name]) - self.mean[name]) / self.std[name]
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
            values = numbers[:, j].astype(float) * self.std[name] + self.mean[name]
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
