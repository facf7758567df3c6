"""Small HTML cards for notebooks: what the command line prints, in the report's colours.

The results people look at in Jupyter (``ScanResult``, ``Release``, ``Certificate``,
``DPResult``) render through ``card``; every value is escaped. At the bottom of the layers, so
that ``scan`` and ``dp`` can use it without importing the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

__all__ = ["Shown", "card", "plain"]

# the report's palette (veil/report/templates): ink, muted, the role colours
_STYLE = (
    "<style>"
    ".veil-card{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;"
    "color:#1d2330;max-width:960px}"
    ".veil-card h4{margin:4px 0 6px;font-size:14px}"
    ".veil-card table{border-collapse:collapse;margin:4px 0}"
    ".veil-card th,.veil-card td{padding:3px 10px;text-align:left;"
    "border-bottom:1px solid #e3e6ec;vertical-align:top}"
    ".veil-card th{color:#5b6372;font-weight:600}"
    ".veil-card ul{margin:4px 0 4px 18px;padding:0}"
    ".veil-card .identifier{color:#b3261e;font-weight:600}"
    ".veil-card .quasi_identifier{color:#9a6700}"
    ".veil-card .sensitive{color:#8a3ffc}"
    ".veil-card .insensitive{color:#5b6372}"
    ".veil-card .muted{color:#5b6372}"
    "</style>"
)

Cell = str | tuple[str, str]  # text, or (text, css class)


def _cell(value: Cell, tag: str = "td") -> str:
    if isinstance(value, tuple):
        text, css = value
        return f'<{tag} class="{escape(css)}">{escape(text)}</{tag}>'
    return f"<{tag}>{escape(str(value))}</{tag}>"


def card(
    title: str,
    *,
    headers: Sequence[str] = (),
    rows: Sequence[Sequence[Cell]] = (),
    lines: Sequence[str] = (),
    footer: str = "",
) -> str:
    """One card: a title, an optional table, then lines of plain text."""
    parts = [_STYLE, '<div class="veil-card">', f"<h4>{escape(title)}</h4>"]
    if rows:
        parts.append("<table>")
        if headers:
            parts.append("<tr>" + "".join(_cell(h, "th") for h in headers) + "</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(_cell(value) for value in row) + "</tr>")
        parts.append("</table>")
    if lines:
        parts.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    if footer:
        parts.append(footer)
    parts.append("</div>")
    return "".join(parts)


def plain(value: Any) -> Any:
    """A value JSON cannot write as it is (numpy numbers and arrays, paths, sets), as one it
    can."""
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


class Shown:
    """What every result veil hands back has beside its own ``to_dict``: ``to_json`` and a
    notebook card (``_repr_html_``) of its ``lines()`` (by default, one line per entry of
    ``to_dict``)."""

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON values."""
        raise NotImplementedError

    def to_json(self, *, indent: int | None = None) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=plain)

    def lines(self) -> list[str]:
        """The result as lines of text (what the command line prints)."""
        said = []
        for key, value in self.to_dict().items():
            text = json.dumps(value, default=plain) if not isinstance(value, str) else value
            said.append(f"{key}: {text if len(text) <= 200 else text[:197] + '...'}")
        return said

    def _repr_html_(self) -> str:
        return card(f"veil {type(self).__name__}", lines=self.lines())
