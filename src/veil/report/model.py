"""The Report model: sections of plain-language text, facts, tables and figures, rendered to one
self-contained HTML file (no script, no CDN, no network) or to JSON.

Figures carry the numbers they plot (``data``), so the JSON is the report without the pictures
and a test can compare it to a golden file; the HTML embeds each picture as a PNG data URI.
Every value that comes from the data reaches the HTML through jinja2's autoescaping.
"""

from __future__ import annotations

import base64
import json
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2
import numpy as np

from veil.exceptions import ParameterError
from veil.io import atomic_open

FORMATS = ("html", "json")


def plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars unwrapped, floats rounded to 4 places."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value


@dataclass(frozen=True)
class Figure:
    """A picture (PNG bytes) and the numbers it shows."""

    id: str
    title: str
    caption: str  # what the figure shows and how to read it
    png: bytes = field(repr=False)
    data: dict[str, Any] = field(default_factory=dict)
    wide: bool = False  # spans the page instead of half of it

    def to_dict(self) -> dict[str, Any]:
        """The figure as JSON values (its image inline, base64)."""
        return {
            "id": self.id,
            "title": self.title,
            "caption": self.caption,
            "data": plain(self.data),
        }

    @property
    def data_uri(self) -> str:
        """The image as a ``data:`` URI, for an ``<img>`` that needs no file."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


@dataclass(frozen=True)
class Table:
    """A table of a report section: headers, rows and an optional caption."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    percent: tuple[str, ...] = ()  # columns whose numbers are shares, shown as percentages

    def to_dict(self) -> dict[str, Any]:
        """The table as JSON values."""
        return {
            "title": self.title,
            "columns": list(self.columns),
            "rows": [plain(list(r)) for r in self.rows],
            "note": self.note,
        }

    def cell(self, value: Any, column: str = "") -> str:
        """How a cell reads in the HTML: numbers with separators, floats to 3 figures, shares
        as percentages."""
        if column in self.percent and isinstance(value, (int, float, np.number)):
            return f"{100 * float(value):.1f}%"
        if value is None:
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (int, np.integer)):
            return f"{int(value):,}"
        if isinstance(value, (float, np.floating)):
            return "—" if math.isnan(value) else f"{float(value):,.3g}"
        return str(value)


@dataclass(frozen=True)
class Fact:
    """A headline number on a card: "942 / records released of 1,001"."""

    value: str
    label: str
    status: str = ""  # "", "good" or "bad": colours the card

    def to_dict(self) -> dict[str, Any]:
        """The fact as JSON values."""
        return {"value": self.value, "label": self.label, "status": self.status}


@dataclass(frozen=True)
class Block:
    """One column's card in a section: a title, facts, and figures beside them."""

    title: str
    tag: str = ""  # e.g. the column's role
    lines: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The block as JSON values."""
        return {
            "title": self.title,
            "tag": self.tag,
            "lines": list(self.lines),
            "figures": [f.to_dict() for f in self.figures],
        }


@dataclass(frozen=True)
class Section:
    """A section of a report: a title, a summary, its facts, figures, tables and blocks."""

    id: str
    title: str
    text: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    blocks: tuple[Block, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The section as JSON values."""
        return {
            "id": self.id,
            "title": self.title,
            "text": list(self.text),
            "facts": [f.to_dict() for f in self.facts],
            "figures": [f.to_dict() for f in self.figures],
            "tables": [t.to_dict() for t in self.tables],
            "blocks": [b.to_dict() for b in self.blocks],
        }

    @property
    def all_figures(self) -> list[Figure]:
        """The section's figures and those of its blocks, in order."""
        return [*self.figures, *(f for b in self.blocks for f in b.figures)]


@dataclass(frozen=True)
class Report:
    """A report: its title, headline facts and sections, rendered to self-contained HTML or JSON
    (``render``)."""

    title: str
    veil_version: str
    created: str
    headline: tuple[str, ...]  # the certificate in plain language, shown first
    facts: tuple[Fact, ...]
    sections: tuple[Section, ...]
    verdict: str = ""  # "good" when every goal asked for is met, "bad" when one is not
    notice: str = ""  # who may read it: a report with the original's statistics is internal

    def section(self, id: str) -> Section:
        """The section with id ``id`` (``scan``, ``policy``, ``privacy``, ``utility``,
        ``columns``, ``dp``); KeyError if the report has none.
        """
        for section in self.sections:
            if section.id == id:
                return section
        raise KeyError(id)

    @property
    def figures(self) -> list[Figure]:
        """Every figure of the report, in order."""
        return [f for s in self.sections for f in s.all_figures]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON values: what ``veil report --format json`` writes."""
        return {
            "title": self.title,
            "veil_version": self.veil_version,
            "created": self.created,
            "verdict": self.verdict,
            "notice": self.notice,
            "headline": list(self.headline),
            "facts": [f.to_dict() for f in self.facts],
            "sections": [s.to_dict() for s in self.sections],
        }

    def to_json(self) -> str:
        """The report as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_html(self) -> str:
        """The report as one self-contained HTML page: figures inline, no script, no CDN."""
        return _environment().get_template("report.html.j2").render(report=self)

    def _repr_html_(self) -> str:
        """The whole report in a notebook, in a frame of its own (its styles stay inside)."""
        from html import escape

        return (
            f'<iframe srcdoc="{escape(self.to_html(), quote=True)}" title="{escape(self.title)}" '
            'style="width:100%;height:820px;border:1px solid #e3e6ec;border-radius:6px">'
            "</iframe>"
        )

    def write(
        self,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        force: bool = False,
        inputs: tuple[str | os.PathLike[str], ...] = (),
    ) -> None:
        """Write HTML or JSON (by ``format``, else the file's extension), atomically."""
        text = self.render(report_format(path, format))
        with atomic_open(path, force=force, inputs=inputs) as fh:
            fh.write(text)

    def render(self, format: str) -> str:
        """The report as the text of an ``html`` or ``json`` file."""
        if format not in FORMATS:
            raise ParameterError(f"report format must be one of {FORMATS}, got {format!r}")
        return self.to_json() + "\n" if format == "json" else self.to_html()


def report_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """``html`` or ``json``: ``format`` if given, else by the file's extension."""
    suffix = os.path.splitext(str(path))[1].lower()
    chosen = format or {".json": "json", ".html": "html", ".htm": "html"}.get(suffix)
    if chosen is None:
        raise ParameterError(
            f"report file must end in .html or .json, got {os.fspath(path)!r}; rename it"
        )
    if chosen not in FORMATS:
        raise ParameterError(f"report format must be one of {FORMATS}, got {chosen!r}")
    return chosen


def _environment() -> jinja2.Environment:
    templates = resources.files("veil.report") / "templates"
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: (templates / name).read_text(encoding="utf-8")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
