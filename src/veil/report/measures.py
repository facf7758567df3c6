"""Utility measures that need no row alignment between the original and the release, so they
apply to a release read back from a file as well as to one just made: column entropy and
Cramér's V between columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

BINS = 8  # quantile bins for numbers and dates before measuring association


def entropy_bits(series: pd.Series) -> float:
    """Shannon entropy of the column's values (missing counts as a value), in bits."""
    from scipy import stats  # 0.3 s to import: only a report with the original measures this

    counts = series.astype(str).where(series.notna(), "\0missing").value_counts().to_numpy()
    return float(stats.entropy(counts, base=2)) if counts.size else 0.0


def codes(series: pd.Series) -> np.ndarray:
    """The column as category codes 0..m-1: many numbers or dates are cut into quantile bins;
    missing is a category of its own."""
    values = series
    if pd.api.types.is_datetime64_any_dtype(values):
        values = values.astype("int64").where(values.notna())
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if numeric and values.nunique() > BINS:
        values = pd.qcut(values.astype(float), BINS, duplicates="drop")
    found, _ = pd.factorize(values, use_na_sentinel=False)
    return np.asarray(found, dtype=np.int64)


def _cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    n = len(a)
    rows, cols = int(a.max(initial=-1)) + 1, int(b.max(initial=-1)) + 1
    table = np.bincount(a * cols + b, minlength=rows * cols).reshape(rows, cols)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    rows, cols = table.shape
    if n < 2 or rows < 2 or cols < 2:
        return 0.0
    from scipy import stats

    chi2 = stats.chi2_contingency(table, correction=False)[0]
    phi2 = max(0.0, chi2 / n - (rows - 1) * (cols - 1) / (n - 1))
    rows_c = rows - (rows - 1) ** 2 / (n - 1)
    cols_c = cols - (cols - 1) ** 2 / (n - 1)
    denominator = min(rows_c - 1, cols_c - 1)
    return float(np.sqrt(phi2 / denominator)) if denominator > 0 else 0.0


def cramers_v(first: pd.Series, second: pd.Series) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013) between two columns of equal length."""
    return _cramers_v(codes(first), codes(second))


def association_matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Cramér's V between every pair of ``columns`` (1 on the diagonal)."""
    coded = [codes(frame[c]) for c in columns]
    size = len(columns)
    matrix = np.eye(size)
    for i in range(size):
        for j in range(i + 1, size):
            matrix[i, j] = matrix[j, i] = _cramers_v(coded[i], coded[j])
    return matrix


def ranked(counts: pd.Series, top: int | None = None) -> pd.Series:
    """``value_counts`` output, most common first and ties by value: the same for any order of
    the rows (a release is shuffled). With ``top``, the first ``top`` only (and only the values
    that can be among them are sorted: a column of unique keys is not sorted as text)."""
    if top is not None and len(counts) > top:
        counts = counts[counts >= counts.iloc[top - 1]]  # value_counts: already descending
    order = np.lexsort((counts.index.astype(str).to_numpy(), -counts.to_numpy()))
    return counts.iloc[order].head(top) if top is not None else counts.iloc[order]
