"""The report's figures: PNG bytes (drawn through ``veil.plotting``) with the numbers they show."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.plotting import AFTER, BEFORE, WARN, canvas, draw_curve, render
from veil.report.measures import ranked
from veil.report.model import Figure

TOP_CATEGORIES = 12
SIZE_BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 9), (10, 19), (20, 49), (50, None))


def _short(label: str, width: int = 18) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def distribution(series: pd.Series) -> dict[str, Any]:
    """What a column's histogram shows: bins for many numbers or dates, else the top values."""
    values = series.dropna()
    if pd.api.types.is_datetime64_any_dtype(values) and len(values):
        years = values.dt.year
        counts = years.value_counts().sort_index()
        return {
            "kind": "years",
            "labels": [str(y) for y in counts.index],
            "counts": [int(c) for c in counts],
        }
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if numeric and values.nunique() > TOP_CATEGORIES:
        counts, edges = np.histogram(values.to_numpy(dtype=float), bins=20)
        return {
            "kind": "histogram",
            "edges": [float(e) for e in edges],
            "counts": [int(c) for c in counts],
        }
    counts = values.astype(str).value_counts()
    if numeric:  # few numbers: in numeric order, not by frequency
        top = counts.loc[sorted(counts.index, key=float)].head(TOP_CATEGORIES)
    else:
        top = ranked(counts, top=TOP_CATEGORIES)
    labels = [str(v) for v in top.index]
    numbers = [int(c) for c in top]
    if len(counts) > TOP_CATEGORIES:
        labels.append(f"{len(counts) - TOP_CATEGORIES} others")
        numbers.append(int(counts.sum() - top.sum()))
    return {"kind": "categories", "labels": labels, "counts": numbers}


def _draw_distribution(ax: Any, shape: dict[str, Any], color: str, title: str) -> None:
    ax.set_title(title, fontsize=9)
    if shape["kind"] == "histogram":
        edges = shape["edges"]
        ax.bar(edges[:-1], shape["counts"], width=np.diff(edges), align="edge", color=color)
    elif shape["kind"] == "years":
        ax.bar([int(y) for y in shape["labels"]], shape["counts"], width=0.8, color=color)
        ax.xaxis.get_major_locator().set_params(integer=True)
    elif not shape["counts"]:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
    else:
        positions = np.arange(len(shape["counts"]))
        ax.barh(positions, shape["counts"], color=color)
        ax.set_yticks(positions, [_short(s) for s in shape["labels"]], fontsize=7)
        ax.invert_yaxis()


def distribution_figure(name: str, before: pd.Series, after: pd.Series | None) -> Figure:
    """Before and after histograms of one column, side by side."""
    shapes = {"before": distribution(before)}
    if after is not None:
        shapes["after"] = distribution(after)
    figure, axes = canvas(6.4, 2.4, panels=len(shapes))
    _draw_distribution(axes[0], shapes["before"], BEFORE, "original")
    if after is not None:
        _draw_distribution(axes[1], shapes["after"], AFTER, "release")
    return Figure(
        id=f"distribution-{name}",
        title=f"{name}: values before and after",
        caption=(
            "Records per value (or per bin) in the original (left) and in the release (right)."
            if after is not None
            else "Records per value in the original; the column is not released."
        ),
        png=render(figure),
        data=shapes,
    )


def bucket_sizes(sizes: np.ndarray) -> list[int]:
    """Records in classes of each size bucket (1, 2, 3, 4, 5-9, 10-19, 20-49, 50+)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    out = []
    for low, high in SIZE_BUCKETS:
        chosen = (sizes >= low) & (sizes <= (high if high is not None else sizes.max(initial=0)))
        out.append(int(sizes[chosen].sum()))
    return out


def _paired_bars(
    labels: Sequence[str], before: Sequence[float], after: Sequence[float]
) -> tuple[Any, Any]:
    """Original and release side by side for each label."""
    figure, (ax,) = canvas(6.4, 2.8)
    positions = np.arange(len(labels))
    ax.bar(positions - 0.2, before, width=0.4, color=BEFORE, label="original")
    ax.bar(positions + 0.2, after, width=0.4, color=AFTER, label="release")
    ax.set_xticks(positions, labels, fontsize=7)
    ax.legend(frameon=False, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
    return figure, ax


def class_size_figure(before: np.ndarray, after: np.ndarray, *, k: int | None) -> Figure:
    """Records by the size of their equivalence class, before and after."""
    labels = [
        str(lo) if lo == hi else (f"{lo}-{hi}" if hi else f"{lo}+") for lo, hi in SIZE_BUCKETS
    ]
    counts_before, counts_after = bucket_sizes(before), bucket_sizes(after)
    figure, ax = _paired_bars(labels, counts_before, counts_after)
    ax.set_xlabel("size of the record's class (records sharing its quasi-identifiers)", fontsize=8)
    ax.set_ylabel("records", fontsize=8)
    if k is not None and k > 1:
        edge = next(i for i, (lo, hi) in enumerate(SIZE_BUCKETS) if hi is None or hi >= k)
        ax.axvline(edge - 0.5, color=WARN, linestyle="--", linewidth=1)
        ax.text(edge - 0.45, ax.get_ylim()[1] * 0.9, f"k = {k}", color=WARN, fontsize=8)
    return Figure(
        id="class-sizes",
        title="Equivalence-class sizes",
        caption=(
            "How many records share their quasi-identifier values with how many others. Records "
            "in classes of size 1 are unique, so anyone who knows those attributes can find them; "
            "left of the dashed line means a class smaller than k."
        ),
        png=render(figure),
        data={"buckets": labels, "original": counts_before, "release": counts_after, "k": k},
    )


RISK_BARS = (
    ("prosecutor_max", "prosecutor\nhighest"),
    ("prosecutor_average", "prosecutor\naverage"),
    ("journalist_max", "journalist\nhighest"),
    ("journalist_average", "journalist\naverage"),
    ("marketer_average", "marketer"),
    ("records_at_risk", "records\nat risk"),
)


def risk_figure(before: dict[str, float] | None, after: dict[str, float]) -> Figure:
    """Re-identification risk before (when known) and after, for each attacker model."""
    keys = [key for key, _ in RISK_BARS]
    figure, ax = _paired_bars(
        [label for _, label in RISK_BARS],
        [100 * before[k] if before else 0.0 for k in keys],
        [100 * after[k] for k in keys],
    )
    ax.set_ylabel("risk (%)", fontsize=8)
    ax.set_ylim(0, 105)
    return Figure(
        id="risk",
        title="Re-identification risk",
        caption=(
            "The probability that an attacker who knows a person's quasi-identifiers picks the "
            "right record: prosecutor (knows the person is in the data), journalist (does not; "
            "with no population table the data stands for the population, so it equals the "
            "prosecutor's), marketer (share of all records re-identified). 'Records at risk' is "
            f"the share whose risk exceeds {100 * after['threshold']:.0f}%."
        ),
        png=render(figure),
        data={
            "original": {k: before[k] for k in keys} if before else None,
            "release": {k: after[k] for k in keys},
        },
    )


def association_figure(
    columns: Sequence[str], before: np.ndarray, after: np.ndarray | None
) -> Figure:
    """Cramér's V between every pair of columns, in the original and in the release."""
    panels = 1 if after is None else 2
    size = max(3.2, 0.32 * len(columns) + 1.6)
    figure, axes = canvas(min(13.0, size * panels + 0.8), size, panels=panels)
    image = None
    for ax, matrix, title in zip(axes, [before, after], ["original", "release"], strict=False):
        if matrix is None:
            continue
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(
            range(len(columns)),
            [_short(c, 12) for c in columns],
            rotation=60,
            ha="right",
            fontsize=7,
        )
        ax.set_yticks(range(len(columns)), [_short(c, 12) for c in columns], fontsize=7)
        ax.set_title(title, fontsize=9)
    if image is not None:
        figure.colorbar(image, ax=list(axes), shrink=0.8, label="Cramér's V")
    return Figure(
        id="associations",
        title="Associations between columns",
        caption=(
            "Cramér's V (bias-corrected) between each pair of columns, 0 = independent, "
            "1 = one determines the other; numbers and dates are cut into quantile bins first, "
            "so the same measure applies before and after generalization. Where a square fades "
            "in the release, that relationship was lost to analysts."
        ),
        png=render(figure, tight=True),
        wide=True,
        data={
            "columns": list(columns),
            "original": before.round(3).tolist(),
            "release": None if after is None else after.round(3).tolist(),
        },
    )


def kept_figure(
    columns: Sequence[str], kept: Sequence[float], changed: Sequence[float | None]
) -> Figure:
    """Per column: the share of its information (entropy) kept, and of values changed."""
    figure, (ax,) = canvas(6.4, max(2.0, 0.28 * len(columns) + 0.9))
    positions = np.arange(len(columns))
    ax.barh(
        positions - 0.2,
        [100 * v for v in kept],
        height=0.4,
        color=AFTER,
        label="information kept (entropy)",
    )
    if any(c is not None for c in changed):
        ax.barh(
            positions + 0.2,
            [100 * (c or 0.0) for c in changed],
            height=0.4,
            color=WARN,
            label="released values changed",
        )
    ax.set_yticks(positions, [_short(c, 20) for c in columns], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 105)
    ax.set_xlabel("% of the column", fontsize=8)
    ax.legend(frameon=False, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
    return Figure(
        id="information-kept",
        title="Information kept per column",
        caption=(
            "Green: the column's entropy in the release as a share of its entropy in the "
            "original (100% = as informative as before; generalizing, masking or dropping lowers "
            "it). Orange: the share of released records whose value differs from the original "
            "record's (pseudonyms change every value, on purpose)."
        ),
        png=render(figure),
        data={"columns": list(columns), "kept": list(kept), "changed": list(changed)},
    )


def model_figure(scores: dict[str, dict[str, float]], *, metrics: Sequence[str]) -> Figure:
    """Cross-validated scores of the same model on the original, on the release, and a
    baseline that ignores the features."""
    names = list(scores)
    figure, (ax,) = canvas(6.4, 2.6)
    positions = np.arange(len(metrics))
    colors = {"original": BEFORE, "release": AFTER, "baseline": "#c9ced6"}
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [scores[name].get(m, np.nan) for m in metrics]
        bars = ax.bar(
            positions + (i - (len(names) - 1) / 2) * width,
            values,
            width=width,
            color=colors.get(name, "#888888"),
            label=name,
        )
        ax.bar_label(bars, fmt="%.3f", fontsize=7)
    ax.set_xticks(positions, list(metrics))
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    ax.set_ylim(0, 1.1)
    return Figure(
        id="model",
        title="A model trained on the release vs on the original",
        caption=(
            "The same pipeline (one-hot categories, scaled numbers, logistic or ridge regression), "
            "5-fold cross-validated on each table; the baseline predicts without the features. "
            "The gap between original and release is the utility lost for this task."
        ),
        png=render(figure),
        data={"metrics": list(metrics), "scores": scores},
    )


def budget_figure(spends: Sequence[tuple[str, float]], total: float) -> Figure:
    """The privacy budget as one bar: each release's epsilon, and what is left."""
    figure, (ax,) = canvas(6.4, 1.7)
    left = 0.0
    palette = ["#2f7d6d", "#4f9d8c", "#7bbcab", "#a9d8c9", "#1f5d50", "#5fb3a0"]
    for i, (what, epsilon) in enumerate(spends):
        ax.barh(0, epsilon, left=left, color=palette[i % len(palette)], edgecolor="white")
        if epsilon / total > 0.08:
            ax.text(
                left + epsilon / 2,
                0,
                _short(what, 16),
                ha="center",
                va="center",
                fontsize=7,
                color="white",
            )
        left += epsilon
    if left < total:
        ax.barh(0, total - left, left=left, color="#e4e8ee")
        ax.text(
            left + (total - left) / 2,
            0,
            f"left: {total - left:.3g}",
            ha="center",
            va="center",
            fontsize=7,
        )
    ax.set_xlim(0, max(total, left))
    ax.set_yticks([])
    ax.set_xlabel("epsilon", fontsize=8)
    return Figure(
        id="budget",
        title="Privacy budget spent",
        caption=(
            "Each differentially private release's epsilon, in the order spent, against the budget."
        ),
        png=render(figure),
        data={"spends": [list(s) for s in spends], "total": total},
    )


def curve_figure(
    table: pd.DataFrame, *, title: str, y: str, ylabel: str, reference: str | None = None
) -> Figure:
    """A measure against epsilon (log axis): the price of privacy for one statistic or model."""
    figure, (ax,) = canvas(6.4, 2.8)
    draw_curve(ax, table, y=y, ylabel=ylabel, reference=reference)
    ax.set_title(title, fontsize=9)
    return Figure(
        id=f"curve-{y}-{title}".replace(" ", "-"),
        title=title,
        caption=(
            "Measured by repeating the release at each epsilon (each repetition charged to its "
            "own ledger): smaller epsilon is more private and less accurate."
        ),
        png=render(figure),
        data={col: table[col].tolist() for col in table.columns},
    )


def uniqueness_figure(combinations: Sequence[tuple[str, float]]) -> Figure:
    """Share of records unique on each combination of quasi-identifiers the scan found."""
    figure, (ax,) = canvas(6.4, max(1.8, 0.32 * len(combinations) + 0.9))
    positions = np.arange(len(combinations))
    ax.barh(positions, [100 * share for _, share in combinations], color=WARN)
    ax.set_yticks(positions, [_short(label, 40) for label, _ in combinations], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of records unique on these columns (original)", fontsize=8)
    return Figure(
        id="uniqueness",
        title="Records unique on combinations of quasi-identifiers",
        caption=(
            "The first bar is all quasi-identifiers together; the others are the smaller "
            "combinations that single out the most people. Each unique record can be found by "
            "anyone who knows those few facts about the person."
        ),
        png=render(figure),
        data={"combinations": [list(c) for c in combinations]},
    )
