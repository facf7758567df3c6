"""A DP statistic asked for in words: ``answer(frame, "mean(Age)", epsilon=1, ...)`` parses the
query and calls the statistic of ``veil.dp.stats`` it names (``veil dp``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from veil.dp import stats as dpstats
from veil.dp.budget import Accountant
from veil.dp.stats import DPResult
from veil.exceptions import ParameterError

__all__ = ["QUERIES", "answer", "parse_query"]

#: The statistics a query names, as the error lists them.
QUERIES = (
    "count(), count(col), sum(col), mean(col), variance(col), std(col), median(col), "
    "quantile(col, q) or histogram(col)"
)


def parse_query(query: str) -> tuple[str, list[str]]:
    """``"quantile(Age, 0.9)"`` as ``("quantile", ["Age", "0.9"])``."""
    match = re.fullmatch(r"\s*(\w+)\s*\(([^)]*)\)\s*", query)
    if match is None:
        raise ParameterError(f'query must look like "mean(Age)", got {query!r}')
    args = [a.strip() for a in match.group(2).split(",") if a.strip() and a.strip() != "*"]
    return match.group(1).lower(), args


def answer(
    frame: pd.DataFrame,
    query: str,
    *,
    epsilon: float,
    accountant: Accountant,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Sequence[str] | None = None,
    by: str | None = None,
    person: str | None = None,
    max_contributions: int = 1,
) -> DPResult:
    """The differentially private answer to ``query`` on ``frame``, charged to ``accountant``.

    Parameters
    ----------
    frame : DataFrame
        The table.
    query : str
        ``count()``, ``count(col)``, ``sum(col)``, ``mean(col)``, ``variance(col)``,
        ``std(col)``, ``median(col)``, ``quantile(col, q)`` or ``histogram(col)``.
    epsilon : float
        The budget the answer spends.
    accountant : Accountant
        The ledger charged.
    bounds : mapping, optional
        Public bounds by column (``{"Age": (18, 90)}``).
    categories : list of str, optional
        Public categories of the column, or of ``by``.
    by : str, optional
        Answer ``count()`` or ``mean(col)`` per group of this column (the groups are disjoint:
        all of them cost ``epsilon`` once); needs ``categories``.
    person, max_contributions
        A column naming each row's person, and the rows kept per person: ``epsilon`` then
        protects a person (count, sum, mean and histogram).

    Returns
    -------
    DPResult
        The noisy answer, its accuracy and notes.
    """
    name, args = parse_query(query)
    limits = dict(bounds or {})
    column = args[0] if args else None
    common: dict[str, Any] = {"epsilon": epsilon, "accountant": accountant}
    if person is not None or max_contributions != 1:
        if by is not None or name not in {"count", "sum", "mean", "histogram"}:
            raise ParameterError(
                "--person-id bounds one person's rows in count(), sum(col), "
                "mean(col) and histogram(col), without --by"
            )
        common.update(person=person, max_contributions=max_contributions)
    cats = list(categories) if categories is not None else None
    if by is not None:
        return _grouped(frame, query, name, column, by, cats, limits, common)
    if name == "count":
        return dpstats.count(frame, column, **common)
    if name in {"sum", "mean", "variance", "std", "median"} and column:
        result: DPResult = getattr(dpstats, name)(
            frame, column, bounds=limits.get(column), **common
        )
        return result
    if name == "quantile" and len(args) == 2:
        try:
            q = float(args[1])
        except ValueError as e:
            raise ParameterError(
                f"the q of quantile(col, q) must be a number in [0, 1], got "
                f'{args[1]!r}; e.g. "quantile(Age, 0.9)"'
            ) from e
        return dpstats.quantile(frame, args[0], q, bounds=limits.get(args[0]), **common)
    if name == "histogram" and column:
        return dpstats.histogram(
            frame, column, bounds=limits.get(column), categories=cats, **common
        )
    raise ParameterError(f"query must be {QUERIES}, got {query!r}")


def _grouped(
    frame: pd.DataFrame,
    query: str,
    name: str,
    column: str | None,
    by: str,
    cats: list[str] | None,
    limits: dict[str, tuple[float, float]],
    common: dict[str, Any],
) -> DPResult:
    if cats is None:
        raise ParameterError(
            f"--by {by} needs the groups, from public knowledge: --categories A,B,C"
        )
    if name == "count" and column is None:
        return dpstats.grouped_count(frame, by, categories=cats, **common)
    if name == "mean" and column:
        return dpstats.grouped_mean(
            frame, column, by, categories=cats, bounds=limits.get(column), **common
        )
    raise ParameterError(f"--by answers count() or mean(col) per group, got {query!r}")
