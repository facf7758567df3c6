"""Differential privacy with one budget: a persistent accountant (SQLite ledger) and DP
statistics computed by OpenDP. Needs the extra: pip install 'veil[dp]' (the accountant alone
does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from veil._lazy import lazy_names

if TYPE_CHECKING:
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

#: Where each public name lives: loaded on first use, so that the budget's commands
#: (``veil budget show``) load neither pandas nor OpenDP.
_LAZY = {
    **dict.fromkeys(("Accountant", "Budget", "Entry", "check_epsilon_delta"), "veil.dp.budget"),
    **dict.fromkeys(("answer", "parse_query"), "veil.dp.query"),
    **dict.fromkeys(
        (
            "DPResult",
            "count",
            "grouped_count",
            "grouped_mean",
            "histogram",
            "mean",
            "median",
            "quantile",
            "std",
            "sum",
            "variance",
        ),
        "veil.dp.stats",
    ),
}

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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
