"""Utility measures that need no row alignment between the original and the release, so they
apply to a release read back from a file as well as to one just made: column entropy and
Cramér's V between columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

BINS = 8  # quantile bins for numbers and dates before measuring association


def entropy_bits(series: pd.Series) -> float:
    """Shannon entropy of the column's values (missing counts as a value), in bits."""
    counts = series.astype(str).where(series.notna(), "\0missing").value_counts().to_numpy()
    return float(stats.entropy(counts, base=2)) if counts.size else 0.0


def _categories(series: pd.Series) -> pd.Series:
    """Codes of a column as categories: many numbers or dates are cut into quantile bins."""
    values = series
    if pd.api.types.is_datetime64_any_dtype(values):
        values = values.astype("int64").where(values.notna())
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if numeric and values.nunique() > BINS:
        values = pd.qcut(values.astype(float), BINS, duplicates="drop")
    codes = pd.Series(pd.factorize(values.astype(str).where(values.notna(), "\0missing"))[0])
    return codes


def cramers_v(first: pd.Series, second: pd.Series) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013) between two columns of equal length."""
    a, b = _categories(first).to_numpy(), _categories(second).to_numpy()
    n = len(a)
    table = pd.crosstab(a, b).to_numpy()
    rows, cols = table.shape
    if n < 2 or rows < 2 or cols < 2:
        return 0.0
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    phi2 = max(0.0, chi2 / n - (rows - 1) * (cols - 1) / (n - 1))
    rows_c = rows - (rows - 1) ** 2 / (n - 1)
    cols_c = cols - (cols - 1) ** 2 / (n - 1)
    denominator = min(rows_c - 1, cols_c - 1)
    return float(np.sqrt(phi2 / denominator)) if denominator > 0 else 0.0


def association_matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Cramér's V between every pair of ``columns`` (1 on the diagonal)."""
    size = len(columns)
    matrix = np.eye(size)
    for i in range(size):
        for j in range(i + 1, size):
            value = cramers_v(frame[columns[i]], frame[columns[j]])
            matrix[i, j] = matrix[j, i] = value
    return matrix
