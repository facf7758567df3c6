"""The routes: (method, path, handler). Each handler translates a form into one workspace call
and shows a page; nothing here computes what the library computes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pandas.api.types import is_datetime64_any_dtype, is_numeric_dtype
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from veil.exceptions import ParameterError
from veil.ui._app import RefusedError, Workbench, json_response, png_uri
from veil.ui._workspace import ROLES, TABLES, TREATMENTS, check_export_name

__all__ = ["ROUTES"]

PREVIEW_ROWS = 20
CELL_CHARS = 300  # characters of a cell a preview shows
MAX_CHIPS = 80  # categories shown as chips to group by drag and drop


def _preview(frame: Any) -> list[list[str]]:
    """The first rows as text, each cell cut at ``CELL_CHARS`` (a 10 MB cell stays a line)."""
    rows = frame.head(PREVIEW_ROWS).astype(str).values.tolist()
    cells = [[str(c) for c in row] for row in rows]  # a missing value stays NaN in astype(str)
    return [[c if len(c) <= CELL_CHARS else c[:CELL_CHARS] + "…" for c in row] for row in cells]


def _back(path: str) -> Response:
    return RedirectResponse(path, 303)


async def home(wb: Workbench, request: Request) -> Response:
    """The first page: the data."""
    return _back("/data")


async def data(wb: Workbench, request: Request) -> Response:
    """Open a table; preview it with its types."""
    ws = wb.workspace
    frame = ws.frame
    return wb.page(
        request,
        "data",
        files=ws.folders.listing(TABLES),
        folders=[str(f) for f in ws.folders.roots],
        types=ws.types() if frame is not None else [],
        rows=_preview(frame) if frame is not None else [],
        columns=[str(c) for c in frame.columns] if frame is not None else [],
        total=len(frame) if frame is not None else 0,
    )


async def data_open(wb: Workbench, request: Request) -> Response:
    """Open the file or SQL table the form names."""
    form = await wb.form(request)
    wb.workspace.open(form.get("path", ""), form.get("table") or None)
    wb.say(
        request, f"opened {Path(wb.workspace.source or '').name}: {len(wb.workspace.data()):,} rows"
    )
    return _back("/data")


async def scan(wb: Workbench, request: Request) -> Response:
    """The scan's findings with a role to change per column; the policy beside them."""
    ws = wb.workspace
    found = ws.scan
    policy = ws.policy_text() if ws.policy_path.exists() and found is not None else None
    roles = ws.roles() if policy is not None else {}
    current = {c: (v.get("role"), _treatment(v)) for c, v in roles.items()}
    return wb.page(
        request,
        "scan",
        findings=found.columns if found is not None else [],
        chosen=current,
        roles=ROLES,
        treatments=TREATMENTS,
        policy=policy,
    )


def _treatment(entry: dict[str, Any]) -> str | None:
    for step in entry.get("steps") or []:
        name = next(iter(step), None) if isinstance(step, dict) else step
        if name in TREATMENTS:
            return str(name)
    return None


async def scan_run(wb: Workbench, request: Request) -> Response:
    """Scan the open table and write the suggested policy."""
    await wb.form(request)
    wb.workspace.data()
    return wb.start("scan", "/scan", lambda say: wb.workspace.run_scan(progress=say))


async def scan_role(wb: Workbench, request: Request) -> Response:
    """Change one column's role (and an identifier's treatment)."""
    form = await wb.form(request)
    column, role = form.get("column", ""), form.get("role", "")
    wb.workspace.set_role(column, role, form.get("treatment") or None)
    wb.say(request, f"{column} is now {role.replace('_', '-')}")
    return _back("/scan")


async def policy_save(wb: Workbench, request: Request) -> Response:
    """Replace the policy by the edited text (validated first)."""
    form = await wb.form(request)
    wb.workspace.set_policy_text(form.get("policy", ""))
    wb.say(request, "policy saved")
    return _back("/scan")


async def policy_validate(wb: Workbench, request: Request) -> Response:
    """Validate policy text as it is typed (the page's script posts it)."""
    wb.checked_json(request)
    text = (await request.body()).decode("utf-8", errors="replace")
    problem = wb.workspace.validate(text)
    return json_response({"ok": problem is None, "message": problem or "a valid policy"})


async def hierarchies(wb: Workbench, request: Request) -> Response:
    """Each quasi-identifier's hierarchy, level by level, with the wizard to change it."""
    ws = wb.workspace
    built = []
    for column in ws.quasi() if ws.policy_path.exists() and ws.frame is not None else []:
        h = ws.hierarchy(column)
        values = ws.data()[column]
        # categories to group by drag and drop (numbers and dates have their own rules)
        categorical = not (is_numeric_dtype(values) or is_datetime64_any_dtype(values))
        chips = h.leaves if categorical and h.domain_size <= MAX_CHIPS else []
        sizes = [len(level) for level in h.labels]
        built.append((column, h.height, h.domain_size, h.table[:40], sizes, chips))
    spec = (
        (ws.policy().get("privacy") or {}).get("hierarchies") if ws.policy_path.exists() else None
    )
    return wb.page(
        request, "hierarchies", built=built, specs=spec if isinstance(spec, dict) else {}
    )


async def hierarchy_set(wb: Workbench, request: Request) -> Response:
    """Rebuild one hierarchy by the wizard's rule and save it (ARX's CSV form)."""
    form = await wb.form(request)
    column = form.get("column", "")
    built = wb.workspace.set_hierarchy(column, form.get("kind", ""), form.get("parameter", ""))
    wb.say(
        request,
        f"{column}: {built.height - 1} levels above its {built.domain_size:,} values, saved",
    )
    return _back("/hierarchies")


async def search(wb: Workbench, request: Request) -> Response:
    """The goals, the solution space drawn, the candidates and the release picked."""
    ws = wb.workspace
    privacy = (ws.policy().get("privacy") or {}) if ws.policy_path.exists() else {}
    space, release = ws.space, ws.release
    picked = None
    if release is not None and release.certificate.search is not None and space is not None:
        levels = release.certificate.search.get("levels") or {}
        picked = tuple(int(levels[q]) for q in space.quasi if q in levels)
    return wb.page(
        request,
        "search",
        privacy=privacy,
        space=space,
        picked=picked,
        plot=png_uri(_space_plot(space, picked)) if space is not None else None,
        labels=_labels(ws, space, picked),
        release=release,
        preview=_preview(release.data) if release is not None else [],
        released_columns=[str(c) for c in release.data.columns] if release is not None else [],
    )


def _labels(ws: Any, space: Any, picked: tuple[int, ...] | None) -> list[tuple[str, int, int, str]]:
    """Per quasi-identifier of the picked node: its level, the hierarchy's height and an
    example of a generalized value."""
    if space is None or picked is None:
        return []
    shown = []
    for column, level, height in zip(space.quasi, picked, space.heights, strict=True):
        labels = ws.hierarchy(column).labels[level]
        shown.append(
            (column, level, height - 1, ", ".join(labels[:4]) + (" ..." if len(labels) > 4 else ""))
        )
    return shown


def _space_plot(space: Any, picked: tuple[int, ...] | None) -> bytes:
    """Information loss against records kept, one point per node."""
    from veil.plotting import canvas, render

    figure, (ax,) = canvas(7.5, 3.6)
    groups = (
        ("does not meet the goals", lambda n: not n.anonymous, "#c9c9c9", 10),
        ("meets the goals", lambda n: n.anonymous and not n.minimal, "#7aa6d6", 14),
        ("minimal: a candidate", lambda n: n.minimal, "#e07b00", 28),
    )
    for label, keep, colour, size in groups:
        nodes = [n for n in space.nodes if keep(n)]
        if nodes:
            ax.scatter(
                [space.rows - n.suppressed for n in nodes],
                [n.loss for n in nodes],
                s=size,
                c=colour,
                label=label,
            )
    for levels, marker, label in (
        (space.chosen, "*", "the search's optimum"),
        (picked, "D", "released"),
    ):
        if levels is not None:
            node = space.node(levels)
            ax.scatter(
                [space.rows - node.suppressed],
                [node.loss],
                s=140,
                marker=marker,
                facecolors="none",
                edgecolors="#b00020",
                linewidths=1.6,
                label=label,
            )
    ax.set_xlabel("records kept", fontsize=9)
    ax.set_ylabel(f"information loss ({space.metric})", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="best")
    return render(figure)


async def goals(wb: Workbench, request: Request) -> Response:
    """Set k, l, t, the suppression limit and the method."""
    form = await wb.form(request)
    values: dict[str, Any] = {}
    for key, kind in (("k", int), ("l", int), ("t", float), ("max_suppression", float)):
        text = form.get(key, "").strip()
        try:
            values[key] = kind(text) if text else None
        except ValueError as err:
            raise ParameterError(f"{key} must be a number, got {text!r}") from err
    values["method"] = form.get("method") or None
    wb.workspace.set_goals(values)
    wb.say(request, "goals saved: run the search")
    return _back("/search")


async def search_run(wb: Workbench, request: Request) -> Response:
    """Explore the solution space and release the search's choice."""
    await wb.form(request)

    def work(say: Any) -> None:
        wb.workspace.explore(progress=say)
        wb.workspace.preview(progress=say)

    return wb.start("search", "/search", work)


async def search_pick(wb: Workbench, request: Request) -> Response:
    """Release another minimal node."""
    form = await wb.form(request)
    try:
        levels = [int(v) for v in form.get("levels", "").split(",")]
    except ValueError as err:
        raise ParameterError("levels must be whole numbers, e.g. 2,0,1") from err
    return wb.start("release", "/search", lambda say: wb.workspace.pick(levels, progress=say))


async def compare(wb: Workbench, request: Request) -> Response:
    """Each column before and after; the release's risk from its certificate; the report."""
    ws = wb.workspace
    release = ws.release
    columns = []
    if release is not None:
        before = ws.data()
        after = release.data
        for column in before.columns:
            kept = column in after.columns
            columns.append(
                (
                    str(column),
                    int(before[column].nunique()),
                    int(after[column].nunique()) if kept else None,
                    _top(before[column]),
                    _top(after[column]) if kept else "(not released)",
                )
            )
    figure = None
    shown = request.query_params.get("column")
    if release is not None and shown is not None:
        from veil.report.figures import distribution_figure

        frame = ws.data()
        if shown not in frame.columns:
            raise ParameterError(f"{shown!r}: no such column")
        released = release.data[shown] if shown in release.data.columns else None
        figure = png_uri(distribution_figure(shown, frame[shown], released).png)
    return wb.page(
        request,
        "compare",
        figure=figure,
        shown=shown,
        release=release,
        columns=columns,
        summary=release.certificate.summary() if release is not None else [],
        report=ws.exported.get("report"),
        evaluated=ws.evaluated,
        files=ws.folders.listing(TABLES),
    )


def _top(values: Any) -> str:
    counts = values.astype(str).value_counts().head(3)
    return ", ".join(f"{k} ({v})" for k, v in counts.items())


async def compare_attack(wb: Workbench, request: Request) -> Response:
    """Measure the release against real holdout rows (``veil evaluate``)."""
    form = await wb.form(request)
    holdout, target = form.get("holdout", "").strip(), form.get("target", "").strip() or None
    wb.workspace.holdout(holdout)
    return wb.start(
        "evaluation", "/compare", lambda say: wb.workspace.attack(holdout, target, progress=say)
    )


async def export(wb: Workbench, request: Request) -> Response:
    """Where the export goes, and what it wrote."""
    return wb.page(
        request, "export", exported=wb.workspace.exported, folder=str(wb.workspace.folder)
    )


async def export_run(wb: Workbench, request: Request) -> Response:
    """Write the policy, the release, its certificate and report."""
    form = await wb.form(request)
    name, target = form.get("name", "").strip(), form.get("target", "").strip() or None
    check_export_name(name)
    wb.workspace.data()
    return wb.start(
        "export", "/export", lambda say: wb.workspace.export(name, target, progress=say)
    )


async def download(wb: Workbench, request: Request) -> Response:
    """A file the workbench wrote (in its workspace folder), as a download."""
    path = _written(wb, request.query_params.get("path", ""))
    return FileResponse(path, filename=path.name, content_disposition_type="attachment")


async def report(wb: Workbench, request: Request) -> Response:
    """A report the export wrote, shown in a frame (its own CSP: no script, sandboxed)."""
    path = _written(wb, request.query_params.get("path", ""))
    if path.suffix != ".html":
        raise RefusedError(404, "not a report")
    return HTMLResponse(path.read_text(encoding="utf-8"))


def _written(wb: Workbench, given: str) -> Path:
    """A file under the workspace folder (resolved: no ``..`` or link leaves it)."""
    folder = wb.workspace.folder.resolve()
    path = Path(given).resolve()
    if not path.is_relative_to(folder) or not path.is_file() or path.suffix == ".key":
        raise RefusedError(404, "no such file in the workbench's folder")
    return path


async def job_page(wb: Workbench, request: Request) -> Response:
    """A job's progress page (the script polls ``/jobs/{id}``)."""
    job = wb.jobs.get(request.path_params["ident"])
    if job is None:
        raise RefusedError(404, "no such job")
    return wb.page(request, "job", job=job, ident=request.path_params["ident"])


async def job_state(wb: Workbench, request: Request) -> Response:
    """A job's state, as JSON."""
    job = wb.jobs.get(request.path_params["ident"])
    if job is None:
        raise RefusedError(404, "no such job")
    return json_response(job.to_dict())


async def requests_page(wb: Workbench, request: Request) -> Response:
    """Access and erasure requests on the data map."""
    from veil.ui import _requests

    return await _requests.page(wb, request)


async def requests_action(wb: Workbench, request: Request) -> Response:
    """Look a person up, export, dry-run or erase, confirm."""
    from veil.ui import _requests

    return await _requests.action(wb, request)


ROUTES = [
    ("GET", "/", home),
    ("GET", "/data", data),
    ("POST", "/data/open", data_open),
    ("GET", "/scan", scan),
    ("POST", "/scan/run", scan_run),
    ("POST", "/scan/role", scan_role),
    ("POST", "/policy", policy_save),
    ("POST", "/policy/validate", policy_validate),
    ("GET", "/hierarchies", hierarchies),
    ("POST", "/hierarchies", hierarchy_set),
    ("GET", "/search", search),
    ("POST", "/goals", goals),
    ("POST", "/search/run", search_run),
    ("POST", "/search/pick", search_pick),
    ("GET", "/compare", compare),
    ("POST", "/compare/attack", compare_attack),
    ("GET", "/export", export),
    ("POST", "/export/run", export_run),
    ("GET", "/download", download),
    ("GET", "/report", report),
    ("GET", "/jobs/{ident}/page", job_page),
    ("GET", "/jobs/{ident}", job_state),
    ("GET", "/requests", requests_page),
    ("POST", "/requests", requests_action),
]
