"""``veil scan``: what is personal, column by column; ``veil hierarchy``: how a column would
be generalized."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from veil.cli._common import (
    GROUP,
    Data,
    EngineFlags,
    Force,
    Format,
    ReadFlags,
    SamplingFlags,
    _check_format,
    _progress,
    out,
    output_option,
    with_groups,
)

ROLE_STYLE = {
    "identifier": "bold red",
    "quasi_identifier": "yellow",
    "sensitive": "magenta",
    "insensitive": "dim",
}


def print_scan(result: Any) -> None:
    """The scan as a table of columns, then its category and risk lines."""
    grid = Table(title=f"veil scan: {result.rows:,} rows", title_justify="left")
    for header in ("column", "role", "entity", "conf.", "evidence"):
        grid.add_column(header, overflow="fold")
    for c in result.columns:
        style = ROLE_STYLE[c.role.value]
        grid.add_row(
            c.name,
            Text(c.role.value, style=style),
            c.entity or "",
            f"{c.confidence:.2f}",
            c.evidence,
        )
    out.print(grid)
    for line in result.category_lines():
        out.print(line)
    first, *rest = result.risk_lines()
    out.print(first)
    for line in rest:
        out.print(f"  {line}")


@with_groups
def scan(
    data: Data,
    fmt: Format = "text",
    suggest: Annotated[
        Path | None,
        typer.Option("--suggest-policy", help="Write a starting policy (YAML) to edit."),
    ] = None,
    sample_size: Annotated[
        int, typer.Option("--sample-size", help="Values sampled per column.", min=10)
    ] = 1000,
    force: Force = False,
    reading: ReadFlags = GROUP,
    sampling: SamplingFlags = GROUP,
    engines: EngineFlags = GROUP,
) -> None:
    """Find the personal data in DATA, column by column, with evidence (and, for a sample,
    the population-uniqueness estimates). A table larger than memory is scanned in batches
    (--engine stream) or on a Dask cluster (--engine dask): the sample decides, every row
    confirms."""
    from veil.privacy.scanned import scan_and_suggest

    fmt = _check_format(fmt)
    engine = engines.chosen()
    options = {"sample_size": sample_size, **(sampling.given() or {})}
    with _progress() as say, engines.running(engine):
        found = scan_and_suggest(
            data,
            suggest,
            engine=engine,
            force=force,
            progress=say,
            batch_rows=engines.batch_rows,
            scan_options=options,
            **reading.given(),
        )
    if fmt == "json":
        out.print_json(found.scan.to_json())
        return
    print_scan(found.scan)
    if found.key is not None:
        out.print(
            f"made a pseudonymization key in {found.key} (only you can read it; keep "
            "it secret, or set VEIL_KEY to use your own)"
        )
    if suggest is not None:
        _say_what_next(data, suggest, bool(found.scan.quasi_identifiers), reading.given())


def _say_what_next(data: str, suggest: Path, marked: bool, reading: dict[str, Any]) -> None:
    """The lines after a suggested policy: what to do with it and the command that releases
    with it (a database's password and a query naming a person never printed)."""
    from veil.io import display_source
    from veil.privacy.suggest import UNMARKED, personal_query

    if marked:
        out.print(f"wrote a starting policy to {suggest}: edit it, then run")
    else:
        out.print(
            f"wrote a starting policy to {suggest}: {UNMARKED}, so mark the columns "
            "that could single someone out (role: quasi_identifier) in it, then run"
        )
    run = f"  veil anonymize {display_source(data)} --policy {suggest} -o release.csv"
    held = personal_query(reading.get("query"))
    if held is not None:  # not in the policy: the query is given again
        run += f" --query ...  (your query: it holds {held}, so the policy does not)"
    out.print(run)


@with_groups
def hierarchy(
    data: Data,
    column: Annotated[str, typer.Argument(help="The column to build the hierarchy of.")],
    output: Annotated[
        Path | None,
        output_option("Write it here (ARX's CSV form); else print it."),
    ] = None,
    force: Force = False,
    reading: ReadFlags = GROUP,
) -> None:
    """Write the generalization hierarchy veil builds for COLUMN of DATA (places by region,
    dates by month, quarter, year..., numbers by nested intervals, categories by order or
    frequency) in ARX's CSV form, to edit and give back with a policy's privacy.hierarchies
    or --hierarchies."""
    from veil.io import OutputSet, Source
    from veil.scan.hierarchies import build_hierarchy
    from veil.schema import require_columns

    outputs = OutputSet(force=force, inputs=[data])
    if output is not None:
        outputs.check(output)
    src = Source.of(data, **reading.given())
    with _progress() as say:
        say(f"reading {src.name}")
        frame = src.frame()
    require_columns(frame, [column], where="hierarchy column")
    built = build_hierarchy(column, frame[column])
    text = built.to_csv()
    if output is None:
        out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        return
    with outputs:
        outputs.stage(output).write_text(text, encoding="utf-8")
    levels = " -> ".join(built.table[0])
    out.print(
        f"wrote the hierarchy of {column} to {output}: {built.domain_size:,} values, "
        f"{built.height - 1} levels above them (e.g. {levels})",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``veil scan`` and ``veil hierarchy`` to ``app``."""
    app.command("scan")(scan)
    app.command("hierarchy")(hierarchy)
