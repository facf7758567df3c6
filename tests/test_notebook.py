"""The quickstart notebook runs, top to bottom, in a real kernel (nbclient): it can never go
stale, and the results it shows render as HTML."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "quickstart.ipynb"


def test_the_quickstart_notebook_runs_and_shows_html(tmp_path: Path, key_env: str) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    html = {
        cell.source.splitlines()[-1]: output["data"]["text/html"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "execute_result" and "text/html" in output["data"]
    }
    assert "veil scan: 1,001 rows" in html["found"]
    assert "identifier" in html["found"]
    assert "veil release:" in html["release"]
    assert "veil release certificate" in html["release.certificate"]
    assert "epsilon spent" in html["answer"]
    assert html["report"].startswith("<iframe srcdoc=")
    errors = [
        o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    assert errors == []
    text = "".join(str(o) for c in notebook.cells for o in c.get("outputs", []))
    assert key_env not in text  # the key is never shown


def test_html_cards_escape_every_value() -> None:
    import pandas as pd

    import veil

    frame = pd.DataFrame({"<script>alert(1)</script>": ["0712345678", "0722000111"] * 10})
    html = veil.scan(frame)._repr_html_()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
