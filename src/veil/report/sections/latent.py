"""A latent release for the people who must sign it off: the utility the codes kept, and,
beside it, what an attacker gets back from them, with the verdict in words: a release whose
codes give the quasi-identifiers back is invertible, never called anonymized.

``build_latent_report(release)`` makes a whole report of it (``veil mask-latent --report``);
``build_report(..., latent=...)`` adds it as a section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from veil.plotting import render
from veil.report.model import Fact, Figure, Report, Section, Table
from veil.report.sections._common import Inputs, standalone

if TYPE_CHECKING:  # its module loads scikit-learn (the latent attacks): only typed here
    from veil.learn.latent import LatentRelease

ATTACKERS = {"white_box": "white-box (holds the decoder)", "insider": "insider (knows 1% of rows)"}


def section(release: LatentRelease) -> Section:
    """The latent-release section."""
    attacks = release.attacks
    facts = _facts(release)
    how = (
        "an autoencoder (an embedding per category, an MLP to the code and back, one head "
        "per column)"
        if release.method == "autoencoder"
        else "PCA of the one-hot table"
    )
    text = [
        f"{release.rows['released']:,} rows released as {release.dim} numbers each, computed "
        f"by {how}; {release.rows['holdout']:,} rows were held out to measure.",
        "Attackers: a white-box one holding the published decoder (or components), and an "
        f"insider who knows {attacks['insider_rows']} people's rows with their codes and fits "
        "an inverse map (nearest neighbours); both against a guess from the marginals alone.",
        *release.notes,
    ]
    rec = attacks["reconstruction"]
    rows = tuple(
        (
            column,
            "accuracy" if metric == "accuracy" else "mean abs. error",
            *(round(rec[k][column], 3) for k in ("white_box", "insider", "baseline")),
        )
        for column, metric in rec["metric"].items()
    )
    tables = [
        Table(
            "What each attacker recovers, per quasi-identifier",
            ("column", "measure", ATTACKERS["white_box"], ATTACKERS["insider"], "marginals only"),
            rows,
        )
    ]
    figures = []
    if release.embeddings:
        from veil.learn.latent._figures import embedding_map_figure

        figures.append(
            Figure(
                id="latent-embeddings",
                title="The categories as the network learned them",
                caption="Each category's learned embedding, mapped to two dimensions by t-SNE; "
                "categories the network treats alike lie near each other.",
                png=render(embedding_map_figure(release.embeddings)),
                wide=True,
            )
        )
    return Section(
        "latent",
        "Latent release: utility kept, and what the codes reveal",
        tuple(text),
        tuple(facts),
        tuple(figures),
        tuple(tables),
    )


def _facts(release: LatentRelease) -> list[Fact]:
    """The label, the utility kept, the re-identification rate, membership and the budget."""
    attacks, utility = release.attacks, release.utility
    facts = [
        Fact(
            "invertible" if release.invertible else "not inverted",
            release.label,
            "bad" if release.invertible else "good",
        )
    ]
    if utility.get("metric"):
        gap = utility["raw"] - utility["latent"]
        facts.append(
            Fact(
                f"{utility['latent']:.3f}",
                f"{utility['metric']} of gradient boosting "
                f"on the codes (raw features: {utility['raw']:.3f}; a linear model: "
                f"{utility['linear']['latent']:.3f} vs {utility['linear']['raw']:.3f})",
                "good" if gap <= 0.02 else "bad",
            )
        )
    facts.append(
        Fact(
            f"{attacks['reidentification_rate']:.1%}",
            "rows re-identified from "
            "what the codes give back (guesses from the marginals: "
            f"{attacks['reidentification_baseline']:.1%})",
            "bad" if release.invertible else "",
        )
    )
    if attacks.get("membership_advantage") is not None:
        facts.append(
            Fact(
                f"{attacks['membership_advantage']:.2f}",
                "membership advantage of someone holding the encoder (0: none, 1: certain)",
            )
        )
    if release.epsilon is not None:
        facts.append(
            Fact(
                f"ε {release.epsilon:.3g}",
                f"DP-SGD (δ {release.delta:.2g}), from "
                "Opacus' accountant, charged to the privacy budget",
            )
        )
    return facts


def build(inputs: Inputs) -> Section | None:
    """The section, when the report was given a latent release."""
    return section(inputs.latent) if inputs.latent is not None else None


def build_latent_report(
    release: LatentRelease, *, title: str = "veil latent release", created: str = ""
) -> Report:
    """A report of one latent release (``veil mask-latent --report``)."""
    return standalone(
        section(release),
        title=title,
        created=created,
        headline=f"{release.method}, {release.dim} dimensions: {release.label}.",
        notice="This report shows measures of the release and of the attacks; no row.",
    )
