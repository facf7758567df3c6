"""The ``veil`` command. It only translates arguments and exit codes; the work is elsewhere.

One module per command group registers its commands on ``app``: ``scan`` (scan, hierarchy),
``release`` (anonymize, report), ``evaluate``, ``check`` (check, verify), ``dp`` (budget, dp),
``synth``, ``federated`` (fl), ``latent`` (mask-latent), ``rights``, ``ui`` (the workbench),
``tools`` (demo, keygen, transforms...). A new group is one more module in ``GROUPS``. Exit
codes: see ``veil.cli._errors``.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Annotated

import click
import typer

from veil._version import __version__
from veil.cli import (
    _common,
    check,
    dp,
    evaluate,
    federated,
    latent,
    release,
    rights,
    scan,
    synth,
    tools,
    ui,
)
from veil.cli._common import out
from veil.cli._errors import (
    _STOPPED_BY,
    Terminated,
    _fail,
    _handle_termination,
    _one_line_warning,
    _os_error,
    _stopped,
)
from veil.exceptions import VeilError, one_line

__all__ = ["GROUPS", "Terminated", "app", "main", "run"]

app = typer.Typer(
    name="veil",
    help="Privacy engineering for tabular data: find what is personal, release it safely, "
    "prove it, and show the utility kept.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

#: The command groups, in the order ``veil --help`` lists them.
GROUPS = (scan, release, evaluate, check, dp, synth, federated, latent, rights, ui, tools)


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


for _group in GROUPS:
    _group.register(app)


def run() -> int:
    """The ``veil`` command: ``main`` in a process tuned for one job (``veil.memory``)."""
    from veil.memory import tune_for_one_job

    tune_for_one_job()
    return main()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turn errors into one line and an exit code (the same codes
    with --debug, which adds the traceback)."""
    args = _common.renamed(sys.argv[1:] if argv is None else list(argv))
    debug = "--debug" in args or bool(os.environ.get("VEIL_DEBUG"))
    _common.QUIET = "--quiet" in args or bool(os.environ.get("VEIL_QUIET"))
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
