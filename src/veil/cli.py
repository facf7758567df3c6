"""The ``veil`` command. It only translates arguments and exit codes; the work is elsewhere.

Exit codes: 0 success; 1 the data fails the check asked for; 2 usage or input error (one line
on stderr, ``--debug`` for the traceback); 3 an internal error (a bug: please report it).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from veil._version import __version__
from veil.exceptions import (
    CheckFailedError,
    InputError,
    ParameterError,
    VeilError,
    one_line,
)
from veil.progress import Progress

app = typer.Typer(
    name="veil",
    help="Privacy engineering for tabular data: find what is personal, release it safely, "
    "prove it, and show the utility kept.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
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
    bool, typer.Option("--dayfirst", help="Dates are day-first (11/09/15 = 11 Sep 2015).")
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
# The privacy goals, with the same words in every command that takes them.
KGoal = Annotated[int | None, typer.Option("-k", "--k", help="k-anonymity.", min=1)]
LGoal = Annotated[int | None, typer.Option("--l", help="l-diversity.", min=1)]
TGoal = Annotated[float | None, typer.Option("--t", help="t-closeness.")]
TDistance = Annotated[
    str | None, typer.Option("--t-distance", help="equal, ordered or hierarchical.")
]
Sensitive = Annotated[
    str | None, typer.Option("--sensitive", help="The sensitive column for l and t.")
]
Bounds = Annotated[list[str] | None, typer.Option("--bounds", help="COLUMN=LOW:HIGH (repeatable).")]
Target = Annotated[
    str | None,
    typer.Option("--target", help="Report: train a model predicting this column on both tables."),
]


def _print_version(value: bool) -> None:
    if value:
        out.print(f"veil {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="No progress on stderr (errors still show).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """(--debug and --quiet are read by main() before the app runs.)"""


_QUIET = False  # --quiet or VEIL_QUIET: set by main()


@contextmanager
def _progress(enabled: bool = True) -> Iterator[Progress]:
    """Progress on stderr (stdout stays clean for --format json): a live bar with rows, rate
    and ETA on a terminal; one line per finished step in a log or a pipe."""
    from veil.progress import LineProgress, RichProgress

    if not enabled or _QUIET:
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


def _read_options(policy_read: Any, **cli: Any) -> dict[str, Any]:
    """CLI flags override the policy's read: section."""
    options = policy_read.model_dump() if policy_read is not None else {}
    for key, value in cli.items():
        if value not in (None, False, ""):
            options[key] = value
    if isinstance(options.get("dates"), str):
        options["dates"] = [d.strip() for d in options["dates"].split(",") if d.strip()]
    return options


@app.command()
def anonymize(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Release file (.csv/.parquet).")],
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Policy YAML file.")] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write a report here (.html, or .json for data)."),
    ] = None,
    certificate: Annotated[
        Path | None, typer.Option("--certificate", help="Also write the certificate (JSON).")
    ] = None,
    target: Target = None,
    hierarchies: Annotated[
        Path | None,
        typer.Option("--hierarchies", help="Folder of <data stem>_hierarchy_<column>.csv files."),
    ] = None,
    k: KGoal = None,
    l_value: LGoal = None,
    l_variant: Annotated[
        str | None, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = None,
    c_value: Annotated[float | None, typer.Option("--c", help="c of recursive (c,l).")] = None,
    t_value: TGoal = None,
    t_distance: TDistance = None,
    sensitive: Sensitive = None,
    max_suppression: Annotated[
        float | None, typer.Option("--max-suppression", help="Share of records, e.g. 0.04.")
    ] = None,
    metric: Annotated[
        str | None, typer.Option("--metric", help="loss, entropy, precision, discernibility, aecs.")
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="optimal, heuristic or mondrian.")
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds for the heuristic.")
    ] = None,
    fmt: Format = "text",
    force: Force = False,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = False,
    date_format: DateFormat = None,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
) -> None:
    """Anonymize DATA with a policy and/or privacy goals; write the release.

    With --hierarchies, the columns that have a hierarchy file are the quasi-identifiers and
    the optimal generalization meeting -k/--l/--t is searched for, as in ARX.
    """
    from veil.hierarchy import load_hierarchies
    from veil.io import OutputSet, check_writable, output_format, read, write_table
    from veil.policy import Policy
    from veil.privacy import anonymize as run
    from veil.report import build_report

    _check_format(fmt)
    pol = Policy.load(policy) if policy is not None else Policy()
    flags = {
        "k": k, "l": l_value, "l_variant": l_variant, "c": c_value, "t": t_value,
        "t_distance": t_distance, "max_suppression": max_suppression, "metric": metric,
        "method": method, "time_limit": time_limit,
        "sensitive": [sensitive] if sensitive else None,
    }  # fmt: skip
    asked = {key: value for key, value in flags.items() if value is not None}
    if asked or hierarchies is not None:
        base = pol.privacy.model_dump(exclude_defaults=True) if pol.privacy else {}
        pol = pol.model_copy(
            update={"privacy": Policy.from_dict({"privacy": {**base, **asked}}).privacy}
        )
    if pol.privacy is None and policy is None:
        raise ParameterError("give --policy, or privacy goals such as -k 5 with --hierarchies DIR")
    # Refuse bad outputs before any expensive work.
    release_format = output_format(output)
    report_format = _report_format(report) if report is not None else None
    inputs = [data] + ([str(policy)] if policy is not None else [])
    if target is not None and report is None:
        raise ParameterError("--target is for the report: give --report too")
    destinations = [p for p in (output, report, certificate) if p is not None]
    if len(set(map(os.path.abspath, destinations))) != len(destinations):
        raise ParameterError("--output, --report and --certificate must be different files")
    outputs = OutputSet(force=force, inputs=inputs)
    for destination in destinations:
        outputs.check(destination)
    options = _read_options(
        pol.read,
        sep=sep,
        encoding=encoding,
        dates=dates,
        dayfirst=dayfirst,
        date_format=date_format,
        sheet=sheet,
        table=table,
        query=query,
    )
    with _progress() as say:
        say(f"reading {_source(data)}")
        frame = read(data, **options)
        check_writable(release_format, output, rows=len(frame))  # a release has no more rows
        found = None
        if hierarchies is not None:
            found = load_hierarchies(hierarchies, Path(data).stem)
        release = run(frame, pol, hierarchies=found, progress=say)
        built = None
        if report is not None:
            name = f"veil release of {Path(data).name}"
            built = build_report(
                release, original=frame, aligned=True, target=target, title=name, progress=say
            )
        # the run's files are one set: all of them appear, or none (disk full, SIGTERM)
        say(f"writing {output}")
        with outputs:
            write_table(release.data, outputs.stage(output), release_format)
            if certificate is not None:
                outputs.stage(certificate).write_text(
                    release.certificate.to_json() + "\n", encoding="utf-8"
                )
            if report is not None and built is not None and report_format is not None:
                outputs.stage(report).write_text(built.render(report_format), encoding="utf-8")
    cert = release.certificate
    if fmt == "json":
        out.print_json(cert.to_json())
        return
    out.print(f"wrote {output} ({cert.rows_out:,} rows x {len(cert.columns_out)} columns)")
    for line in cert.summary():
        out.print(f"  {line}")
    for path in (report, certificate):
        if path is not None:
            out.print(f"wrote {path}")


@app.command("report")
def report_command(
    release: Annotated[
        str, typer.Argument(help="The released table (as veil anonymize wrote it).")
    ],
    certificate: Annotated[
        Path, typer.Option("--certificate", "-c", help="certificate.json of the release.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="report.html or report.json.")],
    original: Annotated[
        str | None,
        typer.Option(
            "--original",
            help="The original table: adds scan, risk before/after, utility and column profiles.",
        ),
    ] = None,
    target: Target = None,
    ledger: Annotated[
        Path | None, typer.Option("--budget", help="A privacy-budget ledger: adds the DP section.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
    force: Force = False,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = False,
    date_format: DateFormat = None,
) -> None:
    """Write the report of a release: what was done, privacy and risk, utility, DP budget."""
    from veil.io import OutputSet, read
    from veil.privacy import Release
    from veil.privacy.certificate import Certificate
    from veil.report import build_report

    inputs = [release, str(certificate)] + ([original] if original else [])
    outputs = OutputSet(force=force, inputs=inputs)
    outputs.check(output)
    chosen = _report_format(output)
    if target is not None and original is None:
        raise ParameterError("--target compares a model on both tables: give --original too")
    cert = Certificate.load(certificate)
    options = _read_options(None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
                            date_format=date_format)  # fmt: skip
    accountant = None
    if ledger is not None:
        from veil.dp import Accountant

        accountant = Accountant(ledger)
    with _progress() as say:
        say(f"reading {release}")
        data = read(release, **options)
        if list(data.columns) != list(cert.columns_out):
            raise InputError(
                f"{release} has columns {list(data.columns)} but the certificate's release has "
                f"{list(cert.columns_out)}; give the certificate written with this release"
            )
        frame = None
        if original is not None:
            say(f"reading {original}")
            frame = read(original, **options)
            missing = [c for c in cert.columns_in if c not in frame.columns]
            if missing:
                raise InputError(
                    f"{original} lacks the columns {missing} that the certificate's input had; "
                    "give the table the release was made from"
                )
        built = build_report(
            Release(data, cert),
            original=frame,
            target=target,
            accountant=accountant,
            progress=say,
            title=title or f"veil release report: {Path(release).name}",
        )
        with outputs:
            outputs.stage(output).write_text(built.render(chosen), encoding="utf-8")
    out.print(f"wrote {output}")
    for line in built.headline:
        out.print(f"  {line}")


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
    risk = result.risk
    if risk.quasi_identifiers:
        out.print(
            f"quasi-identifiers: {', '.join(risk.quasi_identifiers)} — "
            f"{risk.unique_rows:,} of {risk.rows:,} rows ({risk.uniqueness:.1%}) are unique on "
            f"them (k = {risk.k})"
        )
        for combo in risk.most_identifying[:3]:
            out.print(
                f"  {' + '.join(combo['columns'])} alone singles out "
                f"{combo['unique_rows']:,} rows ({combo['uniqueness']:.1%})"
            )
    else:
        out.print("no quasi-identifiers found")


@app.command()
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
    dayfirst: Dayfirst = False,
    date_format: DateFormat = None,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
) -> None:
    """Find the personal data in DATA, column by column, with evidence."""
    from veil.io import OutputSet, read
    from veil.scan import scan as run
    from veil.suggest import suggest_policy_yaml

    if fmt not in {"table", "json"}:
        raise ParameterError(f"--format must be table or json, got {fmt!r}")
    outputs = OutputSet(force=force, inputs=[data])
    if suggest is not None:
        outputs.check(suggest)
    options = _read_options(
        None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
        date_format=date_format, sheet=sheet, table=table, query=query,
    )  # fmt: skip
    with _progress() as say:
        say(f"reading {_source(data)}")
        frame = read(data, **options)
        result = run(frame, sample_size=sample_size, progress=say)
    if suggest is not None:
        text = suggest_policy_yaml(result, frame, source=Path(data).name)
        with outputs:
            outputs.stage(suggest).write_text(text, encoding="utf-8")
    if fmt == "json":
        out.print_json(result.to_json())
        return
    _print_scan(result)
    if suggest is not None:
        out.print(f"wrote a starting policy to {suggest}: edit it, then run")
        out.print(f"  veil anonymize {data} --policy {suggest} -o release.csv")


@app.command("check")
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
    options = _read_options(None, sep=sep, encoding=encoding, sheet=sheet, table=table, query=query)
    frame = read(data, **options)
    columns = [c.strip() for c in quasi_identifiers.split(",") if c.strip()]
    if not columns:
        raise ParameterError("--quasi-identifiers must name a column at least, e.g. -q Age,County")
    result = check(
        frame, columns, sensitive=sensitive, k=k, l=l_value, t=t_value, t_distance=t_distance,
        risk_threshold=risk_threshold,
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


@app.command("verify")
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


budget_app = typer.Typer(help="The privacy budget: one ledger for every DP release.",
                         no_args_is_help=True)  # fmt: skip
app.add_typer(budget_app, name="budget")
Ledger = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="Ledger file (default: $VEIL_LEDGER, else ~/.local/share/veil/budget.db).",
    ),
]


def _ledger(ledger: Path | None) -> Path:
    from veil.dp.budget import default_ledger

    return ledger if ledger is not None else default_ledger()


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
    from veil.io import fingerprint, read

    path = _ledger(ledger)
    frame = read(data, **_read_options(None, sep=sep))
    Accountant.create(path, Budget(epsilon, delta), composition=composition,
                      dataset=fingerprint(frame))  # fmt: skip
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


@app.command("dp")
def dp_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    query: Annotated[
        str, typer.Argument(help='e.g. "mean(Age)", "count()", "quantile(Age, 0.9)".')
    ],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Epsilon to spend.")],
    bounds: Bounds = None,
    categories: Annotated[
        str | None, typer.Option("--categories", help="Comma-separated public categories.")
    ] = None,
    ledger: Ledger = None,
    fmt: Format = "text",
    sep: Sep = None,
) -> None:
    """A differentially private statistic of DATA, charged to the budget."""
    from veil.dp import Accountant
    from veil.dp import stats as dpstats
    from veil.io import read

    _check_format(fmt)
    name, args = _parse_query(query)
    limits = _parse_bounds(bounds or [])
    acc = Accountant(_ledger(ledger))
    frame = read(data, **_read_options(None, sep=sep))
    cats = [c.strip() for c in categories.split(",")] if categories else None
    column = args[0] if args else None
    common: dict[str, Any] = {"epsilon": epsilon, "accountant": acc}
    if name == "count":
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
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict(), default=float))
        return
    out.print(f"{result.statistic} = {result.value}")
    trust = f" (95% of the time within ±{result.error95:.4g})" if result.error95 else ""
    out.print(f"  spent epsilon {result.epsilon:g}; noise scale {result.scale}{trust}")
    out.print(f"  epsilon bounds what {result.neighbours} can change (neighbouring datasets)")
    left = acc.remaining()
    out.print(f"  remaining budget: epsilon {left.epsilon:g}")


@app.command("synth")
def synth_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Synthetic table (.csv/.parquet).")
    ],
    dp_flag: Annotated[bool, typer.Option("--dp", help="Differentially private (MST).")] = False,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="Epsilon to spend.")] = None,
    columns: Annotated[
        str | None, typer.Option("--columns", help="Comma-separated columns (default: all usable).")
    ] = None,
    bounds: Bounds = None,
    bins: Annotated[int, typer.Option("--bins", help="Bins per numeric column.", min=2)] = 10,
    rows: Annotated[
        int | None,
        typer.Option(
            "--rows", help="Rows to make (public input; default: the DP estimate).", min=1
        ),
    ] = None,
    ledger: Ledger = None,
    force: Force = False,
    sep: Sep = None,
) -> None:
    """Synthetic data: with --dp, MST through OpenDP, charged to the budget."""
    from veil.dp import Accountant
    from veil.dp.budget import NEIGHBOURS
    from veil.dp.synth import synthesize
    from veil.io import check_output, check_writable, output_format, read, write

    if not dp_flag or epsilon is None:
        raise ParameterError(
            "this version makes DP synthetic data only: pass --dp --epsilon E (non-DP "
            "synthesis with copulas comes with the synthetic-data capability)"
        )
    fmt_out = output_format(output)
    check_output(output, inputs=[data], force=force)
    if rows is not None:
        check_writable(fmt_out, output, rows=rows)
    acc = Accountant(_ledger(ledger))
    frame = read(data, **_read_options(None, sep=sep))
    chosen = [c.strip() for c in columns.split(",")] if columns else None
    with _progress() as say:
        say("fitting MST marginals and synthesizing")
        result = synthesize(frame, epsilon=epsilon, accountant=acc, columns=chosen,
                            bounds=_parse_bounds(bounds or []), bins=bins, rows=rows)  # fmt: skip
    write(result.data, output, force=force, inputs=[data])
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


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the demo's outputs.")] = Path(
        "veil-demo"
    ),
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Replace an earlier demo's files (a ledger with entries is kept)."
        ),
    ] = False,
) -> None:
    """Run the whole flow on the bundled Kenyan insurance sample."""
    from veil.demo import KEY_FILE, TARGET, run_demo

    with _progress() as say:
        result = run_demo(out_dir, progress=say, force=force)
    cert = result.release.certificate
    out.print(
        Text("veil demo", style="bold"),
        f": Kenyan insurance sample ({cert.rows_in:,} clients)",
        sep="",
    )
    out.print("")
    _print_scan(result.scan)
    out.print("")
    out.print(Text("release", style="bold"), " with the suggested policy:", sep="")
    for line in cert.summary():
        out.print(f"  {line}")
    out.print("")
    names = {
        "data": "the input: a copy of the bundled sample",
        "scan": "what the scan found, as JSON",
        "policy": "the policy the scan suggested, applied (edit it)",
        "release": "the release",
        "certificate": "what was done, as JSON",
        "budget": "the privacy-budget ledger of the DP answers",
        "report": "open this in a browser",
        "report_json": "the report's numbers, as JSON",
    }
    for key, path in result.files.items():
        out.print(f"  {path!s:<32} {names[key]}")
    if result.dp_note:
        out.print(f"  (no DP answers this time: {result.dp_note})")
    if result.generated_key:
        out.print(
            f"  {Path(out_dir) / KEY_FILE!s:<32} pseudonymization key made for the demo; "
            "set VEIL_KEY to use your own"
        )
    out.print("")
    out.print("Next: edit the policy and run it again with")
    out.print(
        f"  veil anonymize {result.files['data']} --policy {result.files['policy']} "
        f"-o {Path(out_dir) / 'release2.csv'} --report {Path(out_dir) / 'report2.html'} "
        f"--target {TARGET}"
    )


@app.command()
def keygen(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the key to this file (mode 600).")
    ] = None,
    force: Force = False,
) -> None:
    """Make a random pseudonymization key (for VEIL_KEY or a key_file)."""
    from veil.io import atomic_open, check_output
    from veil.keys import generate_key

    key = generate_key()
    if output is None:
        out.print(key)  # the one place a key is printed: it was asked for
        return
    check_output(output, force=force)
    with atomic_open(output, permissions=0o600, force=force) as fh:
        fh.write(key + "\n")
    out.print(f"wrote a new key to {output} (readable by you only)")


@app.command("transforms")
def list_transforms() -> None:
    """List the transforms a policy can use, with their parameters."""
    from veil.transforms import TRANSFORMS

    grid = Table("policy name", "what it does", "parameters", show_lines=True)
    for name, cls in TRANSFORMS.items():
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
        params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        grid.add_row(name, doc, ", ".join(params))
    out.print(grid)


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings (a leak, a collision) as one line a person reads, not a source excerpt."""
    err.print(f"veil: warning: {one_line(str(message))}")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwound like Ctrl-C, so every partial output is removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOPPED_BY: list[int] = []  # the signal that stopped the run (typer hides the exception)


def _terminate(signum: int, _frame: Any) -> None:
    _STOPPED_BY.append(signum)
    raise Terminated(signum)


def _handle_termination() -> None:
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) in (
            signal.SIG_DFL,
            signal.default_int_handler,
            None,
        ):
            with contextlib.suppress(ValueError):  # not the main thread: leave it be
                signal.signal(number, _terminate)


def _os_error(e: OSError) -> str:
    """An operating-system error as what failed, where, and what to do (not a veil bug)."""
    from veil.io import explain_os_error

    where = f"{e.filename}: " if e.filename else ""
    return where + explain_os_error(e)


def _stopped(error: BaseException | None = None) -> int | None:
    """For a run stopped by Ctrl-C, SIGTERM or SIGHUP (which click and typer turn into
    Abort or an exit code): say so, and return 128 + the signal; else None."""
    import signal

    seen = error
    while seen is not None and not _STOPPED_BY:
        if isinstance(seen, KeyboardInterrupt):
            _STOPPED_BY.append(signal.SIGINT)
        seen = seen.__cause__ or seen.__context__
    if not _STOPPED_BY:
        return None
    signum = _STOPPED_BY[0]
    what = "interrupted" if signum == signal.SIGINT else "terminated"
    err.print(f"veil: {what}; no partial output was left")
    return 128 + signum


def _fail(message: str, code: int, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    err.print(message)
    return code


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn errors into one line and an exit code (the same codes
    with --debug, which adds the traceback)."""
    args = sys.argv[1:] if argv is None else list(argv)
    global _QUIET
    debug = "--debug" in args or bool(os.environ.get("VEIL_DEBUG"))
    _QUIET = "--quiet" in args or bool(os.environ.get("VEIL_QUIET"))
    warnings.showwarning = _one_line_warning
    _STOPPED_BY.clear()
    _handle_termination()
    try:
        result = app(args=args, prog_name="veil", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        out.print(e.ctx.get_help() if e.ctx else "")
        return 0
    except click.exceptions.Exit as e:  # typer turns Ctrl-C (and our SIGTERM) into Exit(130)
        stopped = _stopped(e)
        if stopped is not None:
            return stopped
        return int(e.exit_code)
    except click.ClickException as e:
        hint = ""
        if isinstance(e, click.UsageError) and e.ctx is not None:
            hint = f" (see '{e.ctx.command_path} --help')"
        return _fail(f"veil: error: {one_line(e.format_message())}{hint}", 2, debug)
    except click.Abort as e:  # click turns Ctrl-C (and our SIGTERM) into Abort
        stopped = _stopped(e)
        return stopped if stopped is not None else _fail("veil: aborted", 130, debug)
    except VeilError as e:
        return _fail(f"veil: error: {one_line(str(e))}", e.exit_code, debug)
    except KeyboardInterrupt as e:
        stopped = _stopped(e)
        return stopped if stopped is not None else 130
    except OSError as e:
        return _fail(f"veil: error: {one_line(_os_error(e))}", 2, debug)
    except Exception as e:
        return _fail(
            f"veil: internal error: {type(e).__name__}: {one_line(str(e))} (run with --debug "
            "for the traceback, and please report it)",
            3,
            debug,
        )
    stopped = _stopped()
    if stopped is not None:
        return stopped
    return int(result) if isinstance(result, int) else 0
