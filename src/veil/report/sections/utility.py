"""The utility section: information each column keeps, and a model trained on each table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.privacy.certificate import Certificate
from veil.report import figures
from veil.report.measures import association_matrix, entropy_bits
from veil.report.model import Fact, Figure, Section, Table
from veil.report.sections._common import Inputs, Progress, percent

MAX_ASSOCIATION_COLUMNS = 24  # a heatmap wider than this is unreadable


def _section(
    cert: Certificate,
    original: pd.DataFrame,
    data: pd.DataFrame,
    *,
    aligned: bool,
    target: str | None,
    random_state: int,
    progress: Progress,
) -> Section:
    aligned = aligned and original.index.is_unique  # else a label would match several rows
    compared, kept, changed, rows = _per_column(cert, original, data, aligned=aligned)
    text = _summary(cert)
    section_figures = [figures.kept_figure(compared, kept, changed)]
    usable = [
        c
        for c in compared
        if cert.roles.get(c) != "identifier" and c in data.columns and original[c].nunique() > 1
    ]
    analysed = usable[:MAX_ASSOCIATION_COLUMNS]
    if len(analysed) >= 2:
        progress("measuring associations between columns")
        section_figures.append(
            figures.association_figure(
                analysed, association_matrix(original, analysed), association_matrix(data, analysed)
            )
        )
    facts = _kept_facts(cert, data, compared, kept)
    tables = [
        Table(
            "Per column",
            (
                "column",
                "role",
                "distinct before",
                "distinct after",
                "entropy before (bits)",
                "entropy after (bits)",
                "information kept",
                "values changed",
            ),
            tuple(rows),
            percent=("information kept", "values changed"),
            note="'values changed' needs the release's rows linked to the original's; "
            "it is shown for a release made in the same run.",
        ),
    ]
    if target is not None:
        progress(f"training a model to predict {target} on the original and on the release")
        # linked rows are put back in the original's order (the release is shuffled), so that
        # both models see the same split and the comparison does not depend on the shuffle
        ordered = data.loc[original.index.intersection(data.index)] if aligned else data
        features = [c for c in usable if c != target]
        _model_part(
            original,
            ordered,
            target,
            features,
            random_state,
            text=text,
            facts=facts,
            figures_=section_figures,
            tables=tables,
        )
    return Section(
        id="utility",
        title="Utility: what analysts keep",
        text=tuple(text),
        facts=tuple(facts),
        figures=tuple(section_figures),
        tables=tuple(tables),
    )


def _per_column(
    cert: Certificate, original: pd.DataFrame, data: pd.DataFrame, *, aligned: bool
) -> tuple[list[str], list[float], list[float | None], list[tuple[object, ...]]]:
    """Each column's information kept (entropy after over before) and share of values changed
    (rows linked only), worst first: the columns, the shares, the changes and the table rows."""
    compared = [c for c in cert.columns_in if c in original.columns]
    rows, kept, changed = [], [], []
    for name in compared:
        before_bits = entropy_bits(original[name])
        released = name in data.columns
        after_bits = entropy_bits(data[name]) if released else 0.0
        share = (
            min(1.0, after_bits / before_bits) if before_bits > 0 else (1.0 if released else 0.0)
        )
        differs: float | None = None
        if aligned and released and len(data):
            old = (
                original.loc[data.index, name]
                .astype(str)
                .where(original.loc[data.index, name].notna(), "")
            )
            new = data[name].astype(str).where(data[name].notna(), "")
            differs = float((old.to_numpy() != new.to_numpy()).mean())
        kept.append(share)
        changed.append(differs)
        rows.append(
            (
                name,
                cert.roles.get(name, "insensitive"),
                int(original[name].nunique()),
                int(data[name].nunique()) if released else None,
                before_bits,
                after_bits if released else None,
                share,
                differs,
            )
        )
    order = sorted(range(len(compared)), key=lambda i: (kept[i], compared[i]))
    return (
        [compared[i] for i in order],
        [kept[i] for i in order],
        [changed[i] for i in order],
        [rows[i] for i in order],
    )


def _summary(cert: Certificate) -> list[str]:
    text = [
        f"{cert.rows_out:,} of {cert.rows_in:,} records "
        f"({percent(cert.rows_out / max(cert.rows_in, 1))}) "
        f"and {len(cert.columns_out)} of {len(cert.columns_in)} columns reach analysts.",
        "Information kept is measured as each column's entropy in the release over its entropy "
        "in the original; it needs no link between released and original rows.",
    ]
    search = cert.search or {}
    if search.get("metric") and search.get("loss") is not None:
        text.append(
            "On top of the policy's own steps, the privacy search generalized the "
            f"quasi-identifiers by {search['metric']} = {search['loss']:.4g} "
            "(0 = no further generalization)."
        )
    return text


def _kept_facts(
    cert: Certificate, data: pd.DataFrame, compared: list[str], kept: list[float]
) -> list[Fact]:
    touched = [
        share
        for name, share in zip(compared, kept, strict=True)
        if share < 1.0 or name not in data.columns or cert.roles.get(name) == "identifier"
    ]
    facts = []
    if kept:
        worst = compared[0]
        facts.append(
            Fact(
                f"{worst}: {percent(kept[0])}",
                "information kept by the worst column",
                "bad" if kept[0] < 0.05 and cert.roles.get(worst) != "identifier" else "",
            )
        )
    facts.append(
        Fact(
            percent(float(np.mean(touched))) if touched else "100.0%",
            f"information kept, mean over the {len(touched)} changed or withheld columns "
            f"(the other {len(compared) - len(touched)} are released as they are)",
        )
    )
    return facts


def _model_part(
    original: pd.DataFrame,
    ordered: pd.DataFrame,
    target: str,
    features: list[str],
    random_state: int,
    *,
    text: list[str],
    facts: list[Fact],
    figures_: list[Figure],
    tables: list[Table],
) -> None:
    """A model predicting ``target`` trained on each table: its sentence, fact, figure and
    table, added to the section's."""
    from veil.learn import compare_models

    result = compare_models(
        original, ordered, target=target, features=features, random_state=random_state
    )
    metric = result.metrics[0]
    plotted = tuple(m for m in result.metrics if m != "mae")
    figures_.append(figures.model_figure(result.scores, metrics=plotted))
    scores = result.scores
    text.append(
        f"A {result.task} model predicting {target} from {len(result.features)} columns scores "
        f"{metric} {scores['original'][metric]:.3f} on the original and "
        f"{scores['release'][metric]:.3f} on the release "
        f"(baseline without features: {scores['baseline'][metric]:.3f})"
        + (
            f", on random samples of {result.rows['original']:,} and "
            f"{result.rows['release']:,} records."
            if result.sampled
            else "."
        )
    )
    baseline = scores["baseline"][metric]  # accuracy or R²: higher is better
    flop = scores["release"][metric] <= baseline
    if flop:
        text.append(
            f"The model trained on the release scores no better than the baseline without "
            f"features ({metric} {scores['release'][metric]:.3f} vs {baseline:.3f}): "
            f"for predicting {target}, the release is no better than guessing"
            + (
                "; so is the original, which carries no signal for it either."
                if scores["original"][metric] <= baseline
                else "."
            )
        )
    facts.append(
        Fact(
            f"{scores['original'][metric]:.3f} → {scores['release'][metric]:.3f}",
            f"{metric} of a model predicting {target}"
            + (" (at or below its no-feature baseline)" if flop else ""),
            "bad" if flop else "",
        )
    )
    tables.append(
        Table(
            f"Model predicting {target}",
            ("table", *result.metrics, "records"),
            tuple(
                (
                    name,
                    *(values[m] for m in result.metrics),
                    result.rows.get(name, result.rows["original"]),
                )
                for name, values in scores.items()
            ),
            note=f"features: {', '.join(result.features)}",
        )
    )


def build(inputs: Inputs) -> Section | None:
    """The utility section, or None without the original table."""
    if inputs.original is None:
        return None
    return _section(
        inputs.cert,
        inputs.original,
        inputs.data,
        aligned=inputs.aligned,
        target=inputs.target,
        random_state=inputs.random_state,
        progress=inputs.progress,
    )
