"""What every command shares: the consoles, the options (same words everywhere), progress,
reading options and small parsers. Commands live in one module per group (``scan``,
``release``, ``check``, ``dp``, ``tools``), each with a ``register(app)``."""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from veil.exceptions import ParameterError
from veil.progress import Progress

# markup and emoji off: a column or file named "[red]x" or ":bomb:" is printed as it is
out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

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
# the table is a sample: what it was drawn from (veil.scan.population's estimates)
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


@contextmanager
def _progress(enabled: bool = True) -> Iterator[Progress]:
    """Progress on stderr (stdout stays clean for --format json): a live bar with rows, rate
    and ETA on a terminal; one line per finished step in a log or a pipe."""
    from veil.progress import LineProgress, RichProgress

    if not enabled or QUIET:
        yield Progress()
        return
    shown = RichProgress(err) if err.is_terminal else LineProgress(sys.stderr)
    try:
        yield shown
    except BaseException:
        shown.close(finished=False)
        raise
    shown.close()


def _source(data: str) -> str:
    from veil.io import display_source

    return display_source(data)


def _report_format(path: Path) -> str:
    from veil.report.model import report_format

    return report_format(path)


def _check_format(fmt: str) -> str:
    if fmt not in {"text", "json"}:
        raise ParameterError(f"--format must be text or json, got {fmt!r}")
    return fmt


def _model_specs(values: list[str] | None) -> list[dict[str, Any]]:
    """The ``--model`` options as mappings, each checked (a bad one names its parameter)."""
    import yaml

    from veil.criteria import build

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


#: A file larger than this share of the machine's memory is read in batches by default: a CSV
#: takes several times its size as a DataFrame (README, "Tables larger than memory").
STREAMING_SHARE = 0.1


def _streams(data: str, asked: bool | None, *, fmt: str | None = None,
             report: Path | None = None, **reading: Any) -> bool:  # fmt: skip
    """Whether to read ``data`` in batches: as asked, else when it is large for this machine."""
    from veil.io import is_streamable

    if asked is False:
        return False
    if asked is None:
        if not is_streamable(data) or any(v for v in reading.values()):
            return False
        paths = [Path(p) for p in glob.glob(data)] if glob.has_magic(data) else [Path(data)]
        if Path(data).is_dir():
            paths = list(Path(data).iterdir())
        size = sum(p.stat().st_size for p in paths if p.is_file())
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if size <= STREAMING_SHARE * memory:
            return False
    if not is_streamable(data):
        raise ParameterError(f"--streaming reads CSV or Parquet files, not {_source(data)}; "
                             "use --in-memory")  # fmt: skip
    _refuse_given(reading, "on a table read in batches yet; use --in-memory")
    if fmt is not None and fmt not in {"csv", "parquet"}:
        raise ParameterError(f"a release read in batches is written as .csv or .parquet, not "
                             f".{fmt}; or use --in-memory")  # fmt: skip
    if report is not None:
        raise ParameterError("--report reads the release and the original in memory; leave it "
                             "out with --streaming (the certificate holds the measured goals) "
                             "or use --in-memory")  # fmt: skip
    return True


def _refuse_given(options: Mapping[str, Any], where: str) -> None:
    """One line for the first of ``options`` (``--name``: value) given that cannot be
    honoured ``where``."""
    given = [f"--{name}" for name, value in options.items() if value]
    if given:
        raise ParameterError(f"{given[0]} is not supported {where}")


Streaming = Annotated[
    bool | None,
    typer.Option(
        "--streaming/--in-memory",
        help="Read the table in batches (larger than memory) or whole; by default in "
        "batches when the file is over a tenth of this machine's memory.",
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


def _backend(name: str) -> str:
    if name not in {"pandas", "dask"}:
        raise ParameterError(f"--backend must be pandas or dask, got {name!r}")
    return name


def _stem(data: str) -> str:
    """The stem hierarchy files are named after: a file's, a glob's first file's, a folder's."""
    if glob.has_magic(data):
        found = sorted(glob.glob(data))
        return Path(found[0]).stem if found else Path(data).stem
    return Path(data).name if Path(data).is_dir() else Path(data).stem
