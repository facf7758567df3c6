"""The local server's defences, as Jupyter's: a random token in the first URL, exchanged for a
session cookie (HttpOnly, SameSite=Strict) and dropped from the address bar; a CSRF token in
every form that changes anything; the Host header checked (no DNS rebinding); and on every
response a strict Content-Security-Policy (no inline script, no other origin), no referrer to
another site, no framing and no caching."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, Iterable

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

__all__ = ["COOKIE", "CSP", "Guard"]

COOKIE = "veil_session"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
#: The report, shown in a frame: its own inline styles, no script at all, sandboxed.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'"
)


class Guard:
    """The token, the sessions it opened and the hosts the server answers as."""

    def __init__(self, hosts: Iterable[str], token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.hosts = frozenset(hosts)
        self._secret = secrets.token_bytes(32)
        self._sessions: set[str] = set()

    def csrf(self, session: str) -> str:
        """The CSRF token of ``session``: a keyed hash, so nothing more is stored."""
        return hmac.new(self._secret, session.encode(), "sha256").hexdigest()

    def session(self, request: Request) -> str | None:
        """The request's session, when its cookie names one this server opened."""
        value = request.cookies.get(COOKIE)
        return value if value is not None and value in self._sessions else None

    def checked(self, request: Request, given: str | None) -> bool:
        """Whether ``given`` is the CSRF token of the request's session."""
        session = self.session(request)
        if not session or not given:
            return False
        # as bytes: a hostile non-ASCII token is refused, not an error
        return hmac.compare_digest(self.csrf(session).encode(), given.encode())

    async def __call__(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        """Refuse a foreign host or a request without the token or its session; harden every
        response."""
        host = request.headers.get("host", "")
        if host not in self.hosts:
            return _hardened(
                PlainTextResponse(f"veil ui answers only as {sorted(self.hosts)[0]}", 400)
            )
        token = request.query_params.get("token")
        if token is not None:
            if not hmac.compare_digest(token.encode(), self.token.encode()):
                return _hardened(
                    PlainTextResponse("wrong token: open the link veil ui printed", 403)
                )
            session = secrets.token_urlsafe(32)
            self._sessions.add(session)
            query = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            clean = URL(str(request.url)).replace_query_params(**dict(query))
            response: Response = RedirectResponse(
                clean.path + (f"?{clean.query}" if clean.query else ""), 303
            )
            response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path="/")
            return _hardened(response)
        if self.session(request) is None:
            return _hardened(
                PlainTextResponse(
                    "this workbench needs its token: open the link `veil ui` printed", 403
                )
            )
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and origin.split("://", 1)[-1] not in self.hosts:
                return _hardened(PlainTextResponse("a request from another site was refused", 403))
        response = await call_next(request)
        return _hardened(response, report=request.url.path.startswith("/report"))


def _hardened(response: Response, *, report: bool = False) -> Response:
    response.headers["Content-Security-Policy"] = REPORT_CSP if report else CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    # the URL's token is dropped at the first request; same-origin keeps the Origin header
    # of this app's own forms (no-referrer would make Chromium send "Origin: null")
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "SAMEORIGIN" if report else "DENY"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    return response
