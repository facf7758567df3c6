"""``veil mask-latent``: a table released as latent codes, with its utility and the attacks
that say what the codes still reveal."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.cli._common import (
    GROUP,
    Data,
    EscapeFormulas,
    Force,
    Format,
    Ledger,
    OtherDataset,
    Sep,
    _check_format,
    _ledger,
    _progress,
    epsilon_option,
    out,
    output_option,
    seed_option,
    with_groups,
)

if TYPE_CHECKING:
    from veil.learn.latent import LatentRelease


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


@dataclass
class LatentFlags:
    """The latent model and its attacks."""

    dim: Annotated[
        str, typer.Option("--dim", help="Latent dimensions (pca: also 'all', a rotation).")
    ] = "5"
    method: Annotated[str, typer.Option("--method", help="autoencoder or pca.")] = "autoencoder"
    target: Annotated[
        str | None,
        typer.Option("--target", help="Released as it is; utility is a model predicting it."),
    ] = None
    keep: Annotated[
        str | None, typer.Option("--keep", help="Comma-separated columns released as they are.")
    ] = None
    quasi_identifiers: Annotated[
        str | None,
        typer.Option(
            "--quasi-identifiers",
            help="Columns the attacks try to recover (default: what veil scan reads as such).",
        ),
    ] = None
    epsilon: Annotated[
        float | None,
        epsilon_option("Train with DP-SGD (Opacus), charged to the ledger."),
    ] = None
    delta: Annotated[
        float | None, typer.Option("--delta", help="DP-SGD's delta (default 1 / (10 rows)).")
    ] = None
    holdout_fraction: Annotated[
        float,
        typer.Option(
            "--holdout-fraction",
            help="Rows held out of the release to measure utility and membership.",
        ),
    ] = 0.2
    epochs: Annotated[
        int | None, typer.Option("--epochs", help="At most this many epochs.", min=1)
    ] = None
    seed: Annotated[int, seed_option("Seeds training and the attacks.")] = 0
    supervised: Annotated[
        bool,
        typer.Option(
            "--supervised/--unsupervised",
            help="With --target, the autoencoder also learns to predict it from the code.",
        ),
    ] = True
    keep_order: Annotated[
        bool,
        typer.Option(
            "--keep-order", help="Keep the input's row order (whoever knows it links codes)."
        ),
    ] = False

    def options(self, accountant: object) -> dict[str, object]:
        """``veil.learn.latent.mask_latent``'s keywords."""
        given = dataclasses.asdict(self)
        given["keep"] = _columns(self.keep)
        given["quasi_identifiers"] = _columns(self.quasi_identifiers) or None
        given["random_state"] = given.pop("seed")
        return {**given, "accountant": accountant}


AllowInvertible = Annotated[
    bool,
    typer.Option(
        "--allow-invertible",
        help="Write the release even when the attacks invert it (quasi-identifiers or "
        "membership); without it such a release is refused and nothing is written.",
    ),
]


@with_groups
def mask_latent_command(
    data: Data,
    output: Annotated[Path, output_option("The release (.csv/.parquet).")],
    model: LatentFlags = GROUP,
    allow_invertible: AllowInvertible = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write an HTML (or .json) report.")
    ] = None,
    certificate: Annotated[
        Path | None,
        typer.Option("--certificate", help="Write the certificate (JSON): measures and label."),
    ] = None,
    ledger: Ledger = None,
    other_dataset: OtherDataset = False,
    fmt: Format = "text",
    force: Force = False,
    escape_formulas: EscapeFormulas = True,
    sep: Sep = None,
) -> None:
    """Release DATA as latent codes (an autoencoder's or PCA's) plus the target and the
    columns kept; measure the utility kept and what an attacker recovers from the codes. A
    release whose codes give the quasi-identifiers or membership back is labelled invertible
    and written only with --allow-invertible."""
    from veil.api import mask_latent

    _check_format(fmt)
    accountant = None
    if model.epsilon is not None:
        from veil.dp import Accountant

        accountant = Accountant(_ledger(ledger), other_dataset=other_dataset)
    with _progress(fmt != "json") as say:
        say.step(f"fitting the {model.method} and measuring the attacks")
        release = mask_latent(
            data,
            output,
            report=report,
            certificate=certificate,
            allow_invertible=allow_invertible,
            force=force,
            escape_formulas=escape_formulas,
            progress=say,
            options=model.options(accountant),
            sep=sep,
        )
    if fmt == "json":
        out.print_json(json.dumps(release.to_dict(), default=float))
        return
    _print(release, output)


def _print(release: LatentRelease, output: Path) -> None:
    from rich.table import Table

    out.print(
        f"wrote {output}: {release.rows['released']:,} rows as {release.dim} latent "
        f"columns ({release.method}"
        + (
            f", DP-SGD epsilon {release.epsilon:g}, delta {release.delta:g}"
            if release.epsilon is not None
            else ""
        )
        + ")"
    )
    utility = release.utility
    if utility.get("metric"):
        out.print(
            f"utility ({utility['metric']}, {release.rows['holdout']:,} held-out rows): "
            f"gradient boosting raw {utility['raw']:.3f}, latent {utility['latent']:.3f}; "
            f"linear model raw {utility['linear']['raw']:.3f}, latent "
            f"{utility['linear']['latent']:.3f}"
        )
    attacks = release.attacks
    grid = Table(
        "quasi-identifier",
        "measure",
        "white-box",
        "insider",
        "marginals only",
        title="what an attacker recovers",
        title_justify="left",
    )
    rec = attacks["reconstruction"]
    for column, metric in rec["metric"].items():
        shown = "{:.3f}" if metric == "accuracy" else "{:,.2f}"
        values = (shown.format(rec[k][column]) for k in ("white_box", "insider", "baseline"))
        grid.add_row(column, "accuracy" if metric == "accuracy" else "mean abs. error", *values)
    out.print(grid)
    rates = attacks["reidentification"]
    out.print(
        f"re-identified (nearest row is the person, alone): white-box "
        f"{rates['white_box']:.1%}, insider ({attacks['insider_rows']} rows known) "
        f"{rates['insider']:.1%}; guesses from the marginals "
        f"{attacks['reidentification_baseline']:.1%}; rows unique on these columns "
        f"{attacks['uniqueness']:.1%}"
    )
    if attacks["membership_advantage"] is not None:
        out.print(
            f"membership advantage (encoder published): {attacks['membership_advantage']:.3f}"
        )
    out.print(release.label)
    for note in release.notes:
        out.print(f"  {note}")


def register(app: typer.Typer) -> None:
    """Add ``veil mask-latent`` to ``app``."""
    app.command("mask-latent")(mask_latent_command)
