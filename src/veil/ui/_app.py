"""The workbench's pages: Starlette routes over a ``Workspace``, rendered by jinja2 templates
with every value escaped. A page that changes something takes a form with the session's CSRF
token (``_form``); the work itself is the workspace's (the library's) calls."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from veil.exceptions import VeilError, one_line
from veil.ui._guard import Guard
from veil.ui._jobs import Jobs
from veil.ui._workspace import Workspace

__all__ = ["Workbench"]

HERE = Path(__file__).parent
PAGES = (
    ("data", "Data"),
    ("scan", "Scan"),
    ("hierarchies", "Hierarchies"),
    ("search", "Search"),
    ("compare", "Compare"),
    ("export", "Export"),
    ("requests", "Requests"),
)
Handler = Callable[[Request], Awaitable[Response]]
Page = Callable[["Workbench", Request], Awaitable[Response]]


class RefusedError(Exception):
    """A request refused with a status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Workbench:
    """The app: its workspace, guard, jobs and templates."""

    def __init__(self, workspace: Workspace, guard: Guard) -> None:
        self.workspace = workspace
        self.guard = guard
        self.jobs = Jobs()
        self.flash: dict[str, str] = {}
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )

    # -- plumbing ------------------------------------------------------------------------
    def app(self, pages: Sequence[tuple[str, str, Page]]) -> Starlette:
        """The ASGI app serving ``pages`` (method, path, handler) and the static files."""
        routes: list[Route | Mount] = [
            Route(path, self._wrap(handler), methods=[method]) for method, path, handler in pages
        ]
        routes.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))
        return Starlette(
            routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=self.guard)]
        )

    def _wrap(self, handler: Page) -> Handler:
        async def call(request: Request) -> Response:
            try:
                return await handler(self, request)
            except RefusedError as err:
                return PlainTextResponse(str(err), err.status)
            except (VeilError, KeyError, ValueError, OSError) as err:
                self.say(request, one_line(str(err).strip("'\"")) or type(err).__name__)
                return RedirectResponse(_page_of(request.url.path), 303)

        return call

    def say(self, request: Request, message: str) -> None:
        """A message for the session's next page (an error, or what was done)."""
        session = self.guard.session(request)
        if session is not None:
            self.flash[session] = message

    async def form(self, request: Request) -> dict[str, str]:
        """The posted form, once its CSRF token is the session's (else refused)."""
        form = await request.form()
        values = {k: str(v) for k, v in form.items() if isinstance(v, str)}
        if not self.guard.checked(request, values.get("csrf")):
            raise RefusedError(403, "the form's CSRF token is missing or wrong: reload the page")
        return values

    def checked_json(self, request: Request) -> None:
        """A script's request: its CSRF token in the X-CSRF-Token header."""
        if not self.guard.checked(request, request.headers.get("x-csrf-token")):
            raise RefusedError(403, "the CSRF token is missing or wrong: reload the page")

    def page(self, request: Request, name: str, **values: Any) -> HTMLResponse:
        """Render the template ``name`` with the navigation, the flash message and the CSRF
        token."""
        session = self.guard.session(request) or ""
        body = self.templates.get_template(f"{name}.html").render(
            pages=PAGES,
            current=name,
            csrf=self.guard.csrf(session),
            flash=self.flash.pop(session, None),
            ws=self.workspace,
            source=self.workspace.source,
            **values,
        )
        return HTMLResponse(body)

    def start(
        self, title: str, after: str, work: Callable[[Callable[[str], None]], Any]
    ) -> Response:
        """Run ``work`` as a job and show its progress page."""
        ident = self.jobs.start(title, after, work)
        return RedirectResponse(f"/jobs/{ident}/page", 303)


#: The page a form's error is shown on, by the form's path.
_FORMS = {"/policy": "/scan", "/goals": "/search"}


def _page_of(path: str) -> str:
    """The page that holds the form posted to ``path`` (found from the path, not from a
    referrer header a browser may leave out)."""
    if path in _FORMS:
        return _FORMS[path]
    first = "/" + path.strip("/").split("/", 1)[0]
    return first if first in {f"/{slug}" for slug, _ in PAGES} else "/data"


def png_uri(png: bytes) -> str:
    """A PNG as a data: URI (the CSP allows images from data: and this server only)."""
    return "data:image/png;base64," + base64.b64encode(png).decode()


def new_id() -> str:
    """A random identifier for a file the workbench writes."""
    return secrets.token_hex(8)


def json_response(value: Any, status: int = 200) -> JSONResponse:
    """A JSON answer (the values are JSON already)."""
    return JSONResponse(json.loads(json.dumps(value, default=str)), status)
