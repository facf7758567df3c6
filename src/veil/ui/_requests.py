"""The requests page: a person's right of access and right to erasure on the data map given to
``veil ui --map``, through ``veil.rights``' own calls (``access``, ``erasure``,
``open_audit``, ``write_confirmation``), each logged in the map's audit log. An erasure runs
only after a dry run of the same person and with the person's key typed again."""

from __future__ import annotations

import hmac
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from veil.exceptions import ParameterError
from veil.ui._app import Workbench, new_id

__all__ = ["action", "page"]


def _state(wb: Workbench) -> dict[str, Any]:
    return wb.workspace.requests


async def page(wb: Workbench, request: Request) -> Response:
    """The page: look-up, export, dry run, erasure with typed confirmation, the audit log."""
    ws = wb.workspace
    audit: dict[str, Any] = {}
    keys: list[str] = []
    if ws.rights_map is not None:
        from veil.rights import load_map, open_audit

        data_map = load_map(ws.rights_map)
        keys = list(data_map.subject_keys)
        log, _key = open_audit(ws.rights_map, data_map)
        audit = {"entries": log.verify(), "path": log.path.name}
    return wb.page(
        request, "requests", state=_state(wb), audit=audit, keys=keys, rights_map=ws.rights_map
    )


async def action(wb: Workbench, request: Request) -> Response:
    """One request: ``access``, ``dry-run`` or ``erase`` of the form's subject."""
    ws = wb.workspace
    form = await wb.form(request)
    if ws.rights_map is None:
        raise ParameterError("start veil ui with --map DATA_MAP.yaml to handle requests")
    subject = f"{form.get('key', '').strip()}={form.get('value', '').strip()}"
    kind = form.get("action", "")
    folder = ws.folder / "requests"
    folder.mkdir(parents=True, exist_ok=True)
    state = _state(wb)
    if kind == "access":
        from veil.rights import access

        output = folder / f"access-{new_id()}.zip"
        found = access(ws.rights_map, subject, output=output)
        state.clear()
        state.update(subject=subject, counts=found.counts, total=found.total, export=str(output))
    elif kind == "dry-run":
        from veil.rights import erasure

        result = erasure(ws.rights_map, subject, dry_run=True)
        state.clear()
        state.update(subject=subject, planned=result.removed, dry_run=True)
    elif kind == "erase":
        _erase(wb, subject, form.get("confirm", ""), state)
    else:
        raise ParameterError("the request is access, dry-run or erase")
    return RedirectResponse("/requests", 303)


def _erase(wb: Workbench, subject: str, confirm: str, state: dict[str, Any]) -> None:
    """Erase ``subject`` once its dry run was shown and ``confirm`` repeats it; then verify the
    audit log and write the confirmation."""
    from veil.rights import erasure, open_audit, write_confirmation

    ws = wb.workspace
    assert ws.rights_map is not None
    if state.get("subject") != subject or not state.get("dry_run"):
        raise ParameterError("run the dry run for this person first: it shows what would go")
    if not hmac.compare_digest(confirm.strip().encode(), subject.encode()):
        raise ParameterError(
            f"type {subject.split('=', 1)[0]}=... exactly as above to confirm the erasure"
        )
    result = erasure(ws.rights_map, subject)
    log, _key = open_audit(ws.rights_map)
    entries = log.verify()
    confirmation = ws.folder / "requests" / f"erasure-{new_id()}.html"
    write_confirmation(ws.rights_map, subject, confirmation)
    state.clear()
    state.update(
        subject=subject,
        removed=result.removed,
        verified=result.verified,
        left=result.left,
        entries=entries,
        confirmation=str(confirmation),
    )
