"""What every command shares: the consoles, the options (same words everywhere), progress,
reading options and small parsers. Commands live in one module per group (``scan``,
``release``, ``check``, ``dp``, ``tools``), each with a ``register(app)``."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import typing
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.exceptions import ParameterError
from veil.progress import Progress

if typing.TYPE_CHECKING:
    from rich.console import Console

#: the control characters rich's text drops (bell, backspace, vertical tab, form feed, return)
_DROPPED = dict.fromkeys((7, 8, 11, 12, 13))


class LazyConsole:
    """A rich ``Console`` made when first needed. Until then a line of plain text is written
    as that console writes it (the control characters rich drops dropped; a line with a tab,
    which rich sets to its stops by cell width, goes to rich): most commands print only such
    lines, and importing rich took 13 ms of every command's start, before any work."""

    def __init__(self, *, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The rich console (made now if it was not): for tables, JSON, live progress."""
        if self._console is None:
            from rich.console import Console

            # markup and emoji off: a column or file named "[red]x" or ":bomb:" is printed as
            # it is
            self._console = Console(
                stderr=self._stderr, highlight=False, soft_wrap=True, markup=False, emoji=False
            )
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """``Console.print``; plain text, with no option, written without rich until a
        console is made (after it, always through it: a live bar may be on screen)."""
        plain = self._console is None and not options
        if plain and all(isinstance(o, str) and "\t" not in o for o in objects):
            stream = sys.stderr if self._stderr else sys.stdout
            stream.write(" ".join(objects).translate(_DROPPED) + "\n")
            stream.flush()
            return
        self.console.print(*objects, **options)

    @property
    def is_terminal(self) -> bool:
        """Rich's answer, asked of rich only where it may be yes: a stream that is a terminal,
        or the variables rich reads to be told it is one (``TTY_COMPATIBLE``, ``FORCE_COLOR``)."""
        stream = sys.stderr if self._stderr else sys.stdout
        try:
            tty = bool(stream.isatty())
        except (AttributeError, ValueError):  # no such method, or a closed stream
            tty = False
        told = any(name in os.environ for name in ("TTY_COMPATIBLE", "FORCE_COLOR"))
        if tty or told or self._console is not None:
            return bool(self.console.is_terminal)
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


out = LazyConsole()
err = LazyConsole(stderr=True)

# Options shared by every command that reads data, with the same words everywhere.
Sep = Annotated[str | None, typer.Option("--sep", help="CSV delimiter (detected if omitted).")]
Encoding = Annotated[
    str | None, typer.Option("--encoding", help="Text encoding (detected if omitted).")
]
Dates = Annotated[
    str | None, typer.Option("--dates", help="Comma-separated columns to parse as dates.")
]
Dayfirst = Annotated[
    bool | None,
    typer.Option(
        "--dayfirst/--monthfirst",
        help="Dates are day-first (11/09/15 = 11 Sep 2015) or month-first; detected if omitted.",
    ),
]
CoerceDates = Annotated[
    bool,
    typer.Option(
        "--coerce-dates",
        help="Read values of --dates columns that are no dates as missing (counted).",
    ),
]
DateFormat = Annotated[
    str | None, typer.Option("--date-format", help="strptime format, e.g. '%d/%m/%y %H:%M'.")
]
Sheet = Annotated[str | None, typer.Option("--sheet", help="Excel sheet name.")]
SqlTable = Annotated[str | None, typer.Option("--table", help="SQL table (DATA is a URL).")]
SqlQuery = Annotated[str | None, typer.Option("--query", help="SQL query (DATA is a URL).")]
Force = Annotated[
    bool, typer.Option("--force", help="Overwrite existing output files (never the input).")
]
Format = Annotated[str, typer.Option("--format", help="Output: text or json.")]


# The words every command shares, spelled here once (tests/test_shape.py holds the CLI to
# them): each command says what its option means.
def output_option(what: str) -> Any:
    """``-o/--output``: the file or folder a command writes."""
    return typer.Option("--output", "-o", help=what)


def seed_option(what: str) -> Any:
    """``--seed``: what a command's seed makes repeatable (the library's ``random_state``)."""
    return typer.Option("--seed", help=what)


def epsilon_option(what: str) -> Any:
    """``--epsilon``: the privacy budget a command spends (charged to the ledger)."""
    return typer.Option("--epsilon", help=what)


# the table is a sample: what it was drawn from (veil.risk.population's estimates)
Population = Annotated[
    float | None, typer.Option("--population", help="DATA is a sample of this many people.")
]
SamplingFraction = Annotated[
    float | None,
    typer.Option("--sampling-fraction", help="DATA is this share of the population."),
]
Weights = Annotated[
    str | None, typer.Option("--weights", help="A column of sampling weights (people per row).")
]
EscapeFormulas = Annotated[
    bool,
    typer.Option(
        "--escape-formulas/--no-escape-formulas",
        help="In CSV and Excel releases, prefix cells a spreadsheet would run (=, +, -, @) "
        "with an apostrophe (OWASP CSV injection).",
    ),
]
# The privacy goals, with the same words in every command that takes them.
KGoal = Annotated[int | None, typer.Option("-k", "--k", help="k-anonymity.", min=1)]
LGoal = Annotated[int | None, typer.Option("--l", help="l-diversity.", min=1)]
TGoal = Annotated[float | None, typer.Option("--t", help="t-closeness.")]
TDistance = Annotated[
    str | None, typer.Option("--t-distance", help="equal, ordered or hierarchical.")
]
ModelGoals = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="A privacy model as YAML, e.g. `'{model: entropy_l_diversity, l: 2}'` "
        "(repeatable; `veil transforms` lists them).",
    ),
]
Sensitive = Annotated[
    str | None, typer.Option("--sensitive", help="The sensitive column for l and t.")
]
Bounds = Annotated[list[str] | None, typer.Option("--bounds", help="COLUMN=LOW:HIGH (repeatable).")]
Target = Annotated[
    str | None,
    typer.Option("--target", help="Report: train a model predicting this column on both tables."),
]
Ledger = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="Ledger file (default: $VEIL_LEDGER, else ~/.local/share/veil/budget.db).",
    ),
]


OtherDataset = Annotated[
    bool,
    typer.Option(
        "--other-dataset",
        help="Charge this table to a ledger made for another (a subset, a new version of the "
        "data) on purpose; without it the ledger refuses a table it was not made for.",
    ),
]


def _ledger(ledger: Path | None) -> Path:
    from veil.dp.budget import default_ledger

    return ledger if ledger is not None else default_ledger()


QUIET = False  # --quiet or VEIL_QUIET: set by main()

#: Spellings of the previous release, accepted for this one with a line naming the new one:
#: in every command, or in one (``-c`` was ``veil report``'s certificate, while ``--c`` is
#: recursive (c,l)-diversity's c in ``veil anonymize``).
RENAMED = {"--out": "--output"}
RENAMED_IN = {
    "report": {"-c": "--certificate"},
    "fl": {"--dp-epsilon": "--epsilon", "--dp-delta": "--delta", "--dp-clip": "--clip"},
}


def command_of(args: list[str]) -> str | None:
    """The command these arguments name (their first that is no option), if any."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def renamed(args: list[str]) -> list[str]:
    """``args`` with each old spelling replaced by its new one (and said on stderr)."""
    command = command_of(args)
    spellings = {**RENAMED, **RENAMED_IN.get(command or "", {})}
    given = []
    for arg in args:
        name, sep, value = arg.partition("=")
        if name in spellings:
            err.print(f"veil: {name} is deprecated; use {spellings[name]}")
            arg = spellings[name] + sep + value
        given.append(arg)
    return given


@contextmanager
def _progress(enabled: bool = True) -> Iterator[Progress]:
    """Progress on stderr (stdout stays clean for --format json): a live bar with rows, rate
    and ETA on a terminal; one line per finished step in a log or a pipe."""
    from veil.progress import LineProgress, RichProgress

    if not enabled or QUIET:
        yield Progress()
        return
    shown = RichProgress(err.console) if err.is_terminal else LineProgress(sys.stderr)
    try:
        yield shown
    except BaseException:
        shown.close(finished=False)
        raise
    shown.close()


def _check_format(fmt: str) -> str:
    """``--format``: text or json in every command (``table``, scan's word of the previous
    release, is text, said once)."""
    if fmt == "table":
        err.print("veil: --format table is deprecated; use --format text")
        return "text"
    if fmt not in {"text", "json"}:
        raise ParameterError(f"--format must be text or json, got {fmt!r}")
    return fmt


def _model_specs(values: list[str] | None) -> list[dict[str, Any]]:
    """The ``--model`` options as mappings, each checked (a bad one names its parameter)."""
    if not values:
        return []  # (YAML is not loaded for nothing)
    import yaml

    from veil.privacy.criteria import build

    specs = []
    for text in values or []:
        try:
            spec = yaml.safe_load(text)
        except yaml.YAMLError:
            spec = None
        if not isinstance(spec, dict):
            raise ParameterError(
                f"--model {text!r}: give a YAML mapping such as "
                "'{model: entropy_l_diversity, l: 2}'"
            )
        try:
            build(spec)
        except ParameterError as err:
            raise ParameterError(f"--model {text!r}: {err}") from err
        specs.append(spec)
    return specs


def _read_options(policy_read: Any, **cli: Any) -> dict[str, Any]:
    """CLI flags override the policy's read: section."""
    options = policy_read.model_dump() if policy_read is not None else {}
    for key, value in cli.items():
        if value is not None and value != "" and (value is not False or key == "dayfirst"):
            options[key] = value
    if isinstance(options.get("dates"), str):
        options["dates"] = [d.strip() for d in options["dates"].split(",") if d.strip()]
    return options


def _parse_bounds(items: list[str]) -> dict[str, tuple[float, float]]:
    limits = {}
    for item in items:
        try:
            column, span = item.split("=", 1)
            low, high = span.split(":", 1)
            limits[column.strip()] = (float(low), float(high))
        except ValueError as err:
            raise ParameterError(f"--bounds must be COLUMN=LOW:HIGH, got {item!r}") from err
    return limits


Streaming = Annotated[
    bool | None,
    typer.Option(
        "--streaming/--in-memory",
        help="Read the table in batches (larger than memory) or whole; by default in "
        "batches when the file is over a tenth of this machine's memory (Parquet: its cells "
        "x 64 bytes).",
    ),
]
BatchRows = Annotated[int, typer.Option("--batch-rows", help="Rows per batch when streaming.")]
Backend = Annotated[
    str,
    typer.Option("--backend", help="pandas (in memory, or streaming) or dask (a cluster)."),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="With --backend dask: a scheduler's address (tcp://HOST:8786); without it a "
        "LocalCluster on this machine.",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option("--workers", help="With --backend dask and no --scheduler: worker processes."),
]


EngineChoice = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="auto, memory, stream (in batches, larger than memory) or dask (a cluster); auto "
        "streams a file over a tenth of this machine's memory (Parquet: its cells x 64 "
        "bytes).",
    ),
]


def _engine(engine: str | None, streaming: bool | None = None, backend: str = "pandas") -> str:
    """The engine of ``--engine``, or of the older ``--streaming/--in-memory`` and
    ``--backend dask`` (one deprecation line for ``--backend``)."""
    if backend not in {"pandas", "dask"}:
        raise ParameterError(f"--backend must be pandas or dask, got {backend!r}")
    if backend == "dask":
        err.print("veil: --backend dask is deprecated; use --engine dask")
    implied = {True: "stream", False: "memory", None: None}[streaming]
    implied = "dask" if backend == "dask" else implied
    if engine is not None and implied is not None and engine != implied:
        raise ParameterError(
            f"--engine {engine} contradicts the other engine flag given "
            f"({implied}); give --engine alone"
        )
    return engine or implied or "auto"


# -- option groups: declared once, flattened into each command's options ---------------------
#: The default of a group parameter: ``with_groups`` gives every group its options' values.
GROUP: Any = None
#: The table every reading command takes.
Data = Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")]


@dataclass
class ReadFlags:
    """How DATA is read (over a policy's ``read:`` section)."""

    sep: Sep = None
    encoding: Encoding = None
    dates: Dates = None
    dayfirst: Dayfirst = None
    date_format: DateFormat = None
    coerce_dates: CoerceDates = False
    sheet: Sheet = None
    table: SqlTable = None
    query: SqlQuery = None

    def given(self, policy_read: Any = None) -> dict[str, Any]:
        """The reading options given (flags over ``policy_read``), as ``veil.read`` takes them."""
        return _read_options(policy_read, **dataclasses.asdict(self))


@dataclass
class EngineFlags:
    """Which engine reads DATA: ``--engine``, or the older ``--streaming``/``--backend``."""

    engine: EngineChoice = None
    streaming: Streaming = None
    batch_rows: BatchRows = 500_000
    backend: Backend = "pandas"
    scheduler: Scheduler = None
    workers: Workers = None

    def chosen(self) -> str:
        """The engine asked for (``auto`` unless a flag says)."""
        return _engine(self.engine, self.streaming, self.backend)

    def running(self, engine: str) -> AbstractContextManager[Any]:
        """Where ``engine`` runs: a Dask cluster (``--scheduler`` or a LocalCluster of
        ``--workers``) for ``dask``, else nothing to start."""
        if engine != "dask":
            return nullcontext()
        from veil.io import cluster

        return cluster(self.scheduler, self.workers)


@dataclass
class SamplingFlags:
    """What the table is a sample of (``veil.risk.population``'s estimates)."""

    population: Population = None
    sampling_fraction: SamplingFraction = None
    weights: Weights = None

    def given(self) -> dict[str, Any] | None:
        """The ones given (None: the table is the whole population)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None} or None


@dataclass
class GoalFlags:
    """The privacy goals, with the same words in every command that takes them."""

    k: KGoal = None
    l_value: LGoal = None
    t_value: TGoal = None
    t_distance: TDistance = None
    models: ModelGoals = None
    sensitive: Sensitive = None

    def specs(self) -> list[dict[str, Any]]:
        """The ``--model`` options as checked mappings."""
        return _model_specs(self.models)

    def settings(self) -> dict[str, Any]:
        """The shorthand goals and the sensitive column, as ``Policy.with_goals`` takes them."""
        return {
            "k": self.k,
            "l": self.l_value,
            "t": self.t_value,
            "t_distance": self.t_distance,
            "sensitive": [self.sensitive] if self.sensitive else None,
        }


def with_groups(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with each parameter annotated by an option group (``ReadFlags``...) flattened
    into the group's options, so that typer shows them one by one and every command spells them
    alike; a call gathers them back into the group."""
    hints = typing.get_type_hints(command, include_extras=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for param in inspect.signature(command).parameters.values():
        hint = hints[param.name]
        if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
            parameters.append(param.replace(kind=_KEYWORD, annotation=hint))
            continue
        inner = typing.get_type_hints(hint, include_extras=True)
        names = [f.name for f in dataclasses.fields(hint)]
        groups[param.name] = (hint, names)
        for field in dataclasses.fields(hint):
            parameters.append(
                inspect.Parameter(
                    field.name, _KEYWORD, default=field.default, annotation=inner[field.name]
                )
            )

    @functools.wraps(command)
    def run(**given: Any) -> None:
        for name, (group, names) in groups.items():
            given[name] = group(**{n: given.pop(n) for n in names})
        command(**given)

    del run.__wrapped__  # typer reads the flattened signature below, not the command's
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run


_KEYWORD = inspect.Parameter.KEYWORD_ONLY
