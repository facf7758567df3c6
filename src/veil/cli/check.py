"""``veil check`` and ``veil verify``: measure a table, re-check a release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import (
    Encoding,
    Format,
    KGoal,
    LGoal,
    ModelGoals,
    Sensitive,
    Sep,
    Sheet,
    SqlQuery,
    SqlTable,
    TDistance,
    TGoal,
    _check_format,
    _model_specs,
    _read_options,
    out,
)
from veil.exceptions import CheckFailedError, InputError, ParameterError


def check_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    quasi_identifiers: Annotated[
        str, typer.Option("--quasi-identifiers", "-q", help="Comma-separated columns.")
    ],
    sensitive: Sensitive = None,
    k: KGoal = None,
    l_value: LGoal = None,
    t_value: TGoal = None,
    t_distance: TDistance = None,
    models: ModelGoals = None,
    risk_threshold: Annotated[
        float, typer.Option("--risk-threshold", help="Risk above which a record is at risk.")
    ] = 0.2,
    fmt: Format = "text",
    sep: Sep = None,
    encoding: Encoding = None,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
) -> None:
    """Measure k, l, t and re-identification risk of DATA; exit 1 if a threshold fails."""
    from veil.io import read
    from veil.privacy import check

    _check_format(fmt)
    specs = _model_specs(models)
    options = _read_options(None, sep=sep, encoding=encoding, sheet=sheet, table=table, query=query)
    frame = read(data, **options)
    columns = [c.strip() for c in quasi_identifiers.split(",") if c.strip()]
    if not columns:
        raise ParameterError("--quasi-identifiers must name a column at least, e.g. -q Age,County")
    result = check(
        frame, columns, sensitive=sensitive, k=k, l=l_value, t=t_value, t_distance=t_distance,
        risk_threshold=risk_threshold, models=specs,
    )  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        r = result.risk
        out.print(f"{result.rows:,} rows, {result.classes:,} classes on {', '.join(columns)}")
        out.print(f"  k = {result.k}")
        if result.l_distinct is not None:
            out.print(f"  l = {result.l_distinct} (distinct), {result.l_entropy} (entropy)")
            out.print(f"  t = {result.t:.4f} ({result.t_distance} distance)")
        out.print(
            f"  prosecutor risk: average {r.prosecutor_average:.4f}, "
            f"highest {r.prosecutor_max:.4f}; "
            f"{r.records_at_risk:.2%} of records above {r.threshold}; "
            f"{r.sample_uniques:.2%} unique"
        )
    if result.failed:
        raise CheckFailedError(f"{data}: does not meet {', '.join(result.failed)}")


def verify_command(
    release: Annotated[str, typer.Argument(help="The released file.")],
    certificate: Annotated[Path, typer.Option("--certificate", help="Its certificate (JSON).")],
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """Re-check a release against its certificate, independently of the search."""
    from veil.io import read
    from veil.privacy import verify

    _check_format(fmt)
    try:
        claims = json.loads(certificate.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError(f"{certificate}: no such certificate file") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{certificate}: not a JSON certificate ({e})") from e
    frame = read(release, **_read_options(None, sep=sep))
    result = verify(frame, claims)
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
