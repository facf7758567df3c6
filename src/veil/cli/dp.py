"""The privacy budget (``veil budget``), DP statistics (``veil dp``) and DP synthetic data
(``veil synth``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from veil.cli._common import (
    Bounds,
    EscapeFormulas,
    Force,
    Format,
    Ledger,
    OtherDataset,
    Sep,
    _check_format,
    _ledger,
    _parse_bounds,
    _progress,
    _read_options,
    out,
)
from veil.exceptions import ParameterError

budget_app = typer.Typer(help="The privacy budget: one ledger for every DP release.",
                         no_args_is_help=True)  # fmt: skip


@budget_app.command("init")
def budget_init(
    data: Annotated[str, typer.Argument(help="The dataset the budget protects.")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Total epsilon.")],
    delta: Annotated[float, typer.Option("--delta", help="Total delta.")] = 0.0,
    composition: Annotated[
        str, typer.Option("--composition", help="sequential or advanced.")
    ] = "sequential",
    ledger: Ledger = None,
    sep: Sep = None,
) -> None:
    """Create the budget for DATA (never replaces an existing one)."""
    from veil.dp import Accountant, Budget
    from veil.dp.budget import dataset_id
    from veil.io import read

    path = _ledger(ledger)
    frame = read(data, **_read_options(None, sep=sep))
    Accountant.create(path, Budget(epsilon, delta), composition=composition,
                      dataset=dataset_id(frame))  # fmt: skip
    out.print(f"created the privacy budget in {path}: epsilon {epsilon:g}, delta {delta:g} "
              f"({composition}) for {data}")  # fmt: skip


@budget_app.command("show")
def budget_show(ledger: Ledger = None, fmt: Format = "text") -> None:
    """The budget, what was spent on what, and what remains."""
    from veil.dp import Accountant

    acc = Accountant(_ledger(ledger))
    spent, left = acc.spent(), acc.remaining()
    if fmt == "json":
        entries = [e.__dict__ for e in acc.entries()]
        out.print_json(json.dumps({
            "budget": acc.budget.__dict__, "composition": acc.composition,
            "spent": spent.__dict__, "remaining": left.__dict__, "entries": entries,
        }))  # fmt: skip
        return
    grid = Table("#", "when", "what", "epsilon", "delta", "status", title=str(acc.path))
    for e in acc.entries():
        grid.add_row(str(e.id), e.at, e.what, f"{e.epsilon:g}", f"{e.delta:g}", e.status)
    out.print(grid)
    out.print(f"budget epsilon {acc.budget.epsilon:g}, delta {acc.budget.delta:g} "
              f"({acc.composition}); spent {spent.epsilon:g}, {spent.delta:g}; "
              f"remaining {left.epsilon:g}, {left.delta:g}")  # fmt: skip


@budget_app.command("reset")
def budget_reset(
    ledger: Ledger = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: forget every entry.")] = False,
) -> None:
    """Forget every entry of the ledger (the budget stays). Needs --yes."""
    from veil.dp import Accountant

    if not yes:
        raise ParameterError("resetting forgets every DP release made; confirm with --yes")
    acc = Accountant(_ledger(ledger))
    acc.reset()
    out.print(f"{acc.path}: ledger emptied; budget epsilon {acc.budget.epsilon:g} available")


def dp_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    query: Annotated[
        str, typer.Argument(help='e.g. "mean(Age)", "count()", "quantile(Age, 0.9)".')
    ],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Epsilon to spend.")],
    bounds: Bounds = None,
    categories: Annotated[
        str | None,
        typer.Option(
            "--categories", help="Comma-separated public categories (of the column, or of --by)."
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Per group of this column: count() or mean(col) per category."),
    ] = None,
    person_id: Annotated[
        str | None,
        typer.Option(
            "--person-id",
            help="count, sum, mean, histogram per person: epsilon "
            "protects a person (all their rows), not a row.",
        ),
    ] = None,
    max_contributions: Annotated[
        int, typer.Option("--max-contributions", help="Rows kept per person (with --person-id).")
    ] = 1,
    ledger: Ledger = None,
    other_dataset: OtherDataset = False,
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """A differentially private statistic of DATA, charged to the budget.

    With `--by County --categories Nairobi,Kisumu`, `count()` and `mean(Age)` are answered per
    group; the groups are disjoint, so all of them cost epsilon once."""
    from veil.dp import Accountant
    from veil.dp import stats as dpstats
    from veil.io import read

    _check_format(fmt)
    name, args = _parse_query(query)
    limits = _parse_bounds(bounds or [])
    acc = Accountant(_ledger(ledger), other_dataset=other_dataset)
    frame = read(data, **_read_options(None, sep=sep))
    cats = [c.strip() for c in categories.split(",")] if categories else None
    column = args[0] if args else None
    common: dict[str, Any] = {"epsilon": epsilon, "accountant": acc}
    if person_id is not None or max_contributions != 1:
        if by is not None or name not in {"count", "sum", "mean", "histogram"}:
            raise ParameterError("--person-id bounds one person's rows in count(), sum(col), "
                                 "mean(col) and histogram(col), without --by")  # fmt: skip
        common.update(person=person_id, max_contributions=max_contributions)
    if by is not None:
        if cats is None:
            raise ParameterError(
                f"--by {by} needs the groups, from public knowledge: --categories A,B,C"
            )
        if name == "count" and column is None:
            result = dpstats.grouped_count(frame, by, categories=cats, **common)
        elif name == "mean" and column:
            result = dpstats.grouped_mean(
                frame, column, by, categories=cats, bounds=limits.get(column), **common
            )
        else:
            raise ParameterError(f"--by answers count() or mean(col) per group, got {query!r}")
    elif name == "count":
        result = dpstats.count(frame, column, **common)
    elif name in {"sum", "mean", "variance", "std", "median"} and column:
        result = getattr(dpstats, name)(frame, column, bounds=limits.get(column), **common)
    elif name == "quantile" and len(args) == 2:
        try:
            q = float(args[1])
        except ValueError as e:
            raise ParameterError(
                f"the q of quantile(col, q) must be a number in [0, 1], got {args[1]!r}; "
                'e.g. "quantile(Age, 0.9)"'
            ) from e
        result = dpstats.quantile(frame, args[0], q, bounds=limits.get(args[0]), **common)
    elif name == "histogram" and column:
        result = dpstats.histogram(
            frame, column, bounds=limits.get(column), categories=cats, **common
        )
    else:
        raise ParameterError(
            f"query must be count(), count(col), sum(col), mean(col), variance(col), std(col), "
            f"median(col), quantile(col, q) or histogram(col), got {query!r}"
        )
    left = acc.remaining()
    if fmt == "json":
        answer = {**result.to_dict(), "remaining_epsilon": left.epsilon}
        out.print_json(json.dumps(answer, default=float))
        return
    out.print(_answer_table(result, left.epsilon))
    for note in result.notes:
        out.print(f"  {note}")


def _answer_table(result: Any, remaining: float) -> Table:
    """A DP answer as a person reads it (``DPResult.rows``) and the budget left."""
    grid = Table(title=result.statistic, title_justify="left", show_header=False, box=None)
    grid.add_column(style="bold")
    grid.add_column()
    for label, value in result.rows():
        grid.add_row(label, value)
    grid.add_row("remaining", f"epsilon {remaining:g}")
    return grid


def synth_command(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Synthetic table (.csv/.parquet).")
    ],
    data: Annotated[
        str | None,
        typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL (or --schema)."),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            help="marginals, copula (Gaussian copula), tvae (a variational autoencoder; the ml "
            "extra) or mst (differentially private, needs --epsilon).",
        ),
    ] = None,
    dp_flag: Annotated[bool, typer.Option("--dp", help="Same as --method mst.")] = False,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="Epsilon to spend.")] = None,
    columns: Annotated[
        str | None, typer.Option("--columns", help="Comma-separated columns (default: all usable).")
    ] = None,
    bounds: Bounds = None,
    bins: Annotated[int, typer.Option("--bins", help="Bins per numeric column.", min=2)] = 10,
    rows: Annotated[
        int | None,
        typer.Option(
            "--rows",
            help="Rows to make (default: as many as DATA; for mst, the DP estimate).",
            min=1,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed of the sampling: same seed, same rows (mst: only the row order; its DP "
            "noise is never seeded).",
        ),
    ] = None,
    schema: Annotated[
        Path | None,
        typer.Option(
            "--schema",
            help="Make test data from a schema (YAML: Faker per column, distributions, or "
            "kind: classification/blobs) instead of from DATA.",
        ),
    ] = None,
    condition_on: Annotated[
        str | None,
        typer.Option(
            "--condition-on",
            help="copula: one copula per value of these comma-separated categorical columns "
            "(the target a model will predict first), so the columns' dependence on them is "
            "kept.",
        ),
    ] = None,
    clusters: Annotated[
        int | None,
        typer.Option(
            "--clusters",
            help="copula: also split the rows into this many k-means clusters, a copula for "
            "each (a mixture: dependence that differs between groups of rows is kept).",
        ),
    ] = None,
    ledger: Ledger = None,
    other_dataset: OtherDataset = False,
    force: Force = False,
    escape_formulas: EscapeFormulas = True,
    sep: Sep = None,
) -> None:
    """Synthetic data: column marginals, a Gaussian copula, or DP MST (charged to the budget)."""
    from veil.io import check_output, check_writable, output_format, read, write

    if (data is None) == (schema is None):
        raise ParameterError("give DATA to learn from, or --schema to make test data from")
    if schema is not None:
        _synth_schema(schema, output, rows=rows, seed=seed, force=force,
                      escape_formulas=escape_formulas)  # fmt: skip
        return
    assert data is not None
    if method is None and not dp_flag and epsilon is None:
        raise ParameterError(
            "choose how: --method copula or marginals (not differentially private: measure "
            "the result with veil evaluate), or --method mst --epsilon E"
        )
    chosen_method = method or "mst"
    if dp_flag and chosen_method != "mst":
        raise ParameterError(f"--dp means --method mst, not {chosen_method}: pass one of them")
    if chosen_method == "mst" and epsilon is None:
        raise ParameterError("--method mst is differentially private: pass --epsilon E")
    if chosen_method != "mst" and epsilon is not None:
        raise ParameterError(
            f"--epsilon applies to --method mst only; {chosen_method} is not differentially private"
        )
    fmt_out = output_format(output)
    check_output(output, inputs=[data], force=force)
    if rows is not None:
        check_writable(fmt_out, output, rows=rows)
    frame = read(data, **_read_options(None, sep=sep))
    chosen = [c.strip() for c in columns.split(",")] if columns else None
    if chosen_method == "mst":
        assert epsilon is not None
        _synth_mst(frame, data, output, epsilon=epsilon, columns=chosen, bounds=bounds,
                   bins=bins, rows=rows, seed=seed, ledger=ledger, force=force,
                   escape_formulas=escape_formulas, other_dataset=other_dataset)  # fmt: skip
        return
    from veil import synth
    from veil.schema import require_columns

    for flag, given in (("--condition-on", condition_on), ("--clusters", clusters)):
        if given is not None and chosen_method != "copula":
            raise ParameterError(f"{flag} applies to --method copula, not {chosen_method}")
    options: dict[str, object] = {}
    if condition_on:
        options["condition_on"] = [c.strip() for c in condition_on.split(",")]
    if clusters is not None:
        options["clusters"] = clusters
    model = synth.make(chosen_method, **options)
    if chosen is not None:
        require_columns(frame, chosen, where="--columns")
        frame = frame[chosen]
    with _progress() as say:
        model.progress = say
        model.fit(frame, seed=seed)
        say(f"sampling {rows or len(frame):,} rows")
        synthetic = model.sample(rows, seed=seed)
    write(synthetic, output, force=force, inputs=[data], escape_formulas=escape_formulas)
    out.print(
        f"wrote {output} ({len(synthetic):,} synthetic rows, {synthetic.shape[1]} columns; "
        f"{chosen_method}, not differentially private: measure its privacy before release)"
    )
    for line in model.describe():
        out.print(f"  {line}")


def _synth_schema(schema: Path, output: Path, *, rows: int | None, seed: int | None,
                  force: bool, escape_formulas: bool) -> None:  # fmt: skip
    from veil.io import check_output, write
    from veil.synth import from_schema

    check_output(output, inputs=[str(schema)], force=force)
    with _progress() as say:
        say(f"making rows from {schema}")
        frame = from_schema(schema, rows, seed=seed)
    write(frame, output, force=force, inputs=[str(schema)], escape_formulas=escape_formulas)
    out.print(f"wrote {output} ({len(frame):,} rows, {frame.shape[1]} columns from {schema}; "
              "test data: no real row was read)")  # fmt: skip


def _synth_mst(
    frame: Any, data: str, output: Path, *, epsilon: float, columns: list[str] | None,
    bounds: list[str] | None, bins: int, rows: int | None, seed: int | None,
    ledger: Path | None, force: bool, escape_formulas: bool, other_dataset: bool = False,
) -> None:  # fmt: skip
    from veil.dp import Accountant
    from veil.dp.budget import NEIGHBOURS
    from veil.dp.synth import synthesize
    from veil.io import write

    acc = Accountant(_ledger(ledger), other_dataset=other_dataset)
    with _progress() as say:
        say("fitting MST marginals and synthesizing")
        result = synthesize(frame, epsilon=epsilon, accountant=acc, columns=columns,
                            bounds=_parse_bounds(bounds or []), bins=bins, rows=rows,
                            random_state=0 if seed is None else seed)  # fmt: skip
    write(result.data, output, force=force, inputs=[data], escape_formulas=escape_formulas)
    out.print(
        f"wrote {output} ({len(result.data):,} synthetic rows, {len(result.columns)} columns; "
        f"epsilon {epsilon:g} spent, neighbours: {NEIGHBOURS})"
    )
    for note in result.notes:
        out.print(f"  {note}")


def _parse_query(query: str) -> tuple[str, list[str]]:
    import re

    match = re.fullmatch(r"\s*(\w+)\s*\(([^)]*)\)\s*", query)
    if match is None:
        raise ParameterError(f'query must look like "mean(Age)", got {query!r}')
    args = [a.strip() for a in match.group(2).split(",") if a.strip() and a.strip() != "*"]
    return match.group(1).lower(), args


def register(app: typer.Typer) -> None:
    """Add ``veil budget``, ``veil dp`` and ``veil synth`` to ``app``."""
    app.add_typer(budget_app, name="budget")
    app.command("dp")(dp_command)
    app.command("synth")(synth_command)
