"""Differential privacy with one budget: a persistent accountant (SQLite ledger) and DP
statistics computed by OpenDP. Needs the extra: pip install 'veil[dp]' (the accountant alone
does not)."""

from __future__ import annotations

from veil.dp.budget import Accountant, Budget, Entry, check_epsilon_delta
from veil.dp.query import answer, parse_query
from veil.dp.stats import (
    DPResult,
    count,
    grouped_count,
    grouped_mean,
    histogram,
    mean,
    median,
    quantile,
    std,
    sum,
    variance,
)

__all__ = [
    "Accountant",
    "Budget",
    "DPResult",
    "Entry",
    "answer",
    "check_epsilon_delta",
    "count",
    "grouped_count",
    "grouped_mean",
    "histogram",
    "mean",
    "median",
    "parse_query",
    "quantile",
    "std",
    "sum",
    "variance",
]
