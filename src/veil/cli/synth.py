"""``veil synth``: synthetic data learnt from a table (a copula, marginals, a variational
autoencoder, or differentially private MST or AIM charged to the budget), or test data from
a schema alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli._common import (
    GROUP,
    Bounds,
    EscapeFormulas,
    Force,
    Ledger,
    OtherDataset,
    Sep,
    _ledger,
    _parse_bounds,
    _progress,
    epsilon_option,
    out,
    output_option,
    seed_option,
    with_groups,
)
from veil.exceptions import ParameterError

#: The differentially private methods (--dp, --epsilon, the ledger)
PRIVATE = ("mst", "aim")

Output = Annotated[Path, output_option("Synthetic table (.csv/.parquet).")]
Learnt = Annotated[
    str | None,
    typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL (or --schema)."),
]
Method = Annotated[
    str | None,
    typer.Option(
        "--method",
        help="copula (a Gaussian copula, split into clusters of rows the data support: the "
        "default), marginals, tvae (a variational autoencoder; the ml extra), mst "
        "(differentially private, needs --epsilon; --epsilon alone means mst) or aim "
        "(differentially private as mst, its marginals chosen round by round: slower, "
        "better rows).",
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="The column a model will predict from the rows: the copula is conditioned on it "
        "(one copula per value), so how the other columns depend on it is kept; aim weighs "
        "its pairs with the other columns more.",
    ),
]
Rows = Annotated[
    int | None,
    typer.Option(
        "--rows",
        help="Rows to make (default: as many as DATA; for mst and aim, the DP estimate).",
        min=1,
    ),
]
Seed = Annotated[
    int | None,
    seed_option(
        "Seed of the sampling: same seed, same rows (mst and aim: only the sampling; their "
        "DP noise is never seeded)."
    ),
]
Schema = Annotated[
    Path | None,
    typer.Option(
        "--schema",
        help="Make test data from a schema (YAML: Faker per column, distributions, or "
        "kind: classification/blobs) instead of from DATA.",
    ),
]


@dataclass
class CopulaFlags:
    """The copula's options."""

    condition_on: Annotated[
        str | None,
        typer.Option(
            "--condition-on",
            help="copula: one copula per value of these comma-separated categorical columns "
            "(the target a model will predict first), so the columns' dependence on them is "
            "kept.",
        ),
    ] = None
    clusters: Annotated[
        str | None,
        typer.Option(
            "--clusters",
            help="copula: split the rows into this many k-means clusters, a copula for each (a "
            "mixture: dependence that differs between groups of rows is kept); auto (the "
            "default) chooses by BIC, 1 keeps one copula.",
        ),
    ] = None

    def options(self, method: str) -> dict[str, object]:
        """The synthesizer's options these flags give (only the copula takes them)."""
        given: dict[str, object] = {"condition_on": self.condition_on, "clusters": self.clusters}
        for name, value in given.items():
            if value is not None and method != "copula":
                flag = "--" + name.replace("_", "-")
                raise ParameterError(f"{flag} applies to --method copula, not {method}")
        if self.condition_on:
            given["condition_on"] = [c.strip() for c in self.condition_on.split(",")]
        if self.clusters is not None:
            given["clusters"] = _clusters(self.clusters)
            return {k: v for k, v in given.items() if v is not None or k == "clusters"}
        return {k: v for k, v in given.items() if v is not None}


def _clusters(text: str) -> str | int | None:
    """``--clusters``: auto, 1 (no split: None) or a whole number of at least 2."""
    word = text.strip().lower()
    if word == "auto":
        return "auto"
    try:
        number = int(word)
    except ValueError:
        number = 0
    if number < 1:
        raise ParameterError(f"--clusters takes auto or a whole number of at least 1, got {text!r}")
    return None if number == 1 else number


@dataclass
class MstFlags:
    """Differentially private synthesis (MST, AIM)."""

    dp_flag: Annotated[bool, typer.Option("--dp", help="Same as --method mst.")] = False
    epsilon: Annotated[float | None, epsilon_option("Epsilon to spend.")] = None
    bounds: Bounds = None
    bins: Annotated[int, typer.Option("--bins", help="Bins per numeric column.", min=2)] = 10
    ledger: Ledger = None
    other_dataset: OtherDataset = False

    def method(self, asked: str | None) -> str:
        """The method asked for, checked against --dp and --epsilon."""
        if asked is None and not self.dp_flag and self.epsilon is None:
            return "copula"
        chosen = asked or "mst"
        if self.dp_flag and chosen not in PRIVATE:
            raise ParameterError(f"--dp means --method mst (or aim), not {chosen}")
        return chosen


@with_groups
def synth_command(
    output: Output,
    data: Learnt = None,
    method: Method = None,
    private: MstFlags = GROUP,
    columns: Annotated[
        str | None, typer.Option("--columns", help="Comma-separated columns (default: all usable).")
    ] = None,
    rows: Rows = None,
    seed: Seed = None,
    schema: Schema = None,
    copula: CopulaFlags = GROUP,
    target: Target = None,
    force: Force = False,
    escape_formulas: EscapeFormulas = True,
    sep: Sep = None,
) -> None:
    """Synthetic data: a Gaussian copula by default (split into the clusters of rows the data
    support; --target conditions it on the column a model will predict), column marginals, a
    variational autoencoder, or DP MST or AIM (charged to the budget)."""
    if (data is None) == (schema is None):
        raise ParameterError("give DATA to learn from, or --schema to make test data from")
    if schema is not None:
        _from_schema(
            schema, output, rows=rows, seed=seed, force=force, escape_formulas=escape_formulas
        )
        return
    chosen = private.method(method)
    given = _copula_options(chosen, copula, target, data)
    from veil.api import synthesize

    with _progress() as say:
        made = synthesize(
            data,
            output,
            method=chosen,
            epsilon=private.epsilon,
            accountant=_accountant(chosen, private),
            bins=private.bins,
            rows=rows,
            random_state=seed,
            columns=[c.strip() for c in columns.split(",")] if columns else None,
            bounds=_parse_bounds(private.bounds or []),
            options=given,
            target=target,
            force=force,
            escape_formulas=escape_formulas,
            progress=say,
            sep=sep,
        )
    if method is None and chosen == "copula":
        out.print(
            "method: copula, the default (--method marginals, tvae, or mst/aim --epsilon E for "
            "differential privacy)" + (f"; conditioned on {target} (--target)" if target else "")
        )
    _said(made, output)


def _accountant(chosen: str, private: MstFlags) -> Any:
    """The budget's ledger for DP synthesis with an epsilon, else None."""
    if chosen not in PRIVATE or private.epsilon is None:
        return None
    from veil.dp import Accountant

    return Accountant(_ledger(private.ledger), other_dataset=private.other_dataset)


#: A file this large may hold a mixture's ``PARALLEL_ROWS`` rows: its second process is started
#: before the file is read.
MIXTURE_BYTES = 256 * 1024


def _copula_options(
    chosen: str, copula: CopulaFlags, target: str | None, data: object
) -> dict[str, object]:
    """The synthesizer's options from the copula's flags; for a mixture read from a large
    file, its second process is started here, before this process imports pandas and scipy,
    so that both import at once."""
    given = copula.options(chosen)
    if chosen == "copula" and _mixture(given, target) and _large_file(data):
        from veil.synth import start_second_process

        start_second_process()
    return given


def _mixture(options: dict[str, object], target: str | None) -> bool:
    """Whether a copula with ``options`` may be a mixture (``--clusters 1`` alone is not)."""
    return not ("clusters" in options and options["clusters"] is None) or bool(
        target or options.get("condition_on")
    )


def _large_file(data: object) -> bool:
    try:
        return Path(str(data)).is_file() and Path(str(data)).stat().st_size >= MIXTURE_BYTES
    except OSError:  # a URL, or a name too long for a path
        return False


def _said(made: object, output: Path) -> None:
    from veil.api import Synthesized
    from veil.dp.budget import NEIGHBOURS

    assert isinstance(made, Synthesized)
    size = f"{len(made.data):,} synthetic rows, {made.data.shape[1]} columns"
    if made.epsilon is not None:
        out.print(
            f"wrote {output} ({size}; epsilon {made.epsilon:g} spent, neighbours: {NEIGHBOURS})"
        )
    else:
        out.print(
            f"wrote {output} ({size}; {made.method}, not differentially private: measure "
            "its privacy before release)"
        )
    for line in made.lines:
        out.print(f"  {line}")


def _from_schema(
    schema: Path,
    output: Path,
    *,
    rows: int | None,
    seed: int | None,
    force: bool,
    escape_formulas: bool,
) -> None:
    from veil.io import check_output, write
    from veil.synth import from_schema

    check_output(output, inputs=[str(schema)], force=force)
    with _progress() as say:
        say(f"making rows from {schema}")
        frame = from_schema(schema, rows, random_state=seed)
    write(frame, output, force=force, inputs=[str(schema)], escape_formulas=escape_formulas)
    out.print(
        f"wrote {output} ({len(frame):,} rows, {frame.shape[1]} columns from {schema}; "
        "test data: no real row was read)"
    )


def register(app: typer.Typer) -> None:
    """Add ``veil synth`` to ``app``."""
    app.command("synth")(synth_command)
