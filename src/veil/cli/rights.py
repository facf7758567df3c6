"""``veil rights``: data-subject rights across the stores of a data map (retrieve, audit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.cli._common import (
    Format,
    _check_format,
    _progress,
    out,
    output_option,
)
from veil.exceptions import CheckFailedError

if TYPE_CHECKING:
    from veil.rights.erase import Erasure

rights_app = typer.Typer(
    help="Data-subject rights: everything held about a person, across the stores of a data "
    "map, with a tamper-evident audit log.",
    no_args_is_help=True,
)

MapOption = Annotated[Path, typer.Option("--map", help="The data map (YAML).")]


@rights_app.command("map")
def map_command(
    urls: Annotated[
        list[str] | None, typer.Argument(help="Database URLs (SQLAlchemy) to map.")
    ] = None,
    output: Annotated[Path | None, output_option("Write the new map (YAML) here.")] = None,
    scan: Annotated[
        bool, typer.Option("--scan/--no-scan", help="Find subject keys with veil's scan.")
    ] = True,
    map_path: Annotated[
        Path | None, typer.Option("--map", help="The data map, for --check.")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Check --map against the live stores.")
    ] = False,
    fides: Annotated[
        Path | None,
        typer.Option(
            "--from-fides",
            help="Make the map from a Fides dataset YAML instead (URLs: --url DATASET=URL).",
        ),
    ] = None,
    url: Annotated[
        list[str] | None, typer.Option("--url", help="DATASET=URL for --from-fides.")
    ] = None,
) -> None:
    """Build a first data map from databases (tables, foreign keys, subject keys found by the
    scan) for you to edit, or ``--check MAP`` against the live stores (exit 1 on an error;
    warnings, such as a key column without an index, are printed)."""
    from veil.rights.mapper import write_map

    if check:
        _check_map(map_path)
        return
    if output is None:
        raise typer.BadParameter("-o MAP.yaml: where to write the map")
    pairs = [u.partition("=") for u in url or []]
    with _progress() as say:
        data_map = write_map(
            output,
            urls or [],
            fides=fides,
            scan=scan,
            progress=say,
            fides_urls={k: v for k, _, v in pairs},
        )
    tables = sum(len(s.tables) for s in data_map.stores.values())
    out.print(
        f"wrote {output}: {len(data_map.stores)} stores, {tables} tables, subject keys "
        f"{', '.join(data_map.subject_keys)}; edit it, then `veil rights map --map {output} "
        "--check`"
    )


def _check_map(map_path: Path | None) -> None:
    from veil.rights import load_map
    from veil.rights.mapper import check_map

    if map_path is None:
        raise typer.BadParameter("--check needs --map MAP.yaml, the map to check")
    errors, warnings = check_map(load_map(map_path))
    for line in warnings:
        out.print(f"warning: {line}")
    for line in errors:
        out.print(f"error: {line}")
    if errors:
        raise CheckFailedError(f"{map_path}: {len(errors)} errors; first: {errors[0]}")
    out.print(
        f"{map_path}: every table, column and link is there"
        + (f" ({len(warnings)} warnings)" if warnings else "")
    )


@rights_app.command("retrieve")
def retrieve_command(
    map_path: MapOption,
    subject: Annotated[str, typer.Option("--subject", help="KEY=VALUE, e.g. national_id=12345678")],
    output: Annotated[
        Path | None,
        output_option(
            "Write the export: .json, or .zip (a JSON file per store and a readable summary.html)."
        ),
    ] = None,
    fmt: Format = "text",
) -> None:
    """Everything the map's stores hold about one person (right of access and portability)."""
    from veil.rights import access, load_map

    _check_format(fmt)
    found = access(map_path, subject, output=output)
    if fmt == "json":
        out.print_json(json.dumps(found.to_dict()))
        return
    if not found.total:
        out.print(
            f"nothing is held about {subject.partition('=')[0]}=… in "
            f"{len(load_map(map_path).stores)} stores "
            "(the request is in the audit log)"
        )
        return
    for table, count in found.counts.items():
        out.print(f"  {table}: {count} rows")
    out.print(
        f"{found.total} rows in {len(found.stores)} stores"
        + (f"; written to {output}" if output is not None else "")
    )


@rights_app.command("erase")
def erase_command(
    map_path: MapOption,
    subject: Annotated[str, typer.Option("--subject", help="KEY=VALUE, e.g. national_id=12345678")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would go; change nothing.")
    ] = False,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="delete (legal holds anonymize) or anonymize (keep "
            "every row, identifiers replaced).",
        ),
    ] = "delete",
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="The date holds are counted to (default: today).")
    ] = None,
    fmt: Format = "text",
) -> None:
    """Erase one person from every store (right to erasure), then check that retrieve finds
    nothing: exit 0 only then. Interrupted, the same command finishes the job."""
    from veil.rights import erasure

    _check_format(fmt)
    result = erasure(map_path, subject, dry_run=dry_run, mode=mode, as_of=as_of)
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        _said_erasure(result, dry_run)
    if not dry_run and not result.verified:
        left = ", ".join(f"{t} {n}" for t, n in result.left.items() if n)
        raise CheckFailedError(f"erasure not verified: retrieve still finds {left}")


def _said_erasure(result: Erasure, dry_run: bool) -> None:
    verb = "would remove" if dry_run else "removed"
    for table, n in result.removed.items():
        out.print(f"  {table}: {verb} {n} rows")
    for table, n in result.anonymized.items():
        out.print(
            f"  {table}: {'would keep' if dry_run else 'kept'} {n} rows under a legal "
            "hold or --mode anonymize, identifying columns replaced"
        )
    if not result.removed and not result.anonymized and not any(result.left.values()):
        out.print(
            "nothing is held about this person: nothing to erase (the request is in the audit log)"
        )
    elif dry_run:
        out.print("dry run: nothing was changed")
    elif result.verified:
        resumed = " (an interrupted erasure was finished)" if result.resumed else ""
        out.print(f"verified: retrieve finds nothing about this person any more{resumed}")


@rights_app.command("retention")
def retention_command(
    map_path: MapOption,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would move or go; change nothing.")
    ] = False,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="The date ages are counted to (default: today).")
    ] = None,
    fmt: Format = "text",
) -> None:
    """Apply the map's retention classes: archive or delete rows, files and objects older
    than their class keeps them (and the rows linking to them); legal holds keep rows,
    anonymized. Interrupted, the same command finishes the run."""
    from veil.rights import retention

    _check_format(fmt)
    result = retention(map_path, dry_run=dry_run, as_of=as_of)
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
        return
    verb = "would " if dry_run else ""
    for table, n in result.archived.items():
        out.print(f"  {table}: {verb}archive {n} rows")
    for table, n in result.deleted.items():
        out.print(f"  {table}: {verb}delete {n} rows")
    for table, n in result.kept.items():
        out.print(f"  {table}: {verb}keep {n} rows under a legal hold, identifiers replaced")
    if not (result.archived or result.deleted or result.kept):
        out.print(f"nothing is older than its class keeps it (as of {result.as_of})")
    if result.resumed:
        out.print(f"an interrupted run (as of {result.as_of}) was finished")


@rights_app.command("audit")
def audit_command(
    map_path: MapOption,
    verify: Annotated[bool, typer.Option("--verify", help="Check the hash chain.")] = False,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject",
            help="KEY=VALUE: this person's requests, and their erasure confirmation with -o.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        output_option("Write the erasure confirmation for --subject: .json or .html."),
    ] = None,
    fmt: Format = "text",
) -> None:
    """The audit log: ``--verify`` checks that no entry was edited, deleted, inserted,
    reordered or cut off (exit 1 naming the first bad entry); ``--subject`` lists one
    person's requests and, with ``-o``, writes the confirmation of their erasure."""
    from veil.rights import open_audit

    _check_format(fmt)
    if output is not None and subject is None:
        raise CheckFailedError("-o writes a person's erasure confirmation: give --subject too")
    if subject is not None:
        _confirm(map_path, subject, output, fmt)
        return
    log, _ = open_audit(map_path)
    count = log.verify()
    if verify:
        out.print(f"{log.path}: {count} entries, intact")
        return
    for entry in log.entries():
        counts = ", ".join(f"{t} {n}" for t, n in entry["counts"].items()) or "nothing found"
        out.print(
            f"{entry['seq']:>5}  {entry['at']}  {entry['actor']}  {entry['action']}  {counts}"
        )


def _confirm(map_path: Path, subject: str, output: Path | None, fmt: str) -> None:
    """One person's requests; with ``output``, their erasure confirmation."""
    from veil.rights import requests_of, write_confirmation

    if output is None:
        identity, mine = requests_of(map_path, subject)
        if fmt == "json":
            out.print_json(json.dumps({"subject": identity, "entries": mine}))
        elif not mine:
            out.print("no request about this person is in the audit log")
        for entry in mine if fmt != "json" else []:
            counts = ", ".join(f"{t} {n}" for t, n in entry["counts"].items()) or "nothing found"
            out.print(f"{entry['seq']:>5}  {entry['at']}  {entry['action']}  {counts}")
        return
    body = write_confirmation(map_path, subject, output)
    if fmt == "json":
        out.print_json(json.dumps(body))
    else:
        out.print(
            f"erasure of {body['erased_at']} confirmed by audit entry "
            f"{body['audit']['entry']} (chain intact); written to {output}"
        )


@rights_app.command("demo")
def demo_command(
    out_dir: Annotated[
        Path,
        output_option("Folder for the demo's database, map and audit log."),
    ] = Path("veil-rights-demo"),
) -> None:
    """A small insurer from the bundled sample: retrieve one client, erase them, retrieve
    again (nothing), verify the audit log."""
    from veil.keys import load_key
    from veil.rights.demo import run_demo

    key = load_key()
    if not run_demo(out_dir, key, say=out.print):
        raise CheckFailedError("the demo's erasure was not verified")


def register(app: typer.Typer) -> None:
    """Add ``veil rights`` to ``app``."""
    app.add_typer(rights_app, name="rights")


__all__ = ["CheckFailedError", "register"]
