"""``veil check`` and ``veil verify``: measure a table, re-check a release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import (
    GROUP,
    Data,
    EngineFlags,
    Format,
    GoalFlags,
    ReadFlags,
    SamplingFlags,
    Sep,
    _check_format,
    _progress,
    out,
    with_groups,
)
from veil.exceptions import CheckFailedError, ParameterError

SensitiveTree = Annotated[
    Path | None,
    typer.Option(
        "--hierarchies",
        help="Folder with the sensitive column's hierarchy (for --t-distance hierarchical).",
    ),
]
PersonId = Annotated[
    str | None,
    typer.Option(
        "--person-id",
        help="A column naming each row's person (or household): k and risk count people, not rows.",
    ),
]


@with_groups
def check_command(
    data: Data,
    quasi_identifiers: Annotated[
        str, typer.Option("--quasi-identifiers", "-q", help="Comma-separated columns.")
    ],
    goals: GoalFlags = GROUP,
    risk_threshold: Annotated[
        float, typer.Option("--risk-threshold", help="Risk above which a record is at risk.")
    ] = 0.2,
    sampling: SamplingFlags = GROUP,
    hierarchies: SensitiveTree = None,
    person_id: PersonId = None,
    fmt: Format = "text",
    reading: ReadFlags = GROUP,
    engines: EngineFlags = GROUP,
) -> None:
    """Measure k, l, t and re-identification risk of DATA; exit 1 if a threshold fails."""
    from veil.checking import check

    _check_format(fmt)
    columns = [c.strip() for c in quasi_identifiers.split(",") if c.strip()]
    if not columns:
        raise ParameterError("--quasi-identifiers must name a column at least, e.g. -q Age,County")
    engine = engines.chosen()
    with _progress() as say, engines.running(engine):
        result = check(
            data,
            columns,
            engine=engine,
            sensitive=goals.sensitive,
            k=goals.k,
            l=goals.l_value,
            t=goals.t_value,
            t_distance=goals.t_distance,
            models=goals.specs(),
            risk_threshold=risk_threshold,
            population=sampling.population,
            sampling_fraction=sampling.sampling_fraction,
            weights=sampling.weights,
            person=person_id,
            hierarchies=hierarchies,
            batch_rows=engines.batch_rows,
            progress=say,
            **reading.given(),
        )
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        for line in result.lines():
            out.print(line)
    if result.failed:
        from veil.io import display_source  # a database's password is never printed

        raise CheckFailedError(f"{display_source(data)}: does not meet {', '.join(result.failed)}")


@with_groups
def verify_command(
    release: Annotated[str, typer.Argument(help="The released file (or folder of parts).")],
    certificate: Annotated[Path, typer.Option("--certificate", help="Its certificate (JSON).")],
    hierarchies: Annotated[
        Path | None,
        typer.Option(
            "--hierarchies",
            help="The sensitive hierarchy, for a certificate made before veil kept it.",
        ),
    ] = None,
    fmt: Format = "text",
    sep: Sep = None,
    engines: EngineFlags = GROUP,
) -> None:
    """Re-check a release against its certificate, independently of the search."""
    from veil.api import verify

    _check_format(fmt)
    result = verify(
        release,
        certificate,
        engine=engines.chosen(),
        hierarchies=hierarchies,
        batch_rows=engines.batch_rows,
        sep=sep,
    )
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        for claim, holds, detail in result.claims:
            out.print(f"  {'ok  ' if holds else 'FAIL'} {claim}: {detail}")
    if not result.ok:
        raise CheckFailedError(f"{release}: does not verify against {certificate}")


def register(app: typer.Typer) -> None:
    """Add ``veil check`` and ``veil verify`` to ``app``."""
    app.command("check")(check_command)
    app.command("verify")(verify_command)
