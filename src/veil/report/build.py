"""Assemble a Report from what a release run knows: the certificate (always), the original
table, the scan, a target column for a utility model, and a privacy-budget ledger."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil._version import __version__
from veil.criteria import KAnonymity
from veil.dp.budget import NEIGHBOURS, Accountant, dataset_id
from veil.dp.stats import DPResult
from veil.frequency import class_sizes
from veil.privacy._check import check
from veil.privacy.certificate import Certificate, Release
from veil.privacy.risk import risk
from veil.report import figures
from veil.report.measures import association_matrix, entropy_bits, ranked
from veil.report.model import Block, Fact, Figure, Report, Section, Table
from veil.scan import ScanResult, scan

MAX_ASSOCIATION_COLUMNS = 24  # a heatmap wider than this is unreadable
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Curve:
    """A measure against epsilon (from ``veil.dp.curves``) to draw in the DP section."""

    title: str
    table: pd.DataFrame
    y: str
    ylabel: str
    reference: str | None = None


def column_profile(series: pd.Series) -> dict[str, Any]:
    """Type, missing share, distinct count and top values of one column."""
    n = len(series)
    counts = series.value_counts(dropna=True)
    return {
        "dtype": str(series.dtype),
        "missing": float(series.isna().mean()) if n else 0.0,
        "distinct": int(counts.size),
        "top": [(str(v), int(c)) for v, c in ranked(counts, top=3).items()],
    }


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def _change(before: float | None, after: float) -> str:
    """Like "94.2% → 5.8%", or "5.8%" when there is no before."""
    return f"{_percent(before)} → {_percent(after)}" if before is not None else _percent(after)


def _column_steps(cert: Certificate) -> tuple[dict[str, list[str]], list[Any]]:
    per_column: dict[str, list[str]] = {}
    table_steps = []
    for step in cert.steps:
        if step.where.startswith("columns."):
            column = step.where.removeprefix("columns.").rsplit(".steps[", 1)[0]
            per_column.setdefault(column, []).append(step.description)
        else:
            table_steps.append(step)
    return per_column, table_steps


def _headline(cert: Certificate) -> tuple[list[Fact], str]:
    met = list(cert.checks.values())
    verdict = "" if not met else ("good" if all(met) else "bad")
    facts = [
        Fact(f"{cert.rows_out:,}", f"records released of {cert.rows_in:,}"),
        Fact(str(len(cert.columns_out)), f"columns released of {len(cert.columns_in)}"),
    ]
    if cert.quasi_identifiers:
        facts += [
            Fact(
                f"{cert.before.k} → {cert.after.k}",
                "k: the smallest group sharing quasi-identifiers",
                "good" if cert.after.k > 1 else "bad",
            ),
            Fact(
                f"{cert.before.unique_rows:,} → {cert.after.unique_rows:,}",
                "records unique on the quasi-identifiers",
                "good" if cert.after.unique_rows == 0 else "bad",
            ),
        ]
    if met:
        facts.append(Fact(f"{sum(met)} of {len(met)}", "policy goals met", verdict))
    return facts, verdict


def _scan_section(found: ScanResult) -> Section:
    rows = tuple(
        (c.name, c.role.value, c.entity or "", c.confidence, c.evidence) for c in found.columns
    )
    summary = found.risk
    text = [
        f"{len(found.columns)} columns scanned "
        f"({min(found.sample_size, found.rows):,} sampled rows of {found.rows:,}): "
        + ", ".join(
            f"{sum(1 for c in found.columns if c.role.value == role)} {label}"
            for role, label in (
                ("identifier", "direct identifiers"),
                ("quasi_identifier", "quasi-identifiers"),
                ("sensitive", "sensitive"),
                ("insensitive", "harmless"),
            )
        )
        + "."
    ]
    figures_: list[Any] = []
    if summary.quasi_identifiers:
        text.append(
            f"In the original, {summary.unique_rows:,} of {summary.rows:,} records "
            f"({_percent(summary.uniqueness)}) are unique on "
            f"{', '.join(summary.quasi_identifiers)}: "
            "whoever knows those attributes of a person finds their record."
        )
        every = ", ".join(summary.quasi_identifiers)
        combos = [(every, summary.uniqueness)] + [
            (", ".join(c["columns"]), float(c["uniqueness"]))
            for c in summary.most_identifying
            if list(c["columns"]) != list(summary.quasi_identifiers)  # the first bar already
        ]
        if any(share > 0 for _, share in combos):  # bars of nothing say less than the text
            figures_.append(figures.uniqueness_figure(combos))
    return Section(
        id="scan",
        title="What is personal: the scan",
        text=tuple(text),
        figures=tuple(figures_),
        tables=(
            Table(
                "Columns and their roles",
                ("column", "role", "entity", "confidence", "evidence"),
                rows,
            ),
        ),
    )


def _policy_section(cert: Certificate) -> Section:
    per_column, table_steps = _column_steps(cert)
    released = set(cert.columns_out)
    decided = {d.column: d for d in cert.decisions}

    def why(name: str) -> str:
        d = decided.get(name)
        if d is None:
            return "policy"
        if d.by == "scan":
            found = f": {d.entity}" if d.entity else ""
            return f"scan{found} ({d.confidence:.2f})" if d.confidence is not None else "scan"
        if d.treatment == "kept":
            return f"policy, kept as is: {d.reason}"
        return d.by

    rows = tuple(
        (
            name,
            cert.roles.get(name, "insensitive"),
            why(name),
            "; ".join(per_column.get(name, [])) or "unchanged",
            ("transformed" if name in per_column else "as is") if name in released else "no",
        )
        for name in cert.columns_in
    )
    tables = [
        Table(
            "Columns",
            ("column", "role", "decided by", "what was done", "released"),
            rows,
            note=(
                "Columns the policy does not list get the role the scan finds; identifiers "
                "among them are dropped or pseudonymized. "
                + ("Table-level steps (below) apply to every column." if table_steps else "")
            ),
        )
    ]
    if table_steps:
        tables.append(
            Table(
                "Table-level steps",
                ("policy", "step", "records after", "columns after"),
                tuple((s.where, s.description, s.rows_after, s.columns_after) for s in table_steps),
            )
        )
    text = []
    new = [c for c in cert.columns_out if c not in cert.columns_in]
    if new:
        text.append(f"Columns new in the release (renamed or derived): {', '.join(new)}.")
    if cert.privacy:
        goals = ", ".join(model.name for model in cert.models) or "none"
        settings = "; ".join(
            f"{key} {value}" for key, value in cert.privacy.items() if key != "models"
        )
        text.append(
            f"Privacy goals asked for: {goals}" + (f" ({settings})" if settings else "") + "."
        )
    search = cert.search or {}
    if search.get("levels"):
        tables.append(
            Table(
                "Generalization chosen by the search",
                ("quasi-identifier", "hierarchy level"),
                tuple(search["levels"].items()),
                note=(
                    f"{search.get('method', '')} search, "
                    f"{'proven optimal' if search.get('optimal') else 'not proven optimal'}"
                    f" for {search.get('metric')}: {search.get('loss', 0):.4g}; "
                    f"{search.get('evaluated', 0):,} of {search.get('nodes', 0):,} "
                    "lattice nodes evaluated"
                ),
            ),
        )
    return Section(
        id="policy", title="What was done: the policy", text=tuple(text), tables=tuple(tables)
    )


def _sizes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    return class_sizes(frame, list(columns))[1] if len(frame) else np.array([], dtype=np.int64)


def _privacy_section(
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
        f"Records at risk (re-identification probability above {_percent(threshold)}): "
        + (f"{_percent(before.records_at_risk)} before, " if before else "")
        + f"{_percent(after.records_at_risk)} after.",
    ]
    if before is None:
        text.append(
            "Without the original table (with these columns) the risk before cannot be "
            "measured here; the certificate's own before figures are in the first table."
        )
    goals = tuple((goal, met) for goal, met in cert.checks.items())
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
            if before_sizes.size and original is not None and name in original.columns
            else None
        )
        measured += [
            (f"distinct l of {name} (fewest different values in a class)",
             then.l_distinct if then else None, now.l_distinct),
            (f"entropy l of {name}", then.l_entropy if then else None, now.l_entropy),
            (f"t of {name} ({now.t_distance} distance; largest class-to-table gap)",
             then.t if then else None, now.t),
        ]  # fmt: skip
        text.append(
            f"Every class holds at least {now.l_distinct} different value"
            f"{'s' if now.l_distinct != 1 else ''} of {name} (distinct l-diversity), so knowing "
            f"someone's class does not reveal their {name} "
            + ("outright" if now.l_distinct > 1 else "— it does for some people")
            + f"; the distribution of {name} in any class is at most t = {now.t:.3f} from the "
            "whole table's (t-closeness)."
        )
    risk_rows = tuple(
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
                _change(before.prosecutor_max if before else None, after.prosecutor_max),
                "highest re-identification risk (prosecutor)",
            ),
            Fact(
                _change(before.records_at_risk if before else None, after.records_at_risk),
                f"records at risk (> {_percent(threshold)})",
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


def _utility_section(
    cert: Certificate,
    original: pd.DataFrame,
    data: pd.DataFrame,
    *,
    aligned: bool,
    target: str | None,
    random_state: int,
    progress: Progress,
) -> Section:
    compared = [c for c in cert.columns_in if c in original.columns]
    aligned = aligned and original.index.is_unique  # else a label would match several rows
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
    text = [
        f"{cert.rows_out:,} of {cert.rows_in:,} records "
        f"({_percent(cert.rows_out / max(cert.rows_in, 1))}) "
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
    order = sorted(range(len(compared)), key=lambda i: (kept[i], compared[i]))
    compared = [compared[i] for i in order]
    kept = [kept[i] for i in order]
    changed = [changed[i] for i in order]
    rows = [rows[i] for i in order]
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
    touched = [
        share for name, share in zip(compared, kept, strict=True)
        if share < 1.0 or name not in data.columns or cert.roles.get(name) == "identifier"
    ]  # fmt: skip
    facts = []
    if kept:
        worst = compared[0]
        facts.append(
            Fact(
                f"{worst}: {_percent(kept[0])}",
                "information kept by the worst column",
                "bad" if kept[0] < 0.05 and cert.roles.get(worst) != "identifier" else "",
            )
        )
    facts.append(
        Fact(
            _percent(float(np.mean(touched))) if touched else "100.0%",
            f"information kept, mean over the {len(touched)} changed or withheld columns "
            f"(the other {len(compared) - len(touched)} are released as they are)",
        )
    )
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
        from veil.learn import compare_models

        progress(f"training a model to predict {target} on the original and on the release")
        features = [c for c in usable if c != target]
        # linked rows are put back in the original's order (the release is shuffled), so that
        # both models see the same split and the comparison does not depend on the shuffle
        ordered = data.loc[original.index.intersection(data.index)] if aligned else data
        result = compare_models(
            original, ordered, target=target, features=features, random_state=random_state
        )
        metric = result.metrics[0]
        plotted = tuple(m for m in result.metrics if m != "mae")
        section_figures.append(figures.model_figure(result.scores, metrics=plotted))
        text.append(
            f"A {result.task} model predicting {target} from {len(result.features)} columns scores "
            f"{metric} {result.scores['original'][metric]:.3f} on the original and "
            f"{result.scores['release'][metric]:.3f} on the release "
            f"(baseline without features: {result.scores['baseline'][metric]:.3f})"
            + (
                f", on random samples of {result.rows['original']:,} and "
                f"{result.rows['release']:,} records."
                if result.sampled
                else "."
            )
        )
        baseline = result.scores["baseline"][metric]  # accuracy or R²: higher is better

        def useless(score: float) -> bool:
            return score <= baseline

        flop = useless(result.scores["release"][metric])
        if flop:
            text.append(
                f"The model trained on the release scores no better than the baseline without "
                f"features ({metric} {result.scores['release'][metric]:.3f} vs {baseline:.3f}): "
                f"for predicting {target}, the release is no better than guessing"
                + (
                    "; so is the original, which carries no signal for it either."
                    if useless(result.scores["original"][metric])
                    else "."
                )
            )
        facts.append(
            Fact(
                f"{result.scores['original'][metric]:.3f} → {result.scores['release'][metric]:.3f}",
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
                        *(scores[m] for m in result.metrics),
                        result.rows.get(name, result.rows["original"]),
                    )
                    for name, scores in result.scores.items()
                ),
                note=f"features: {', '.join(result.features)}",
            )
        )
    return Section(
        id="utility",
        title="Utility: what analysts keep",
        text=tuple(text),
        facts=tuple(facts),
        figures=tuple(section_figures),
        tables=tuple(tables),
    )


def _columns_section(
    cert: Certificate, original: pd.DataFrame, data: pd.DataFrame, progress: Progress
) -> Section:
    per_column, _ = _column_steps(cert)
    blocks = []
    for name in cert.columns_in:
        if name not in original.columns:
            continue
        progress(f"profiling {name}")
        role = cert.roles.get(name, "insensitive")
        before = column_profile(original[name])
        after = column_profile(data[name]) if name in data.columns else None
        lines = [
            "done: " + ("; ".join(per_column.get(name, [])) or "nothing"),
            f"type {before['dtype']}"
            + (f" → {after['dtype']}" if after and after["dtype"] != before["dtype"] else ""),
            f"missing {_percent(before['missing'])}"
            + (f" → {_percent(after['missing'])}" if after else ""),
            f"distinct {before['distinct']:,}" + (f" → {after['distinct']:,}" if after else ""),
        ]
        if after is None:
            lines.append("not released")
        elif role != "identifier" and after["top"] and after["top"][0][1] > 1:
            lines.append("most common after: " + ", ".join(f"{v} ({c:,})" for v, c in after["top"]))
        figs: tuple[Figure, ...] = ()
        if role != "identifier":  # a histogram of unique keys shows nothing and leaks values
            figs = (
                figures.distribution_figure(name, original[name], data[name] if after else None),
            )
        blocks.append(Block(title=name, tag=role, lines=tuple(lines), figures=figs))
    return Section(
        id="columns",
        title="Columns, before and after",
        text=(
            "A light profile of each column in the original and in the release. Direct "
            "identifiers get no histogram: their values are one per person.",
        ),
        blocks=tuple(blocks),
    )


def _answer(value: Any) -> Any:
    """A DP answer for a table cell: a number, or "a: 1, b: 2" for counts per category."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_answer(v)}" for k, v in value.items())
    if isinstance(value, float):
        return round(value, 3)
    return value if np.isscalar(value) else str(value)


def _dp_section(
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


def build_report(
    release: Release,
    *,
    original: pd.DataFrame | None = None,
    scan_result: ScanResult | None = None,
    aligned: bool = False,
    target: str | None = None,
    accountant: Accountant | None = None,
    dp_releases: Sequence[DPResult] = (),
    curves: Sequence[Curve] = (),
    title: str = "veil release report",
    risk_threshold: float = 0.2,
    random_state: int = 0,
    created: str | None = None,
    progress: Progress | None = None,
) -> Report:
    """The report on ``release``.

    ``original`` adds the scan (unless ``scan_result`` is given), before/after risk, utility
    and column profiles; ``aligned`` says the release's index points at the original's rows
    (true for a release made in this process); ``target`` adds a model trained on each table;
    ``accountant`` (a ``veil.dp.Accountant``), ``dp_releases`` and ``curves`` the DP section.
    """
    say = progress or (lambda _msg: None)
    cert, data = release.certificate, release.data
    facts, verdict = _headline(cert)
    sections = []
    if scan_result is None and original is not None:
        scan_result = scan(original, progress=say)
    if scan_result is not None:
        sections.append(_scan_section(scan_result))
    sections.append(_policy_section(cert))
    say("measuring re-identification risk")
    sections.append(_privacy_section(cert, original, data, risk_threshold))
    if original is not None:
        sections.append(
            _utility_section(
                cert,
                original,
                data,
                aligned=aligned,
                target=target,
                random_state=random_state,
                progress=say,
            )
        )
        sections.append(_columns_section(cert, original, data, say))
    if accountant is not None or dp_releases or curves:
        sections.append(_dp_section(accountant, dp_releases, curves, original))
    return Report(
        title=title,
        veil_version=__version__,
        created=created or cert.created,
        headline=tuple(cert.summary()),
        facts=tuple(facts),
        sections=tuple(sections),
        verdict=verdict,
        notice=(
            "Internal: this report shows statistics of the original data (value counts, "
            "histograms, risk before). Share it as you would the original's aggregates, not "
            "as you would the release."
            if original is not None
            else "This report describes the release and its certificate only."
        ),
    )
