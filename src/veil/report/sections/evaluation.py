"""The evaluation of a release, for a data-protection officer at a glance: the three attacks
as a traffic light with their intervals, then how far the release moved each column and the
columns' associations, what a model trained on it is worth on real rows, and how close its
rows sit to the training rows compared with rows it never saw.

``build_evaluation_report(evaluation)`` makes a whole report of it (``veil evaluate
--report``); in a release's report (``build_report(..., evaluation=...)``) it is one section.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.evaluate import Evaluation, risk_label
from veil.plotting import AFTER, BEFORE, canvas, render
from veil.report.model import Fact, Figure, Report, Section, Table
from veil.report.sections._common import Inputs, standalone

ATTACKS = {
    "singling_out": "singling out",
    "linkability": "linkability",
    "inference": "inference",
}
_TOP = 10


def light(measured: dict[str, Any]) -> str:
    """``good`` when the risk's interval stays under 5%, ``bad`` when it starts at 10% or
    more, else no colour (moderate, or too few rows to say): ``risk_label`` of the interval."""
    if measured.get("risk") is None:
        return ""
    return {"low": "good", "high": "bad"}.get(risk_label(measured["ci"]), "")


def _overlay(name: str, real: pd.Series, released: pd.Series, kind: str) -> Figure:
    figure, (ax,) = canvas(4.2, 2.4)
    if kind == "numeric":
        a, b = real.dropna().to_numpy(float), released.dropna().to_numpy(float)
        edges = np.histogram_bin_edges(np.concatenate([a, b]), bins=30)
        ha = np.histogram(a, edges)[0] / max(len(a), 1)
        hb = np.histogram(b, edges)[0] / max(len(b), 1)
        ax.stairs(ha, edges, fill=True, color=BEFORE, alpha=0.7, label="original")
        ax.stairs(hb, edges, color=AFTER, linewidth=1.6, label="release")
        data = {"edges": edges.tolist(), "original": ha.tolist(), "release": hb.tolist()}
    else:
        p = real.value_counts(normalize=True)
        q = released.value_counts(normalize=True)
        labels = list(p.index[:_TOP]) + [v for v in q.index[:_TOP] if v not in p.index[:_TOP]]
        labels = labels[: _TOP + 2]
        positions = np.arange(len(labels))
        ax.barh(
            positions - 0.2,
            [p.get(v, 0) for v in labels],
            height=0.4,
            color=BEFORE,
            label="original",
        )
        ax.barh(
            positions + 0.2, [q.get(v, 0) for v in labels], height=0.4, color=AFTER, label="release"
        )
        ax.set_yticks(positions, [str(v)[:18] for v in labels], fontsize=7)
        ax.invert_yaxis()
        data = {
            "labels": [str(v) for v in labels],
            "original": [float(p.get(v, 0)) for v in labels],
            "release": [float(q.get(v, 0)) for v in labels],
        }
    ax.set_title(name, fontsize=9)
    ax.legend(frameon=False, fontsize=7)
    return Figure(
        id=f"overlay-{name}",
        title=f"{name}: original and release",
        caption=(
            "Share of rows per bin: the original filled, the release outlined."
            if kind == "numeric"
            else "Share of rows per value (the most common ones): original and release."
        ),
        png=render(figure),
        data=data,
    )


def _association_difference(before: pd.DataFrame, after: pd.DataFrame) -> Figure:
    difference = (before - after).abs()
    names = list(difference.columns)
    size = max(3.0, 0.3 * len(names) + 1.6)
    figure, (ax,) = canvas(size + 1.0, size)
    image = ax.imshow(difference.to_numpy(), vmin=0, vmax=1, cmap="magma_r")
    ax.set_xticks(range(len(names)), [n[:12] for n in names], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), [n[:12] for n in names], fontsize=7)
    figure.colorbar(image, ax=ax, shrink=0.8, label="|original - release|")
    return Figure(
        id="association-difference",
        title="How the columns' associations moved",
        caption=(
            "Absolute difference, per pair of columns, between the association in the original "
            "and in the release (|Pearson| between numbers, Cramér's V between categories, the "
            "correlation ratio between a number and a category). Dark: a relationship analysts "
            "would find in one table and not in the other."
        ),
        png=render(figure, tight=True),
        data={"columns": names, "difference": difference.round(3).to_numpy().tolist()},
    )


def _utility(utility: dict[str, Any]) -> Figure:
    metrics = ("accuracy", "f1", "roc_auc")
    figure, (ax,) = canvas(5.6, 2.6)
    positions = np.arange(len(metrics))
    for offset, name, color in ((-0.2, "trtr", BEFORE), (0.2, "tstr", AFTER)):
        scores = utility[name] or {}
        values = [np.nan if scores.get(m) is None else scores[m] for m in metrics]
        bars = ax.bar(
            positions + offset,
            values,
            width=0.4,
            color=color,
            label="trained on the original (TRTR)"
            if name == "trtr"
            else "trained on the release (TSTR)",
        )
        ax.bar_label(bars, fmt="%.3f", fontsize=7)
    ax.set_xticks(positions, ["accuracy", "F1", "ROC-AUC"])
    ax.set_ylim(0, 1.15)
    ax.legend(frameon=False, fontsize=7, loc="upper center", ncol=2)
    return Figure(
        id="tstr",
        title=f"A model for {utility['target']}, tested on real rows it never saw",
        caption=(
            "The same gradient-boosted trees trained on the original's training rows (TRTR) and "
            f"on the release (TSTR), both scored on {utility['test_rows']:,} holdout rows; F1 "
            f"for {utility['positive']!s}. The gap is what the release costs this task. (The "
            "release report's utility section compares models on each table's own rows.)"
        ),
        png=render(figure),
        data={k: utility[k] for k in ("trtr", "tstr")},
    )


def _dcr(samples: dict[str, np.ndarray]) -> Figure:
    figure, (ax,) = canvas(5.6, 2.6)
    to_train, to_holdout = samples["to_training"], samples["to_holdout"]
    edges = np.histogram_bin_edges(np.concatenate([to_train, to_holdout]), bins=30)
    ax.hist(to_holdout, edges, color=BEFORE, alpha=0.8, label="to holdout rows (never seen)")
    ax.hist(to_train, edges, histtype="step", color=AFTER, linewidth=1.6, label="to training rows")
    ax.set_xlabel("distance to the closest real record (Gower)", fontsize=8)
    ax.legend(frameon=False, fontsize=7)
    return Figure(
        id="dcr",
        title="How close release rows sit to real rows",
        caption=(
            "Each release row's distance to its closest training row and to its closest holdout "
            "row (equal numbers of each). A release that copies or memorizes its training rows "
            "sits closer to them (the outlined bars pile up near 0); one that learnt only the "
            "population sits as close to rows it never saw."
        ),
        png=render(figure),
        data={
            "edges": edges.tolist(),
            "to_training": np.histogram(to_train, edges)[0].tolist(),
            "to_holdout": np.histogram(to_holdout, edges)[0].tolist(),
        },
    )


def section(evaluation: Evaluation) -> Section:
    """The evaluation section: traffic lights, then the figures."""
    data = evaluation.to_dict()
    fidelity = data["fidelity"]
    facts = _facts(data)
    text = [
        "Three attacks from the Article 29 Working Party's opinion on anonymisation, measured "
        "as Anonymeter does: each attack's success on the rows the release was made from, "
        "beyond its success on real rows it was not made from; green when the risk's 95% "
        "interval stays under 5%, red when it starts at 10% or more.",
        "Compared: "
        + ", ".join(evaluation.compared)
        + ". Not compared: "
        + (", ".join(f"{c} ({why})" for c, why in evaluation.left_out.items()) or "none")
        + ".",
        *evaluation.notes,
    ]
    rows = tuple((c, m["statistic"].upper(), m["value"]) for c, m in fidelity["columns"].items())
    tables = [
        Table(
            "Per column: how far the release moved",
            ("column", "statistic", "value"),
            rows,
            note="KS for numbers and dates, total variation distance for "
            "categories: 0 the same distribution, 1 disjoint.",
        )
    ]
    figures = []
    if evaluation.utility is not None and "tstr" in evaluation.utility:
        figures.append(_utility(evaluation.utility))
    if "dcr" in evaluation.figures:
        figures.append(_dcr(evaluation.figures["dcr"]))
    before, after = evaluation.figures["associations"]
    if len(before) > 1:
        figures.append(_association_difference(before, after))
    train, released, kinds = evaluation.figures["tables"]
    figures += [_overlay(c, train[c], released[c], kinds[c]) for c in evaluation.compared]
    return Section(
        "evaluation",
        "Evaluation: fidelity, utility and what an attacker learns",
        tuple(text),
        tuple(facts),
        tuple(figures),
        tuple(tables),
    )


def _facts(data: dict[str, Any]) -> list[Fact]:
    """Each attack's risk with its light, the distances to training and holdout rows, the
    copies, and the detection AUC."""
    privacy = data["privacy"]
    facts = []
    for key, label in ATTACKS.items():
        measured = privacy[key]
        if measured.get("risk") is None:
            facts.append(Fact("-", f"{label} risk: {measured.get('reason', 'not measured')}"))
            continue
        low, high = measured["ci"]
        facts.append(
            Fact(
                f"{measured['risk']:.1%}",
                f"{label} risk (95%: {low:.1%} to {high:.1%})",
                light(measured),
            )
        )
    if privacy.get("dcr") is not None:
        share, ideal = privacy["dcr"]["share_closer_to_training"], privacy["dcr"]["ideal"]
        status = "good" if abs(share - ideal) < 0.05 else "bad"
        facts.append(
            Fact(
                f"{share:.1%}",
                "of release rows closer to training than to holdout "
                f"rows ({ideal:.0%} is ideal: the training rows' share of both)",
                status,
            )
        )
        facts.append(
            Fact(
                f"{privacy['exact_copies']:.1%}",
                "release rows that copy a real row",
                "good" if privacy["exact_copies"] == 0 else "bad",
            )
        )
    fidelity = data["fidelity"]
    facts.append(
        Fact(
            f"{fidelity['detection_auc']:.3f}", "detection AUC (0.5: cannot be told from real rows)"
        )
    )
    return facts


def build(inputs: Inputs) -> Section | None:
    """The section of a release report, when an evaluation was given."""
    return None if inputs.evaluation is None else section(inputs.evaluation)


def build_evaluation_report(
    evaluation: Evaluation, *, title: str = "veil evaluation report", created: str = ""
) -> Report:
    """A report of ``evaluation`` alone (``veil evaluate --report``)."""
    measured = section(evaluation)
    return standalone(
        measured,
        title=title,
        created=created,
        headline=(
            f"{evaluation.rows['release']:,} release rows measured against "
            f"{evaluation.rows['train']:,} rows they were made from"
            + (
                f" and {evaluation.rows['holdout']:,} real rows they were not made from"
                if evaluation.rows.get("holdout")
                else " (no holdout rows: no attacks)"
            )
            + f", on {len(evaluation.compared)} columns, in {evaluation.seconds:.1f} s."
        ),
        notice=(
            "Internal: this report shows statistics of the original data (distributions, "
            "associations). Share it as you would the original's aggregates."
        ),
    )
