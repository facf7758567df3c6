"""The privacy budget (``veil budget``) and DP statistics (``veil dp``)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from veil.cli._common import (
    Bounds,
    Format,
    Ledger,
    OtherDataset,
    Sep,
    _check_format,
    _ledger,
    _parse_bounds,
    _read_options,
    epsilon_option,
    out,
)
from veil.exceptions import ParameterError

budget_app = typer.Typer(
    help="The privacy budget: one ledger for every DP release.", no_args_is_help=True
)


@budget_app.command("init")
def budget_init(
    data: Annotated[str, typer.Argument(help="The dataset the budget protects.")],
    epsilon: Annotated[float, epsilon_option("Total epsilon.")],
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
    Accountant.create(
        path, Budget(epsilon, delta), composition=composition, dataset=dataset_id(frame)
    )
    from veil.io import display_source  # a database's password is never printed

    out.print(
        f"created the privacy budget in {path}: epsilon {epsilon:g}, delta {delta:g} "
        f"({composition}) for {display_source(data)}"
    )


@budget_app.command("show")
def budget_show(ledger: Ledger = None, fmt: Format = "text") -> None:
    """The budget, what was spent on what, and what remains."""
    from veil.dp import Accountant

    acc = Accountant(_ledger(ledger))
    spent, left = acc.spent(), acc.remaining()
    if fmt == "json":
        entries = [e.__dict__ for e in acc.entries()]
        out.print_json(
            json.dumps(
                {
                    "budget": acc.budget.__dict__,
                    "composition": acc.composition,
                    "spent": spent.__dict__,
                    "remaining": left.__dict__,
                    "entries": entries,
                }
            )
        )
        return
    grid = Table("#", "when", "what", "epsilon", "delta", "status", title=str(acc.path))
    for e in acc.entries():
        grid.add_row(str(e.id), e.at, e.what, f"{e.epsilon:g}", f"{e.delta:g}", e.status)
    out.print(grid)
    out.print(
        f"budget epsilon {acc.budget.epsilon:g}, delta {acc.budget.delta:g} "
        f"({acc.composition}); spent {spent.epsilon:g}, {spent.delta:g}; "
        f"remaining {left.epsilon:g}, {left.delta:g}"
    )


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


Categories = Annotated[
    str | None,
    typer.Option(
        "--categories", help="Comma-separated public categories (of the column, or of --by)."
    ),
]
By = Annotated[
    str | None,
    typer.Option("--by", help="Per group of this column: count() or mean(col) per category."),
]
PersonId = Annotated[
    str | None,
    typer.Option(
        "--person-id",
        help="count, sum, mean, histogram per person: epsilon protects a person (all their "
        "rows), not a row.",
    ),
]
MaxContributions = Annotated[
    int, typer.Option("--max-contributions", help="Rows kept per person (with --person-id).")
]


def dp_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    query: Annotated[
        str, typer.Argument(help='e.g. "mean(Age)", "count()", "quantile(Age, 0.9)".')
    ],
    epsilon: Annotated[float, epsilon_option("Epsilon to spend.")],
    bounds: Bounds = None,
    categories: Categories = None,
    by: By = None,
    person_id: PersonId = None,
    max_contributions: MaxContributions = 1,
    ledger: Ledger = None,
    other_dataset: OtherDataset = False,
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """A differentially private statistic of DATA, charged to the budget.

    With `--by County --categories Nairobi,Kisumu`, `count()` and `mean(Age)` are answered per
    group; the groups are disjoint, so all of them cost epsilon once."""
    from veil.dp import Accountant, answer
    from veil.io import Source

    _check_format(fmt)
    acc = Accountant(_ledger(ledger), other_dataset=other_dataset)
    frame = Source.of(data, sep=sep).frame()
    result = answer(
        frame,
        query,
        epsilon=epsilon,
        accountant=acc,
        bounds=_parse_bounds(bounds or []),
        categories=[c.strip() for c in categories.split(",")] if categories else None,
        by=by,
        person=person_id,
        max_contributions=max_contributions,
    )
    left = acc.remaining()
    if fmt == "json":
        said = {**result.to_dict(), "remaining_epsilon": left.epsilon}
        out.print_json(json.dumps(said, default=float))
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


def register(app: typer.Typer) -> None:
    """Add ``veil budget`` and ``veil dp`` to ``app``."""
    app.add_typer(budget_app, name="budget")
    app.command("dp")(dp_command)
