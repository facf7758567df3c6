"""The local web workbench (``veil ui``): ARX's desktop workflow and Fides' request pages as a
web app on this machine, over the library calls the command line makes. Open a table, scan it,
change roles and hierarchies, set goals, explore the solution space and pick a release, compare
it, export it; with a data map, handle access and erasure requests.

It serves 127.0.0.1 unless told otherwise, reads and writes only under the folders it is given,
and needs the random token of the URL it prints (exchanged for a session cookie); every change
carries a CSRF token and every page a strict Content-Security-Policy (``veil.ui._guard``).
Needs the ``ui`` extra: ``pip install 'veil[ui]'``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.exceptions import MissingExtraError, ParameterError

__all__ = ["Served", "create_app", "serve"]


@dataclass
class Served:
    """An app ready to serve: the ASGI app, its first URL (with the token) and the workbench."""

    app: Any
    url: str
    workbench: Any


def create_app(
    folders: Sequence[str | os.PathLike[str]],
    *,
    data: str | None = None,
    rights_map: str | os.PathLike[str] | None = None,
    workspace: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
) -> Served:
    """The workbench's app.

    Parameters
    ----------
    folders : list of paths
        The only folders files are opened from and written to.
    data : str, optional
        A table to open at once (in an allowed folder).
    rights_map : path, optional
        A data map (``veil rights``) for the requests page.
    workspace : path, optional
        Where the policy, its key, the hierarchies and exports go (default: ``veil-workbench``
        in the first folder); it must lie in an allowed folder.
    host, port : str, int
        The address the server answers as (its Host header is checked).
    token : str, optional
        The URL's token (default: a random one).

    Returns
    -------
    Served
        The app, its URL with the token, and the workbench.
    """
    try:
        from veil.ui._app import Workbench
        from veil.ui._guard import Guard
        from veil.ui._pages import ROUTES
    except ImportError as err:
        raise MissingExtraError("veil ui needs the ui extra: pip install 'veil[ui]'") from err
    from veil.ui._folders import Folders
    from veil.ui._workspace import Workspace

    allowed = Folders(folders)
    folder = allowed.folder(str(workspace) if workspace is not None else "veil-workbench")
    mapped = None
    if rights_map is not None:
        mapped = Path(rights_map).resolve()
        if not mapped.is_file():
            raise ParameterError(f"--map {rights_map}: no such data map")
    ws = Workspace(allowed, folder, mapped)
    if data is not None:
        ws.open(str(Path(data).resolve()) if "://" not in data else data)
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    hosts = {f"{host}:{port}", f"{shown}:{port}", f"127.0.0.1:{port}", f"localhost:{port}"}
    if host in ("0.0.0.0", "::"):
        raise ParameterError("--host must name this machine's address, not every address")
    guard = Guard(hosts, token)
    workbench = Workbench(ws, guard)
    url = f"http://{host}:{port}/data?token={guard.token}"
    return Served(workbench.app(ROUTES), url, workbench)


def serve(served: Served, *, host: str, port: int) -> None:
    """Run the app until interrupted (uvicorn, one process)."""
    import uvicorn

    uvicorn.run(served.app, host=host, port=port, log_level="warning", access_log=False)
