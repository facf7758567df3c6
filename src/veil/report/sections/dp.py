"""The differential-privacy section: the ledger, the answers, and curves against epsilon."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.budget import NEIGHBOURS, Accountant, dataset_id
from veil.dp.stats import DPResult
from veil.report import figures
from veil.report.model import Fact, Section, Table
from veil.report.sections._common import Curve, Inputs


def _answer(value: Any) -> Any:
    """A DP answer for a table cell: a number, or "a: 1, b: 2" for counts per category."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_answer(v)}" for k, v in value.items())
    if isinstance(value, float):
        return round(value, 3)
    return value if np.isscalar(value) else str(value)


def _section(
    accountant: Accountant | None,
    releases: Sequence[DPResult],
    curves: Sequence[Curve],
    original: pd.DataFrame | None,
) -> Section:
    facts, tables, figs, text = [], [], [], []
    made_for = accountant.dataset if accountant is not None else None
    if made_for and original is not None and made_for != dataset_id(original):
        text.append(
            f"Careful: this ledger was made for dataset {made_for}, but the original given is "
            f"{dataset_id(original)}; its releases may be of other data."
        )
    if accountant is not None:
        budget, spent, left = accountant.budget, accountant.spent(), accountant.remaining()
        facts = [
            Fact(f"{budget.epsilon:g}", f"epsilon budget ({accountant.composition} composition)"),
            Fact(f"{spent.epsilon:.3g}", "epsilon spent"),
            Fact(f"{left.epsilon:.3g}", "epsilon left", "good" if left.epsilon > 0 else "bad"),
        ]
        entries = [e for e in accountant.entries() if e.status == "spent"]
        text.append(
            f"One ledger holds every differentially private release of this data: "
            f"{len(entries)} release(s) spent epsilon {spent.epsilon:.3g}"
            + (f" and delta {spent.delta:.3g}" if spent.delta else "")
            + f" of {budget.epsilon:g}. A release that would overspend is refused. Each "
            f"epsilon bounds what {NEIGHBOURS} can change (add/remove neighbours; under "
            "replace-one the same releases would cost up to twice as much)."
        )
        figs.append(figures.budget_figure([(e.what, e.epsilon) for e in entries], budget.epsilon))
        tables.append(
            Table(
                "Ledger",
                ("#", "what", "epsilon", "delta", "status"),
                tuple((e.id, e.what, e.epsilon, e.delta, e.status) for e in accountant.entries()),
            )
        )
    if releases:
        tables.append(
            Table(
                "Differentially private answers",
                ("statistic", "answer", "± (95%)", "epsilon", "mechanism"),
                tuple(
                    (r.statistic, _answer(r.value), r.error95, r.epsilon, r.mechanism)
                    for r in releases
                ),
                note="each answer is within ± of the true value with 95% probability",
            )
        )
    for curve in curves:
        figs.append(
            figures.curve_figure(
                curve.table,
                title=curve.title,
                y=curve.y,
                ylabel=curve.ylabel,
                reference=curve.reference,
            )
        )
    return Section(
        id="dp",
        title="Differential privacy",
        text=tuple(text),
        facts=tuple(facts),
        figures=tuple(figs),
        tables=tuple(tables),
    )


def build(inputs: Inputs) -> Section | None:
    """The differential-privacy section, or None without a ledger, answers or curves."""
    if inputs.accountant is None and not inputs.dp_releases and not inputs.curves:
        return None
    return _section(inputs.accountant, inputs.dp_releases, inputs.curves, inputs.original)
