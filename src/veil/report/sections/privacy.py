"""The privacy section: the models asked for, what was measured, and re-identification risk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.frequency import class_sizes
from veil.privacy._check import check
from veil.privacy.certificate import Certificate
from veil.privacy.criteria import KAnonymity
from veil.report import figures
from veil.report.model import Fact, Section, Table
from veil.report.sections._common import Inputs, change, percent
from veil.risk.reidentification import risk


def _sizes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    return class_sizes(frame, list(columns))[1] if len(frame) else np.array([], dtype=np.int64)


def _section(
    cert: Certificate, original: pd.DataFrame | None, data: pd.DataFrame, threshold: float
) -> Section:
    qis = list(cert.quasi_identifiers)
    if not qis:
        return Section(
            id="privacy",
            title="Privacy: models and risk",
            text=(
                "No column is a quasi-identifier, so no equivalence classes are formed and no "
                "k-anonymity, l-diversity or t-closeness is claimed.",
            ),
        )
    after_sizes = _sizes(data, qis)
    before_sizes = (
        _sizes(original, qis)
        if original is not None and all(q in original.columns for q in qis)
        else np.array([], dtype=np.int64)
    )
    after = risk(after_sizes, threshold=threshold)
    before = risk(before_sizes, threshold=threshold) if before_sizes.size else None
    k_goal = next((m.k for m in cert.models if isinstance(m, KAnonymity)), None)
    text = [
        f"Quasi-identifiers: {', '.join(qis)}"
        + (f"; sensitive: {', '.join(cert.sensitive)}" if cert.sensitive else "")
        + ".",
        f"Records at risk (re-identification probability above {percent(threshold)}): "
        + (f"{percent(before.records_at_risk)} before, " if before else "")
        + f"{percent(after.records_at_risk)} after.",
    ]
    if before is None:
        text.append(
            "Without the original table (with these columns) the risk before cannot be "
            "measured here; the certificate's own before figures are in the first table."
        )
    goals = tuple((goal, met) for goal, met in cert.checks.items())
    measured = _measured(cert, original, data, qis, bool(before_sizes.size), text)
    risk_rows = _risk_rows(before, after)
    tables = [
        Table(
            "Measured on the quasi-identifiers", ("measure", "original", "release"), tuple(measured)
        )
    ]
    if goals:
        tables.insert(0, Table("Privacy models", ("goal", "met"), goals))
    tables.append(
        Table(
            "Re-identification risk",
            ("attacker", "original", "release"),
            risk_rows,
            percent=("original", "release"),
        )
    )
    return Section(
        id="privacy",
        title="Privacy: models and risk",
        text=tuple(text),
        facts=(
            Fact(f"{cert.before.k} → {cert.after.k}", "k"),
            Fact(
                change(before.prosecutor_max if before else None, after.prosecutor_max),
                "highest re-identification risk (prosecutor)",
            ),
            Fact(
                change(before.records_at_risk if before else None, after.records_at_risk),
                f"records at risk (> {percent(threshold)})",
            ),
        ),
        figures=(
            figures.class_size_figure(
                before_sizes, after_sizes, k=int(k_goal) if k_goal else cert.after.k
            ),
            figures.risk_figure(before.to_dict() if before else None, after.to_dict()),
        ),
        tables=tuple(tables),
    )


def _risk_rows(before: Any, after: Any) -> tuple[tuple[str, Any, Any], ...]:
    """Each attacker's risk, before (None without the original) and after."""
    return tuple(
        (label, getattr(before, key) if before else None, getattr(after, key))
        for key, label in (
            ("prosecutor_max", "prosecutor risk, highest"),
            ("prosecutor_average", "prosecutor risk, average"),
            ("journalist_max", "journalist risk, highest"),
            ("journalist_average", "journalist risk, average"),
            ("marketer_average", "marketer risk"),
            ("records_at_risk", "share of records at risk"),
            ("sample_uniques", "share of records unique"),
        )
    )


def _measured(
    cert: Certificate,
    original: pd.DataFrame | None,
    data: pd.DataFrame,
    qis: list[str],
    before: bool,
    text: list[str],
) -> list[tuple[str, Any, Any]]:
    """The class measures before and after (k, classes, sizes, uniques, and l and t of each
    sensitive column); each sensitive column's sentence added to ``text``."""
    measured: list[tuple[str, Any, Any]] = [
        ("k (smallest class)", cert.before.k, cert.after.k),
        ("equivalence classes", cert.before.classes, cert.after.classes),
        ("average class size", cert.before.average_class_size, cert.after.average_class_size),
        (
            "records unique on the quasi-identifiers",
            cert.before.unique_rows,
            cert.after.unique_rows,
        ),
    ]
    for name in cert.sensitive:
        if name not in data.columns:
            continue
        now = check(data, qis, sensitive=name)
        if now.l_distinct is None or now.t is None:  # an empty release has no classes
            continue
        then = (
            check(original, qis, sensitive=name)
            if before and original is not None and name in original.columns
            else None
        )
        measured += [
            (
                f"distinct l of {name} (fewest different values in a class)",
                then.l_distinct if then else None,
                now.l_distinct,
            ),
            (f"entropy l of {name}", then.l_entropy if then else None, now.l_entropy),
            (
                f"t of {name} ({now.t_distance} distance; largest class-to-table gap)",
                then.t if then else None,
                now.t,
            ),
        ]
        text.append(
            f"Every class holds at least {now.l_distinct} different value"
            f"{'s' if now.l_distinct != 1 else ''} of {name} (distinct l-diversity), so knowing "
            f"someone's class does not reveal their {name} "
            + ("outright" if now.l_distinct > 1 else "— it does for some people")
            + f"; the distribution of {name} in any class is at most t = {now.t:.3f} from the "
            "whole table's (t-closeness)."
        )
    return measured


def build(inputs: Inputs) -> Section:
    """The privacy section: goals met, class measures and re-identification risk."""
    inputs.progress("measuring re-identification risk")
    return _section(inputs.cert, inputs.original, inputs.data, inputs.risk_threshold)
