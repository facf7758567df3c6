"""``veil scan``: what is personal, column by column; ``veil hierarchy``: how a column would
be generalized."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from veil.cli._common import (
    Backend,
    BatchRows,
    CoerceDates,
    DateFormat,
    Dates,
    Dayfirst,
    Encoding,
    Force,
    Population,
    SamplingFraction,
    Scheduler,
    Sep,
    Sheet,
    SqlQuery,
    SqlTable,
    Streaming,
    Weights,
    Workers,
    _backend,
    _progress,
    _read_options,
    _refuse_given,
    _source,
    _streams,
    out,
)
from veil.exceptions import ParameterError

ROLE_STYLE = {
    "identifier": "bold red",
    "quasi_identifier": "yellow",
    "sensitive": "magenta",
    "insensitive": "dim",
}


def _print_scan(result: Any) -> None:
    grid = Table(title=f"veil scan: {result.rows:,} rows", title_justify="left")
    for header in ("column", "role", "entity", "conf.", "evidence"):
        grid.add_column(header, overflow="fold")
    for c in result.columns:
        style = ROLE_STYLE[c.role.value]
        grid.add_row(
            c.name, Text(c.role.value, style=style), c.entity or "",
            f"{c.confidence:.2f}", c.evidence,
        )  # fmt: skip
    out.print(grid)
    for line in result.category_lines():
        out.print(line)
    first, *rest = result.risk_lines()
    out.print(first)
    for line in rest:
        out.print(f"  {line}")


def scan(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    fmt: Annotated[str, typer.Option("--format", help="Output: table or json.")] = "table",
    suggest: Annotated[
        Path | None,
        typer.Option("--suggest-policy", help="Write a starting policy (YAML) to edit."),
    ] = None,
    sample_size: Annotated[
        int, typer.Option("--sample-size", help="Values sampled per column.", min=10)
    ] = 1000,
    force: Force = False,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = None,
    date_format: DateFormat = None,
    coerce_dates: CoerceDates = False,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
    population: Population = None,
    sampling_fraction: SamplingFraction = None,
    weights: Weights = None,
    streaming: Streaming = None,
    batch_rows: BatchRows = 500_000,
    backend: Backend = "pandas",
    scheduler: Scheduler = None,
    workers: Workers = None,
) -> None:
    """Find the personal data in DATA, column by column, with evidence (and, for a sample,
    the population-uniqueness estimates). A table larger than memory is scanned in batches
    (--streaming) or on a Dask cluster (--backend dask): the sample decides, every row confirms."""
    from veil.demo import ensure_key_file
    from veil.io import OutputSet, TableStream, read
    from veil.keys import DEFAULT_KEY_ENV
    from veil.privacy.suggest import suggest_policy_yaml
    from veil.scan import scan as run
    from veil.scan import scan_stream

    if fmt not in {"table", "json"}:
        raise ParameterError(f"--format must be table or json, got {fmt!r}")
    outputs = OutputSet(force=force, inputs=[data])
    if suggest is not None:
        outputs.check(suggest)
    options = _read_options(
        None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
        date_format=date_format,
        coerce_dates=coerce_dates, sheet=sheet, table=table, query=query,
    )  # fmt: skip
    measures: dict[str, Any] = {
        "sample_size": sample_size, "population": population,
        "sampling_fraction": sampling_fraction, "weights": weights,
    }  # fmt: skip
    reading: dict[str, Any] = {  # what only the reading of a whole table does
        "dates": dates, "dayfirst": dayfirst, "date-format": date_format,
        "coerce-dates": coerce_dates, "sheet": sheet, "table": table, "query": query,
    }  # fmt: skip
    frame = None
    if _backend(backend) == "dask":
        from veil.io import dask_frame
        from veil.privacy._dask import cluster

        _refuse_given(reading, "with --backend dask")
        with _progress() as say, cluster(scheduler, workers):
            result = run(dask_frame(data), progress=say, **measures)
    elif _streams(data, streaming, **reading):
        with _progress() as say:
            source = TableStream(data, sep=options.get("sep"), encoding=options.get("encoding"))
            result = scan_stream(source, batch_rows=batch_rows, progress=say, **measures)
    else:
        with _progress() as say:
            say(f"reading {_source(data)}")
            frame = read(data, **options)
            result = run(frame, progress=say, **measures)
    made_key = None
    if suggest is not None:  # on the table, or on the counts a scan in passes kept
        # no key of the user's: pseudonyms get one in a file beside the policy (only its owner
        # reads it), so that the policy runs at the first try; VEIL_KEY replaces it
        key = None if DEFAULT_KEY_ENV in os.environ else suggest.with_suffix(".key").name
        text = suggest_policy_yaml(result, frame, source=Path(data).name, key_file=key)
        with outputs:
            outputs.stage(suggest).write_text(text, encoding="utf-8")
        if key is not None and f"key_file: {key}" in text:
            made_key = suggest.parent / key
            if made_key.exists():
                made_key = None  # an earlier run's key, kept so pseudonyms stay the same
            else:
                ensure_key_file(suggest.parent / key)
    if fmt == "json":
        out.print_json(result.to_json())
        return
    _print_scan(result)
    if suggest is not None:
        if made_key is not None:
            out.print(f"made a pseudonymization key in {made_key} (only you can read it; keep "
                      "it secret, or set VEIL_KEY to use your own)", markup=False)  # fmt: skip
        out.print(f"wrote a starting policy to {suggest}: edit it, then run")
        out.print(f"  veil anonymize {data} --policy {suggest} -o release.csv")


def hierarchy(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    column: Annotated[str, typer.Argument(help="The column to build the hierarchy of.")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write it here (ARX's CSV form); else print it."),
    ] = None,
    force: Force = False,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = None,
    date_format: DateFormat = None,
    coerce_dates: CoerceDates = False,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
) -> None:
    """Write the generalization hierarchy veil builds for COLUMN of DATA (places by region,
    dates by month, quarter, year..., numbers by nested intervals, categories by order or
    frequency) in ARX's CSV form, to edit and give back with a policy's privacy.hierarchies
    or --hierarchies."""
    from veil.io import OutputSet, read
    from veil.scan.hierarchies import build_hierarchy
    from veil.schema import require_columns

    outputs = OutputSet(force=force, inputs=[data])
    if output is not None:
        outputs.check(output)
    options = _read_options(
        None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
        date_format=date_format, coerce_dates=coerce_dates, sheet=sheet, table=table,
        query=query,
    )  # fmt: skip
    with _progress() as say:
        say(f"reading {_source(data)}")
        frame = read(data, **options)
    require_columns(frame, [column], where="hierarchy column")
    built = build_hierarchy(column, frame[column])
    text = built.to_csv()
    if output is None:
        out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        return
    with outputs:
        outputs.stage(output).write_text(text, encoding="utf-8")
    levels = " -> ".join(built.table[0])
    out.print(f"wrote the hierarchy of {column} to {output}: {built.domain_size:,} values, "
              f"{built.height - 1} levels above them (e.g. {levels})", markup=False)  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``veil scan`` and ``veil hierarchy`` to ``app``."""
    app.command("scan")(scan)
    app.command("hierarchy")(hierarchy)
