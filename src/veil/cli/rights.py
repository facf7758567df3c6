"""``veil rights``: data-subject rights across the stores of a data map (retrieve, audit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.cli._common import Format, _check_format, _progress, out
from veil.exceptions import CheckFailedError

if TYPE_CHECKING:
    from veil.rights import AuditLog, DataMap

rights_app = typer.Typer(
    help="Data-subject rights: everything held about a person, across the stores of a data "
    "map, with a tamper-evident audit log.",
    no_args_is_help=True,
)

MapOption = Annotated[Path, typer.Option("--map", help="The data map (YAML).")]


def _audit(map_path: Path, data_map: DataMap) -> tuple[AuditLog, bytes]:
    """The map's audit log, keyed with the key the map names (never printed)."""
    from veil.keys import load_key
    from veil.rights._audit import anchors_for, open_log

    key = load_key(key_env=data_map.key_env, key_file=data_map.key_file)
    path = data_map.audit_path(map_path)
    log = open_log(path, key, anchors=anchors_for(data_map, map_path, path))
    log.check()  # a log cut short or deleted: no request runs unrecorded
    return log, key


def _hashed_keys(key: bytes, keys: dict[str, list[str]]) -> dict[str, list[str]]:
    """The keys a request followed, as the log keeps them: each value as its keyed hash."""
    from veil.rights import subject_hash

    return {name: sorted(subject_hash(key, {name: v}) for v in values)
            for name, values in keys.items()}  # fmt: skip


@rights_app.command("map")
def map_command(
    urls: Annotated[
        list[str] | None, typer.Argument(help="Database URLs (SQLAlchemy) to map.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the new map (YAML) here.")
    ] = None,
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
    from veil.rights import dump_map, load_map
    from veil.rights.mapper import build_map, check_map

    if check:
        if map_path is None:
            raise typer.BadParameter("--check needs --map MAP.yaml, the map to check")
        errors, warnings = check_map(load_map(map_path))
        for line in warnings:
            out.print(f"warning: {line}")
        for line in errors:
            out.print(f"error: {line}")
        if errors:
            raise CheckFailedError(f"{map_path}: {len(errors)} errors; first: {errors[0]}")
        out.print(f"{map_path}: every table, column and link is there"
                  + (f" ({len(warnings)} warnings)" if warnings else ""))  # fmt: skip
        return
    if not urls and fides is None:
        raise typer.BadParameter(
            "give database URLs to map, --from-fides FILE, or --map MAP --check"
        )
    if output is None:
        raise typer.BadParameter("-o MAP.yaml: where to write the map")
    from veil.io import atomic_open, check_output

    check_output(output, inputs=[str(fides)] if fides else [], force=False)
    if fides is not None:
        from veil.rights.fides import from_fides

        pairs = [u.partition("=") for u in url or []]
        data_map = from_fides(fides, {k: v for k, _, v in pairs})
    else:
        with _progress() as say:
            data_map = build_map(urls or [], scan=scan, progress=say)
    with atomic_open(output, force=False) as handle:
        handle.write(dump_map(data_map))
    tables = sum(len(s.tables) for s in data_map.stores.values())
    out.print(f"wrote {output}: {len(data_map.stores)} stores, {tables} tables, subject keys "
              f"{', '.join(data_map.subject_keys)}; edit it, then `veil rights map --map {output} "
              "--check`")  # fmt: skip


@rights_app.command("retrieve")
def retrieve_command(
    map_path: MapOption,
    subject: Annotated[str, typer.Option("--subject", help="KEY=VALUE, e.g. national_id=12345678")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the export: .json, or .zip (a JSON file per "
            "store and a readable summary.html).",
        ),
    ] = None,
    fmt: Format = "text",
) -> None:
    """Everything the map's stores hold about one person (right of access and portability)."""
    from veil.rights import load_map, parse_subject, retrieve, subject_hash

    _check_format(fmt)
    data_map = load_map(map_path)
    who = parse_subject(subject, data_map)
    log, key = _audit(map_path, data_map)
    if output is not None:
        from veil.io import check_output

        check_output(output, inputs=[str(map_path)], force=False)
    found = retrieve(data_map, who)
    log.append("retrieve", subject=subject_hash(key, who), stores=list(found.stores),
               counts=found.counts,
               detail={"keys": _hashed_keys(key, found.keys)})  # fmt: skip
    data = found.to_dict()
    if output is not None:
        from veil.rights.retrieve import write_export

        write_export(found, output)
    if fmt == "json":
        out.print_json(json.dumps(data))
        return
    if not found.total:
        out.print(f"nothing is held about {next(iter(who))}=… in {len(data_map.stores)} stores "
                  "(the request is in the audit log)")  # fmt: skip
        return
    for table, count in found.counts.items():
        out.print(f"  {table}: {count} rows")
    out.print(f"{found.total} rows in {len(found.stores)} stores"
              + (f"; written to {output}" if output is not None else ""))  # fmt: skip


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
    import pandas as pd

    from veil.rights import load_map, parse_subject, subject_hash
    from veil.rights.erase import erase

    _check_format(fmt)
    data_map = load_map(map_path)
    who = parse_subject(subject, data_map)
    log, key = _audit(map_path, data_map)
    identity = subject_hash(key, who)
    journal = map_path.with_name(map_path.stem + ".journal")
    when = pd.Timestamp(as_of) if as_of else None
    result = erase(data_map, who, subject_id=identity, journal=journal, mode=mode,
                   dry_run=dry_run, as_of=when, key=key)  # fmt: skip
    counts = {**result.removed, **{f"{t} (anonymized)": n for t, n in result.anonymized.items()}}
    log.append("erase (dry run)" if dry_run else "erase", subject=identity,
               stores=list(data_map.stores), counts=counts,
               detail={"mode": mode, "verified": result.verified, "left": result.left,
                       "resumed": result.resumed,
                       "keys": _hashed_keys(key, result.keys)})  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        verb = "would remove" if dry_run else "removed"
        for table, n in result.removed.items():
            out.print(f"  {table}: {verb} {n} rows")
        for table, n in result.anonymized.items():
            out.print(f"  {table}: {'would keep' if dry_run else 'kept'} {n} rows under a legal "
                      "hold or --mode anonymize, identifying columns replaced")  # fmt: skip
        if not result.removed and not result.anonymized and not any(result.left.values()):
            out.print("nothing is held about this person: nothing to erase (the request is "
                      "in the audit log)")  # fmt: skip
        elif dry_run:
            out.print("dry run: nothing was changed")
        elif result.verified:
            resumed = " (an interrupted erasure was finished)" if result.resumed else ""
            out.print(f"verified: retrieve finds nothing about this person any more{resumed}")
    if not dry_run and not result.verified:
        left = ", ".join(f"{t} {n}" for t, n in result.left.items() if n)
        raise CheckFailedError(f"erasure not verified: retrieve still finds {left}")


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
    import pandas as pd

    from veil.rights import load_map
    from veil.rights.retention import apply_retention

    _check_format(fmt)
    data_map = load_map(map_path)
    log, _ = _audit(map_path, data_map)
    journal = map_path.with_name(map_path.stem + ".journal")
    result = apply_retention(data_map, journal=journal, dry_run=dry_run,
                             as_of=pd.Timestamp(as_of) if as_of else None)  # fmt: skip
    counts = {**{f"{t} (deleted)": n for t, n in result.deleted.items()},
              **{f"{t} (archived)": n for t, n in result.archived.items()},
              **{f"{t} (kept, held)": n for t, n in result.kept.items()}}  # fmt: skip
    action = "retention (dry run)" if dry_run else "retention"
    log.append(action, subject=None, stores=list(data_map.stores), counts=counts,
               detail={"as_of": result.as_of, "resumed": result.resumed})  # fmt: skip
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
        typer.Option(
            "--output", "-o", help="Write the erasure confirmation for --subject: .json or .html."
        ),
    ] = None,
    fmt: Format = "text",
) -> None:
    """The audit log: ``--verify`` checks that no entry was edited, deleted, inserted,
    reordered or cut off (exit 1 naming the first bad entry); ``--subject`` lists one
    person's requests and, with ``-o``, writes the confirmation of their erasure."""
    from veil.rights import load_map

    _check_format(fmt)
    data_map = load_map(map_path)
    log, key = _audit(map_path, data_map)
    count = log.verify()
    if subject is not None:
        _confirm(log, key, data_map, subject, output, fmt)
        return
    if output is not None:
        raise CheckFailedError("-o writes a person's erasure confirmation: give --subject too")
    if verify:
        out.print(f"{log.path}: {count} entries, intact")
        return
    for entry in log.entries():
        counts = ", ".join(f"{t} {n}" for t, n in entry["counts"].items()) or "nothing found"
        out.print(f"{entry['seq']:>5}  {entry['at']}  {entry['actor']}  {entry['action']}  "
                  f"{counts}")  # fmt: skip


def _confirm(log: AuditLog, key: bytes, data_map: DataMap, subject: str, output: Path | None,
             fmt: str) -> None:  # fmt: skip
    """One person's requests; with ``output``, their erasure confirmation."""
    from veil.rights import parse_subject, subject_hash
    from veil.rights._audit import confirmation, confirmation_html

    identity = subject_hash(key, parse_subject(subject, data_map))
    if output is None:
        mine = [e for e in log.entries() if e.get("subject") == identity]
        if fmt == "json":
            out.print_json(json.dumps({"subject": identity, "entries": mine}))
        elif not mine:
            out.print("no request about this person is in the audit log")
        for entry in mine if fmt != "json" else []:
            counts = ", ".join(f"{t} {n}" for t, n in entry["counts"].items()) or "nothing found"
            out.print(f"{entry['seq']:>5}  {entry['at']}  {entry['action']}  {counts}")
        return
    from veil.io import atomic_open, check_output

    if output.suffix.lower() not in (".json", ".html"):
        raise CheckFailedError(f"-o {output}: write the confirmation as .json or .html")
    check_output(output, force=False)
    body = confirmation(log, identity)
    with atomic_open(output, force=False) as handle:
        handle.write(confirmation_html(body) if output.suffix.lower() == ".html"
                     else json.dumps(body, indent=1))  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(body))
    else:
        out.print(f"erasure of {body['erased_at']} confirmed by audit entry "
                  f"{body['audit']['entry']} (chain intact); written to {output}")  # fmt: skip


@rights_app.command("demo")
def demo_command(
    out_dir: Annotated[
        Path, typer.Option("--out", help="Folder for the demo's database, map and audit log.")
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
