"""The ``veil`` command. It only translates arguments and exit codes; the work is elsewhere.

One module per command group registers its commands on ``app``: ``scan`` (scan, hierarchy),
``release`` (anonymize, report), ``evaluate``, ``check`` (check, verify), ``dp`` (budget, dp),
``synth``, ``federated`` (fl), ``latent`` (mask-latent), ``rights``, ``ui`` (the workbench),
``tools`` (demo, keygen, transforms...). A new group is one more module in ``GROUP_NAMES``
and its commands in ``COMMANDS``. Exit codes: see ``veil.cli._errors``.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from functools import cache
from types import ModuleType
from typing import Annotated, Any

import click
import typer

from veil._version import __version__
from veil.cli import _common
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

__all__ = ["COMMANDS", "GROUPS", "Terminated", "app", "main", "run"]

#: The command groups' modules, in the order ``veil --help`` lists them.
GROUP_NAMES = (
    "scan",
    "release",
    "evaluate",
    "check",
    "dp",
    "synth",
    "federated",
    "latent",
    "rights",
    "ui",
    "tools",
)

#: Each command and the group that registers it (a test holds it to what the groups
#: register): ``veil CMD ...`` imports and builds that group alone, where building every
#: command's options from its signature took 20 ms of each command's start-up and importing
#: every group 10 ms more.
COMMANDS = {
    "scan": "scan",
    "hierarchy": "scan",
    "anonymize": "release",
    "report": "release",
    "evaluate": "evaluate",
    "check": "check",
    "verify": "check",
    "dp": "dp",
    "budget": "dp",
    "synth": "synth",
    "fl": "federated",
    "mask-latent": "latent",
    "rights": "rights",
    "ui": "ui",
    "demo": "tools",
    "keygen": "tools",
    "transforms": "tools",
}


def _print_version(value: bool) -> None:
    if value:
        out.print(f"veil {__version__}")
        raise typer.Exit(0)


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


def _app_of(groups: tuple[str, ...]) -> typer.Typer:
    """The ``veil`` app with the commands of ``groups``."""
    built = typer.Typer(
        name="veil",
        help="Privacy engineering for tabular data: find what is personal, release it safely, "
        "prove it, and show the utility kept.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="markdown",
    )
    built.callback()(_root)
    for group in groups:
        importlib.import_module(f"veil.cli.{group}").register(built)
    return built


@cache
def _whole_app() -> typer.Typer:
    return _app_of(GROUP_NAMES)


def _app_for(args: list[str]) -> typer.Typer:
    """The app for these arguments: the named command's group alone, every command for
    ``veil``, ``veil --help`` or a name that is no command (its error lists them)."""
    group = COMMANDS.get(_common.command_of(args) or "")
    return _app_of((group,)) if group else _whole_app()


def __getattr__(name: str) -> Any:
    """``app`` (every command) and ``GROUPS`` (their modules), made when first asked for."""
    if name == "app":
        return _whole_app()
    if name == "GROUPS":
        groups: tuple[ModuleType, ...] = tuple(
            importlib.import_module(f"veil.cli.{group}") for group in GROUP_NAMES
        )
        return groups
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run() -> int:
    """The ``veil`` command: ``main`` in a process tuned for one job (``veil.memory``)."""
    import gc

    from veil.memory import hold_collection, tune_for_one_job

    resume = hold_collection()

    # `veil check` reads its table once and exits: Arrow's own pool serves it best
    tune_for_one_job(arrow_pool=_common.command_of(sys.argv[1:]) == "check")
    # pydantic hands every value it validates to the plugins any installed package declares
    # (an observability SDK's, e.g.); the command's process runs none unless the user names
    # them (PYDANTIC_DISABLE_PLUGINS set, even empty, is theirs). Looking for them read every
    # installed package's entry points: 10 ms of `veil check`'s start-up.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return main()
    finally:
        resume.cancel()
        # The process exits next. Its last garbage collections would walk every object the
        # imports made (numpy's, Arrow's, pandas' modules): 40 ms of `veil check`'s 0.56 s.
        # Frozen, they are left to the exit; what the command wrote is closed and renamed
        # already, and atexit handlers still run.
        gc.freeze()
        gc.enable()  # nothing left to walk: every object is frozen


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
        result = _app_for(args)(args=args, prog_name="veil", standalone_mode=False)
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
