"""``veil ui``: the local web workbench (``veil.ui``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import out


def ui(
    data: Annotated[
        str | None,
        typer.Argument(help="A table to open at once (CSV, Parquet, Excel), in an allowed folder."),
    ] = None,
    folder: Annotated[
        list[Path] | None,
        typer.Option(
            "--folder",
            help="A folder the workbench may open files from and write to (repeat for more); "
            "default: DATA's folder, else the current one. Nothing outside them is read.",
        ),
    ] = None,
    rights_map: Annotated[
        Path | None,
        typer.Option("--map", help="A data map (veil rights) for the access and erasure page."),
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            help="Where the policy, its key, the hierarchies and exports are written "
            "(default: veil-workbench in the first folder); inside an allowed folder.",
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option("--host", help="The address to serve on (default: this machine only)."),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="The port to serve on.", min=1, max=65535)
    ] = 8765,
    no_browser: Annotated[
        bool,
        typer.Option("--no-browser", help="Print the URL without opening a browser (servers)."),
    ] = False,
) -> None:
    """Serve the workbench on this machine and open it in the browser: open a table, scan it,
    change roles and hierarchies, set the privacy goals, explore the solution space and pick a
    release, compare it, export it; with --map, access and erasure requests. The URL carries a
    random token (keep it to yourself); every change needs the page's CSRF token. Ctrl-C stops
    it."""
    from veil.ui import create_app, serve

    roots = list(folder or [])
    if not roots:
        roots = [Path(data).resolve().parent if data and "://" not in data else Path.cwd()]
    served = create_app(
        roots, data=data, rights_map=rights_map, workspace=workspace, host=host, port=port
    )
    shown = ", ".join(map(str, served.workbench.workspace.folders.roots))
    out.print(f"veil ui: open {served.url}", markup=False, highlight=False, soft_wrap=True)
    out.print(f"serving {shown} (writes in {served.workbench.workspace.folder}); Ctrl-C stops it")
    if not no_browser:
        import webbrowser

        webbrowser.open(served.url)
    serve(served, host=host, port=port)


def register(app: typer.Typer) -> None:
    """Add ``veil ui`` to ``app``."""
    app.command("ui")(ui)
