"""A person's requests as a data map answers them, each recorded in the map's audit log before
anything is said: access (``access``), erasure (``erasure``), the map's retention run
(``retention``), and a person's requests and erasure confirmation (``requests_of``,
``write_confirmation``). The command line and any other front end call these; the audit log
is opened with the key the map names (never printed)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil.exceptions import CheckFailedError
from veil.rights._audit import AuditLog, anchors_for, confirmation, confirmation_html, open_log
from veil.rights._audit import subject_hash as keyed_hash
from veil.rights._map import DataMap, load_map
from veil.rights.retrieve import Retrieval, parse_subject, retrieve, write_export

if TYPE_CHECKING:  # erasure and retention bring pandas: loaded by the requests that change rows
    from veil.rights.erase import Erasure
    from veil.rights.retention import RetentionResult

__all__ = ["access", "erasure", "open_audit", "requests_of", "retention", "write_confirmation"]


def open_audit(map_path: str | Path, data_map: DataMap | None = None) -> tuple[AuditLog, bytes]:
    """The map's audit log (checked: a log cut short or deleted stops every request) and the
    key it is chained with (the key the map names)."""
    from veil.keys import load_key

    path = Path(map_path)
    data_map = data_map or load_map(path)
    key = load_key(key_env=data_map.key_env, key_file=data_map.key_file)
    log_path = data_map.audit_path(path)
    log = open_log(log_path, key, anchors=anchors_for(data_map, path, log_path))
    log.check()  # no request runs unrecorded
    return log, key


def _hashed_keys(key: bytes, keys: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The keys a request followed, as the log keeps them: each value as its keyed hash."""
    return {
        name: sorted(keyed_hash(key, {name: v}) for v in values) for name, values in keys.items()
    }


def _journal(map_path: Path) -> Path:
    return map_path.with_name(map_path.stem + ".journal")


def access(map_path: str | Path, subject: str, *, output: str | Path | None = None) -> Retrieval:
    """Everything the map's stores hold about ``subject`` (``KEY=VALUE``: right of access and
    portability), logged; with ``output``, the export written (.json, or .zip: a JSON file per
    store and a readable summary.html)."""
    path = Path(map_path)
    data_map = load_map(path)
    who = parse_subject(subject, data_map)
    log, key = open_audit(path, data_map)
    if output is not None:
        from veil.io import check_output

        check_output(output, inputs=[str(path)], force=False)
    found = retrieve(data_map, who)
    log.append(
        "retrieve",
        subject=keyed_hash(key, who),
        stores=list(found.stores),
        counts=found.counts,
        detail={"keys": _hashed_keys(key, found.keys)},
    )
    if output is not None:
        write_export(found, output)
    return found


def erasure(
    map_path: str | Path,
    subject: str,
    *,
    dry_run: bool = False,
    mode: str = "delete",
    as_of: str | None = None,
) -> Erasure:
    """Erase ``subject`` from every store (right to erasure), then retrieve again (``verified``
    only when nothing is found); logged, dry runs too. Interrupted, the same call finishes the
    job from the map's journal."""
    import pandas as pd

    from veil.rights.erase import erase

    path = Path(map_path)
    data_map = load_map(path)
    who = parse_subject(subject, data_map)
    log, key = open_audit(path, data_map)
    identity = keyed_hash(key, who)
    when = pd.Timestamp(as_of) if as_of else None
    result = erase(
        data_map,
        who,
        subject_id=identity,
        journal=_journal(path),
        mode=mode,
        dry_run=dry_run,
        as_of=when,
        key=key,
    )
    counts = {**result.removed, **{f"{t} (anonymized)": n for t, n in result.anonymized.items()}}
    log.append(
        "erase (dry run)" if dry_run else "erase",
        subject=identity,
        stores=list(data_map.stores),
        counts=counts,
        detail={
            "mode": mode,
            "verified": result.verified,
            "left": result.left,
            "resumed": result.resumed,
            "keys": _hashed_keys(key, result.keys),
        },
    )
    return result


def retention(
    map_path: str | Path, *, dry_run: bool = False, as_of: str | None = None
) -> RetentionResult:
    """Apply the map's retention classes (archive or delete what is older than its class
    keeps it; legal holds keep rows, anonymized), logged. Interrupted, the same call finishes
    the run."""
    import pandas as pd

    from veil.rights.retention import apply_retention

    path = Path(map_path)
    data_map = load_map(path)
    log, _ = open_audit(path, data_map)
    result = apply_retention(
        data_map,
        journal=_journal(path),
        dry_run=dry_run,
        as_of=pd.Timestamp(as_of) if as_of else None,
    )
    counts = {
        **{f"{t} (deleted)": n for t, n in result.deleted.items()},
        **{f"{t} (archived)": n for t, n in result.archived.items()},
        **{f"{t} (kept, held)": n for t, n in result.kept.items()},
    }
    log.append(
        "retention (dry run)" if dry_run else "retention",
        subject=None,
        stores=list(data_map.stores),
        counts=counts,
        detail={"as_of": result.as_of, "resumed": result.resumed},
    )
    return result


def requests_of(map_path: str | Path, subject: str) -> tuple[str, list[dict[str, Any]]]:
    """``subject``'s keyed hash and the audit log's entries about them."""
    path = Path(map_path)
    data_map = load_map(path)
    log, key = open_audit(path, data_map)
    log.verify()
    identity = keyed_hash(key, parse_subject(subject, data_map))
    return identity, [e for e in log.entries() if e.get("subject") == identity]


def write_confirmation(map_path: str | Path, subject: str, output: str | Path) -> dict[str, Any]:
    """The confirmation of ``subject``'s erasure, from the audit log (its chain verified),
    written to ``output`` (.json or .html) and returned."""
    from veil.io import atomic_open, check_output

    target = Path(output)
    if target.suffix.lower() not in (".json", ".html"):
        raise CheckFailedError(f"-o {target}: write the confirmation as .json or .html")
    path = Path(map_path)
    data_map = load_map(path)
    log, key = open_audit(path, data_map)
    log.verify()
    check_output(target, force=False)
    body = confirmation(log, keyed_hash(key, parse_subject(subject, data_map)))
    with atomic_open(target, force=False) as handle:
        handle.write(
            confirmation_html(body)
            if target.suffix.lower() == ".html"
            else json.dumps(body, indent=1)
        )
    return body
