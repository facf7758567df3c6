"""The figures of a latent release: the privacy/utility curve of DP-SGD (utility and what the
attacks recover, per epsilon) and the map of the categories' embeddings (scikit-learn's
t-SNE, as the material veil grew from drew it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.plotting import AFTER, BEFORE, WARN, canvas


def dp_curve_figure(table: pd.DataFrame, *, without_dp: dict[str, float] | None = None) -> Any:
    """``table``: one row per epsilon with ``utility_raw``, ``utility_latent``, ``recovery``
    and ``reidentification``; utility on the left, what the attacks get on the right.
    ``without_dp``: the same measures of the codes trained without DP, drawn dotted."""
    figure, (left, right) = canvas(9.0, 3.4, panels=2)
    epsilons = table["epsilon"].to_numpy(float)
    left.plot(epsilons, table["utility_latent"], marker="o", color=AFTER, label="codes, DP-SGD")
    left.axhline(
        float(table["utility_raw"].iloc[0]), color=BEFORE, linestyle="--", label="raw features"
    )
    if without_dp is not None:
        left.axhline(
            without_dp["utility_latent"],
            color=AFTER,
            linestyle=":",
            label="codes, trained without DP",
        )
        right.axhline(
            without_dp["recovery"], color=WARN, linestyle=":", label="recovered without DP"
        )
    left.set_ylabel("ROC-AUC on held-out rows", fontsize=8)
    left.set_title("utility kept", fontsize=9)
    right.plot(
        epsilons,
        table["recovery"],
        marker="o",
        color=WARN,
        label="quasi-identifiers recovered (beyond the marginals)",
    )
    right.plot(
        epsilons, table["reidentification"], marker="s", color=AFTER, label="rows re-identified"
    )
    right.set_ylim(0, 1)
    right.set_title("what the attacks recover", fontsize=9)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
        ax.minorticks_off()
        ax.set_xlabel("epsilon (privacy loss; smaller is more private)", fontsize=8)
        ax.legend(frameon=False, fontsize=7)
        ax.grid(alpha=0.3)
    return figure


def embedding_map_figure(
    embeddings: dict[str, tuple[list[str], np.ndarray]],
    *,
    seed: int = 0,
    columns: list[str] | None = None,
) -> Any:
    """Every category of ``columns`` (default: all) as a point of a 2-D t-SNE map of its
    embedding, coloured by its column; the categories of a column a model treats alike lie
    near each other."""
    from sklearn.manifold import TSNE

    chosen = columns or list(embeddings)
    labels, owners, vectors = [], [], []
    for column in chosen:
        names, weights = embeddings[column]
        for name, vector in zip(names, weights, strict=True):
            labels.append(str(name))
            owners.append(column)
            vectors.append(vector)
    matrix = np.asarray(vectors, dtype=float)
    perplexity = float(max(2, min(30, (len(matrix) - 1) // 3)))
    points = TSNE(2, perplexity=perplexity, random_state=seed, init="pca").fit_transform(matrix)
    figure, (ax,) = canvas(7.5, 5.5)
    palette = [AFTER, WARN, BEFORE, "#6d5bd0", "#c2185b", "#00838f", "#8d6e63", "#558b2f"]
    for i, column in enumerate(chosen):
        mine = [j for j, owner in enumerate(owners) if owner == column]
        ax.scatter(
            points[mine, 0], points[mine, 1], s=18, color=palette[i % len(palette)], label=column
        )
        for j in mine:
            ax.annotate(labels[j], points[j], fontsize=6, alpha=0.8)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("categories by their learned embedding (t-SNE)", fontsize=9)
    ax.legend(frameon=False, fontsize=7, loc="best")
    return figure
