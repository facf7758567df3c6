"""``veil mask-latent``: a table released as latent codes, with its utility and the attacks
that say what the codes still reveal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.cli._common import (
    EscapeFormulas,
    Force,
    Format,
    Ledger,
    OtherDataset,
    Sep,
    _check_format,
    _ledger,
    _progress,
    _read_options,
    _report_format,
    _source,
    out,
)
from veil.exceptions import CheckFailedError, ParameterError

if TYPE_CHECKING:
    from veil.learn.latent import LatentRelease


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def mask_latent_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The release (.csv/.parquet).")],
    dim: Annotated[
        str, typer.Option("--dim", help="Latent dimensions (pca: also 'all', a rotation).")
    ] = "5",
    method: Annotated[str, typer.Option("--method", help="autoencoder or pca.")] = "autoencoder",
    target: Annotated[
        str | None,
        typer.Option("--target", help="Released as it is; utility is a model predicting it."),
    ] = None,
    keep: Annotated[
        str | None, typer.Option("--keep", help="Comma-separated columns released as they are.")
    ] = None,
    quasi_identifiers: Annotated[
        str | None,
        typer.Option(
            "--quasi-identifiers",
            help="Columns the attacks try to recover (default: what veil scan reads as such).",
        ),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", help="Train with DP-SGD (Opacus), charged to the ledger."),
    ] = None,
    delta: Annotated[
        float | None, typer.Option("--delta", help="DP-SGD's delta (default 1 / (10 rows)).")
    ] = None,
    holdout_fraction: Annotated[
        float,
        typer.Option(
            "--holdout-fraction",
            help="Rows held out of the release to measure utility and membership.",
        ),
    ] = 0.2,
    epochs: Annotated[
        int | None, typer.Option("--epochs", help="At most this many epochs.", min=1)
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seeds training and the attacks.")] = 0,
    supervised: Annotated[
        bool,
        typer.Option(
            "--supervised/--unsupervised",
            help="With --target, the autoencoder also learns to predict it from the code.",
        ),
    ] = True,
    allow_invertible: Annotated[
        bool,
        typer.Option(
            "--allow-invertible",
            help="Write the release even when the attacks invert it (quasi-identifiers or "
            "membership); without it such a release is refused and nothing is written.",
        ),
    ] = False,
    keep_order: Annotated[
        bool,
        typer.Option(
            "--keep-order", help="Keep the input's row order (whoever knows it links codes)."
        ),
    ] = False,
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
    from veil.io import check_output, read, write
    from veil.learn.latent import mask_latent

    _check_format(fmt)
    outputs = [p for p in (output, report, certificate) if p is not None]
    if len(set(outputs)) != len(outputs):
        raise ParameterError("--output, --report and --certificate must be different files")
    for path in outputs:
        check_output(path, inputs=[data], force=force)
    frame = read(data, **_read_options(None, sep=sep))
    accountant = None
    if epsilon is not None:
        from veil.dp import Accountant

        accountant = Accountant(_ledger(ledger), other_dataset=other_dataset)
    with _progress(fmt != "json") as say:
        say.step(f"fitting the {method} and measuring the attacks")
        release = mask_latent(
            frame, dim=dim, method=method, target=target, keep=_columns(keep),
            quasi_identifiers=_columns(quasi_identifiers) or None, epsilon=epsilon, delta=delta,
            accountant=accountant, holdout_fraction=holdout_fraction, epochs=epochs, seed=seed,
            supervised=supervised, keep_order=keep_order, progress=say,
        )  # fmt: skip
    if release.disclosive and not allow_invertible:
        raise CheckFailedError(
            f"nothing written: {release.label}; {release.advice}"
            + (
                ""
                if "--allow-invertible" in release.advice
                else "; or pass --allow-invertible to write it labelled as such"
            )
        )
    write(release.data, output, force=force, inputs=[data], escape_formulas=escape_formulas)
    _documents(release, output, report, certificate, data, force)
    if fmt == "json":
        out.print_json(json.dumps(release.to_dict(), default=float))
        return
    _print(release, output)


def _documents(release: LatentRelease, output: Path, report: Path | None,
               certificate: Path | None, data: str, force: bool) -> None:  # fmt: skip
    """The report and the certificate, each written whole or not at all."""
    import hashlib

    from veil.io import atomic_open
    from veil.report.sections.latent import build_latent_report

    if report is not None:
        built = build_latent_report(release, title=f"veil latent release: {_source(data)}")
        with atomic_open(report, force=force, inputs=[data]) as handle:
            handle.write(built.render(_report_format(report)))
    if certificate is not None:
        digest = hashlib.sha256(output.read_bytes()).hexdigest()
        body = {**release.to_dict(), "release": {
            "file": output.name, "sha256": digest, "rows": len(release.data),
            "columns": list(map(str, release.data.columns))}}  # fmt: skip
        with atomic_open(certificate, force=force, inputs=[data]) as handle:
            handle.write(json.dumps(body, indent=1, default=float) + "\n")


def _print(release: LatentRelease, output: Path) -> None:
    from rich.table import Table

    out.print(f"wrote {output}: {release.rows['released']:,} rows as {release.dim} latent "
              f"columns ({release.method}"
              + (f", DP-SGD epsilon {release.epsilon:g}, delta {release.delta:g}"
                 if release.epsilon is not None else "") + ")")  # fmt: skip
    utility = release.utility
    if utility.get("metric"):
        out.print(f"utility ({utility['metric']}, {release.rows['holdout']:,} held-out rows): "
                  f"gradient boosting raw {utility['raw']:.3f}, latent {utility['latent']:.3f}; "
                  f"linear model raw {utility['linear']['raw']:.3f}, latent "
                  f"{utility['linear']['latent']:.3f}")  # fmt: skip
    attacks = release.attacks
    grid = Table("quasi-identifier", "measure", "white-box", "insider", "marginals only",
                 title="what an attacker recovers", title_justify="left")  # fmt: skip
    rec = attacks["reconstruction"]
    for column, metric in rec["metric"].items():
        shown = "{:.3f}" if metric == "accuracy" else "{:,.2f}"
        values = (shown.format(rec[k][column]) for k in ("white_box", "insider", "baseline"))
        grid.add_row(column, "accuracy" if metric == "accuracy" else "mean abs. error", *values)
    out.print(grid)
    rates = attacks["reidentification"]
    out.print(f"re-identified (nearest row is the person, alone): white-box "
              f"{rates['white_box']:.1%}, insider ({attacks['insider_rows']} rows known) "
              f"{rates['insider']:.1%}; guesses from the marginals "
              f"{attacks['reidentification_baseline']:.1%}; rows unique on these columns "
              f"{attacks['uniqueness']:.1%}")  # fmt: skip
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
