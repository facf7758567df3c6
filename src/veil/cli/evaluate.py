"""``veil evaluate``: fidelity, utility and attacks on any release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import (
    Force,
    Format,
    Sep,
    _check_format,
    _progress,
    out,
    seed_option,
)


def evaluate_command(
    original: Annotated[str, typer.Argument(help="The table the release was made from.")],
    release: Annotated[
        str, typer.Argument(help="The release (any kind: k-anonymous, masked, synthetic...).")
    ],
    holdout: Annotated[
        str | None,
        typer.Option("--holdout", help="Real rows of the same kind the release was NOT made from."),
    ] = None,
    holdout_fraction: Annotated[
        float | None,
        typer.Option(
            "--holdout-fraction",
            help="Set aside this share of ORIGINAL as holdout (the release must have been made "
            "without those rows).",
        ),
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="Category a model predicts (TSTR vs TRTR).")
    ] = None,
    seed: Annotated[int, seed_option("Seed of every random choice.")] = 0,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write a report (.html or .json).")
    ] = None,
    fmt: Format = "text",
    force: Force = False,
    sep: Sep = None,
) -> None:
    """Fidelity, utility on real holdout rows, and attacks (DCR, membership, singling out,
    linkability, inference) on any release."""
    from veil.api import evaluate

    _check_format(fmt)
    with _progress() as say:
        result = evaluate(
            original,
            release,
            holdout=holdout,
            holdout_fraction=holdout_fraction,
            target=target,
            random_state=seed,
            report=report,
            force=force,
            progress=say,
            sep=sep,
        )
    if fmt == "json":
        out.print_json(result.to_json())
        return
    for line in result.lines():
        out.print(line)


def register(app: typer.Typer) -> None:
    """Add ``veil evaluate`` to ``app``."""
    app.command("evaluate")(evaluate_command)
