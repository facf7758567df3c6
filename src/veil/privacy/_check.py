"""``check``: measure a table's privacy — k, l (distinct, entropy, recursive c), t, risk —
straight from its rows, independently of the search that may have produced it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.frequency import class_sizes, histograms
from veil.privacy.criteria import TCloseness, class_entropy
from veil.privacy.risk import Risk, risk
from veil.schema import require_columns


@dataclass(frozen=True)
class CheckResult:
    rows: int
    quasi_identifiers: tuple[str, ...]
    sensitive: str | None
    classes: int
    k: int
    risk: Risk
    l_distinct: int | None = None
    l_entropy: int | None = None
    l_recursive_c: float | None = None  # the least c for which recursive (c, l) holds
    t: float | None = None
    t_distance: str | None = None
    failed: tuple[str, ...] = field(default_factory=tuple)  # thresholds asked for, not met

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rows": self.rows,
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": self.sensitive,
            "classes": self.classes,
            "k": self.k,
            "l_distinct": self.l_distinct,
            "l_entropy": self.l_entropy,
            "t": self.t,
            "t_distance": self.t_distance,
            "risk": self.risk.to_dict(),
            "failed": list(self.failed),
        }
        if self.l_recursive_c is not None:
            data["l_recursive_c"] = self.l_recursive_c
        return data


def check(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    sensitive: str | None = None,
    k: int | None = None,
    l: int | None = None,  # noqa: E741
    t: float | None = None,
    t_distance: str | None = None,
    risk_threshold: float = 0.2,
    exclude: pd.Series | None = None,
) -> CheckResult:
    """Measure ``frame``; thresholds given (``k``, ``l``, ``t``) that do not hold are listed in
    ``failed``. Rows where ``exclude`` is true (suppressed records) are left out.

    Parameters
    ----------
    frame : DataFrame
        The table to measure.
    quasi_identifiers : list of str
        The columns whose combinations form the equivalence classes.
    sensitive : str, optional
        The sensitive column, for l-diversity and t-closeness.
    k, l, t : optional
        Thresholds to test (k >= 1, l >= 1, t in [0, 1]).
    t_distance : str, optional
        ``equal``, ``ordered`` or ``hierarchical`` (default: ordered for numbers).
    risk_threshold : float
        Prosecutor risk above which a record counts as at risk.

    Returns
    -------
    CheckResult
        ``k``, ``l`` and ``t`` as measured, the re-identification risk, and ``failed``.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.privacy import check
    >>> df = pd.DataFrame({"age": ["20-29"] * 3 + ["30-39"] * 2,
    ...                    "diagnosis": ["Flu", "HIV", "Flu", "Flu", "Asthma"]})
    >>> result = check(df, ["age"], sensitive="diagnosis", k=3)
    >>> result.k, result.l_distinct, result.failed
    (2, 2, ('k >= 3',))
    """
    for name, value, low, high in (
        ("k", k, 1, math.inf),
        ("l", l, 1, math.inf),
        ("t", t, 0, 1),
        ("risk_threshold", risk_threshold, 0, 1),
    ):
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high  # NaN fails too
        ):
            span = f"at least {low}" if high == math.inf else f"in [{low}, {high}]"
            raise ParameterError(f"{name} must be {span}, got {value!r}")
    if sensitive is None and (l is not None or t is not None):
        raise ParameterError(
            "l and t are measured on a sensitive column: name it (--sensitive COLUMN)"
        )
    qis = list(quasi_identifiers)
    require_columns(frame, [*qis, *([sensitive] if sensitive else [])], where="check")
    data = frame if exclude is None else frame.loc[~exclude.to_numpy(dtype=bool)]
    klass, sizes = class_sizes(data, qis)
    result: dict[str, Any] = {}
    failed = []
    if sensitive is not None and len(data):
        hist, values = histograms(data, klass, sensitive, len(sizes))
        result["l_distinct"] = int((hist > 0).sum(axis=1).min())
        entropy = float(class_entropy(hist).min())
        result["l_entropy"] = math.floor(math.exp(entropy) + 1e-9)
        if l is not None:
            ordered = -np.sort(-hist, axis=1)
            tail = ordered[:, l - 1 :].sum(axis=1) if ordered.shape[1] >= l else np.zeros(len(hist))
            with np.errstate(divide="ignore"):
                ratio = np.where(tail > 0, ordered[:, 0] / np.maximum(tail, 1), np.inf)
            result["l_recursive_c"] = float(ratio.max())
        numeric = pd.api.types.is_numeric_dtype(data[sensitive])
        distance = t_distance or ("ordered" if numeric else "equal")
        closeness = TCloseness(1.0, distance=distance)
        closeness.prepare(values)
        result["t"] = float(closeness.distances(hist).max())
        result["t_distance"] = distance
        if l is not None and result["l_distinct"] < l:
            failed.append(f"l >= {l}")
        if t is not None and result["t"] > t + 1e-12:
            failed.append(f"t <= {t}")
    k_value = int(sizes.min()) if len(sizes) else 0
    if k is not None and k_value < k:
        failed.insert(0, f"k >= {k}")
    return CheckResult(
        rows=len(data),
        quasi_identifiers=tuple(qis),
        sensitive=sensitive,
        classes=len(sizes),
        k=k_value,
        risk=risk(sizes, threshold=risk_threshold),
        failed=tuple(failed),
        **result,
    )
