"""The ``veil`` command. It only translates arguments and exit codes; the work is elsewhere.

Exit codes: 0 success; 1 the data fails the check asked for; 2 usage or input error (one line
on stderr, ``--debug`` for the traceback); 3 an internal error (a bug: please report it).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from veil._version import __version__
from veil.exceptions import ParameterError, VeilError

app = typer.Typer(
    name="veil",
    help="Privacy engineering for tabular data: find what is personal, release it safely, "
    "prove it, and show the utility kept.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

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


def _print_version(value: bool) -> None:
    if value:
        out.print(f"veil {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """(--debug is read by main() before the app runs.)"""


@contextmanager
def _progress(enabled: bool = True) -> Iterator[Any]:
    """A spinner with the current step on stderr (stdout stays clean for --format json);
    only on a terminal, so logs and pipes get no control characters."""
    if not enabled or not err.is_terminal:
        yield lambda _msg: None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)
        yield lambda msg: bar.update(task, description=msg)


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
    policy: Annotated[Path, typer.Option("--policy", "-p", help="Policy YAML file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Release file (.csv/.parquet).")],
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write an HTML report here.")
    ] = None,
    certificate: Annotated[
        Path | None, typer.Option("--certificate", help="Also write the certificate (JSON).")
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
    """Apply a policy to DATA and write the release (and optionally a report)."""
    from veil.io import atomic_open, check_output, output_format, read, write
    from veil.policy import Policy
    from veil.privacy import anonymize as run
    from veil.report import render_summary

    _check_format(fmt)
    pol = Policy.load(policy)
    # Refuse bad outputs before any expensive work.
    output_format(output)
    targets = [p for p in (output, report, certificate) if p is not None]
    for target in targets:
        check_output(target, inputs=[data, policy], force=force)
    if len(set(map(os.path.abspath, targets))) != len(targets):
        raise ParameterError("--output, --report and --certificate must be different files")
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
        say(f"reading {data}")
        frame = read(data, **options)
        release = run(frame, pol, progress=say)
        html = render_summary(frame, release) if report is not None else None
        say(f"writing {output}")
        write(release.data, output, force=force, inputs=[data, policy])
        if certificate is not None:
            with atomic_open(certificate) as fh:
                fh.write(release.certificate.to_json() + "\n")
        if report is not None and html is not None:
            with atomic_open(report) as fh:
                fh.write(html)
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
            c.name, f"[{style}]{c.role.value}[/{style}]", c.entity or "",
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
    from veil.io import atomic_open, check_output, read
    from veil.scan import scan as run
    from veil.suggest import suggest_policy_yaml

    if fmt not in {"table", "json"}:
        raise ParameterError(f"--format must be table or json, got {fmt!r}")
    if suggest is not None:
        check_output(suggest, inputs=[data], force=force)
    options = _read_options(
        None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
        date_format=date_format, sheet=sheet, table=table, query=query,
    )  # fmt: skip
    with _progress() as say:
        say(f"reading {data}")
        frame = read(data, **options)
        result = run(frame, sample_size=sample_size, progress=say)
    if suggest is not None:
        text = suggest_policy_yaml(result, frame, source=Path(data).name)
        with atomic_open(suggest) as fh:
            fh.write(text)
    if fmt == "json":
        out.print_json(result.to_json())
        return
    _print_scan(result)
    if suggest is not None:
        out.print(f"wrote a starting policy to {suggest}: edit it, then run")
        out.print(f"  veil anonymize {data} --policy {suggest} -o release.csv")


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the demo's outputs.")] = Path(
        "veil-demo"
    ),
) -> None:
    """Run the whole flow on the bundled Kenyan insurance sample."""
    from veil.demo import KEY_FILE, run_demo

    with _progress() as say:
        result = run_demo(out_dir, progress=say)
    cert = result.release.certificate
    out.print(f"[bold]veil demo[/bold]: Kenyan insurance sample ({cert.rows_in:,} clients)")
    out.print("")
    _print_scan(result.scan)
    out.print("")
    out.print("[bold]release[/bold] with the suggested policy:")
    for line in cert.summary():
        out.print(f"  {line}")
    out.print("")
    names = {
        "data": "the input: a copy of the bundled sample",
        "scan": "what the scan found, as JSON",
        "policy": "the policy the scan suggested, applied (edit it)",
        "release": "the release",
        "certificate": "what was done, as JSON",
        "report": "open this in a browser",
    }
    for key, path in result.files.items():
        out.print(f"  {path!s:<32} {names[key]}")
    if result.generated_key:
        out.print(
            f"  {Path(out_dir) / KEY_FILE!s:<32} pseudonymization key made for the demo; "
            "set VEIL_KEY to use your own"
        )
    out.print("")
    out.print("Next: edit the policy and run it again with")
    out.print(
        f"  veil anonymize {result.files['data']} --policy {result.files['policy']} "
        f"-o {Path(out_dir) / 'release2.csv'} --report {Path(out_dir) / 'report2.html'}"
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
    with atomic_open(output, permissions=0o600) as fh:
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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn errors into one line and an exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args or bool(os.environ.get("VEIL_DEBUG"))
    try:
        result = app(args=args, prog_name="veil", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        out.print(e.ctx.get_help() if e.ctx else "")
        return 0
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.ClickException as e:
        hint = ""
        if isinstance(e, click.UsageError) and e.ctx is not None:
            hint = f" (see '{e.ctx.command_path} --help')"
        err.print(f"veil: error: {e.format_message()}{hint}", markup=False)
        return 2
    except click.Abort:
        err.print("veil: aborted")
        return 130
    except VeilError as e:
        if debug:
            raise
        err.print(f"veil: error: {e}", markup=False)
        return e.exit_code
    except KeyboardInterrupt:
        err.print("veil: interrupted")
        return 130
    except Exception as e:
        if debug:
            raise
        err.print(
            f"veil: internal error: {type(e).__name__}: {e} (run with --debug for the "
            "traceback, and please report it)",
            markup=False,
        )
        return 3
    return int(result) if isinstance(result, int) else 0
