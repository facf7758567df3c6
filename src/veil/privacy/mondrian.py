"""Mondrian multidimensional local recoding (LeFevre, DeWitt, Ramakrishnan 2006), for
comparison with the optimal full-domain search.

Records are split recursively at the median of the quasi-identifier with the widest remaining
range (values ordered as their hierarchy lists them) while both halves still satisfy the
models; each final partition is then generalized, column by column, to the lowest level of
the column's hierarchy at which all its values meet. Different partitions may use different
levels (local recoding), so the release usually loses less information than a full-domain one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.frequency import sensitive_codes
from veil.hierarchy import Hierarchy
from veil.privacy.criteria import Criterion
from veil.privacy.metrics import floor10, geometric_mean


@dataclass(frozen=True)
class MondrianResult:
    """Mondrian's partition of the records, each partition's generalized values, and how many
    cuts it made."""

    data: pd.DataFrame
    partitions: int
    loss: float  # ARX's Loss formula over the per-partition generalizations


def _allowed(
    rows: np.ndarray, criteria: Sequence[Criterion], sensitive: np.ndarray | None, n_values: int
) -> bool:
    sizes = np.array([len(rows)])
    histograms = None
    if sensitive is not None:
        histograms = np.bincount(sensitive[rows], minlength=n_values)[None, :]
    return all(bool(c.holds(sizes, histograms)[0]) for c in criteria)


def mondrian(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Sequence[Hierarchy],
    criteria: Sequence[Criterion],
    *,
    sensitive: str | None = None,
) -> MondrianResult:
    """Mondrian local recoding (LeFevre et al. 2006): split the records on the median of the
    widest quasi-identifier while both halves meet ``criteria``; each partition's values are
    generalized to its range (numbers) or its hierarchy's lowest common level (categories).
    """
    leaves = np.column_stack(
        [h.encode(frame[q]) for q, h in zip(quasi_identifiers, hierarchies, strict=True)]
    )
    sens_codes, n_values = None, 0
    if sensitive is not None:
        sens_codes, values = sensitive_codes(frame[sensitive])
        n_values = len(values)
        for criterion in criteria:
            criterion.prepare(values)
    spans = np.array([max(h.domain_size - 1, 1) for h in hierarchies], dtype=float)

    final: list[np.ndarray] = []
    stack = [np.arange(len(frame))]
    if not _allowed(stack[0], criteria, sens_codes, n_values):
        stack = []  # even the whole table fails: nothing can be released
    while stack:
        rows = stack.pop()
        part = leaves[rows]
        widths = (part.max(axis=0) - part.min(axis=0)) / spans
        split = False
        for column in np.argsort(-widths):
            if widths[column] == 0:
                break  # the remaining columns hold one value each: nothing to cut
            cut = part[:, column]
            median = np.median(cut)
            left = rows[cut <= median]
            right = rows[cut > median]
            if len(right) == 0:  # the median is the maximum: cut below it instead
                left, right = rows[cut < median], rows[cut >= median]
            if (
                len(left)
                and len(right)
                and all(_allowed(side, criteria, sens_codes, n_values) for side in (left, right))
            ):
                stack.extend([left, right])
                split = True
                break
        if not split:
            final.append(rows)

    out = frame.copy(deep=False)
    columns = {q: np.empty(len(frame), dtype=object) for q in quasi_identifiers}
    shares = [h.shares() for h in hierarchies]
    lost = np.zeros(len(quasi_identifiers))
    for rows in final:
        for c, (q, h) in enumerate(zip(quasi_identifiers, hierarchies, strict=True)):
            distinct = np.unique(leaves[rows, c])
            level = next(lv for lv in range(h.height) if len(np.unique(h.maps[lv][distinct])) == 1)
            leaf = distinct[0]
            columns[q][rows] = h.labels[level][h.maps[level][leaf]]
            lost[c] += len(rows) * shares[c][level][leaf]
    suppressed = np.ones(len(frame), dtype=bool)
    for rows in final:
        suppressed[rows] = False
    for q in quasi_identifiers:
        out[q] = pd.Series(columns[q].tolist(), index=frame.index, name=q)
    out = out.loc[~suppressed]
    total = len(frame)
    normalized = []
    for c, h in enumerate(hierarchies):
        lost[c] += int(suppressed.sum())
        low = total / h.listed  # ARX: rows the hierarchy lists
        value = (lost[c] - low) / (total - low) if total > low else 0.0
        normalized.append(floor10(max(value, 0.0)))
    loss = float(geometric_mean(np.array([normalized]))[0]) if normalized else 0.0
    return MondrianResult(out, len(final), loss)
