"""Privacy models measured on a table: equivalence classes over the quasi-identifiers.

This is the straightforward group-by version used to check a release; the privacy engine's
search works on integer-coded frequency tables instead (see DESIGN.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from veil.scan.risk import class_sizes
from veil.schema import require_columns


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


@dataclass(frozen=True)
class ClassStats:
    """Equivalence-class statistics of a table over its quasi-identifiers."""

    quasi_identifiers: tuple[str, ...]
    rows: int
    classes: int
    k: int  # size of the smallest class (rows if there are no quasi-identifiers)
    unique_rows: int  # rows alone in their class: re-identifiable by linkage
    average_class_size: float
    l_distinct: int | None = None  # fewest distinct sensitive values in a class

    @property
    def unique_share(self) -> float:
        return self.unique_rows / self.rows if self.rows else 0.0

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["quasi_identifiers"] = list(self.quasi_identifiers)
        data["unique_share"] = self.unique_share
        return data


def class_stats(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], *, sensitive: Sequence[str] = ()
) -> ClassStats:
    """k (smallest class), uniques and, with ``sensitive``, the distinct l of ``frame``."""
    qis = list(quasi_identifiers)
    require_columns(frame, [*qis, *sensitive], where="quasi_identifiers/sensitive")
    rows = len(frame)
    if not qis or rows == 0:
        return ClassStats(tuple(qis), rows, 1 if rows else 0, rows, 0, float(rows))
    codes, sizes = class_sizes(frame, qis)
    l_distinct = None
    if sensitive:
        per_class = [
            pd.Series(sensitive_codes(frame[s])[0]).groupby(codes).nunique().min()
            for s in sensitive
        ]
        l_distinct = int(min(per_class))
    return ClassStats(
        quasi_identifiers=tuple(qis),
        rows=rows,
        classes=len(sizes),
        k=int(sizes.min()),
        unique_rows=int((sizes == 1).sum()),
        average_class_size=float(rows / len(sizes)),
        l_distinct=l_distinct,
    )
