"""Reports on a release: one Report model, rendered to self-contained HTML (figures inline, no
script, no CDN) and to JSON."""

from __future__ import annotations

from veil.report.build import Curve, build_report, column_profile
from veil.report.model import Block, Fact, Figure, Report, Section, Table

__all__ = [
    "Block",
    "Curve",
    "Fact",
    "Figure",
    "Report",
    "Section",
    "Table",
    "build_report",
    "column_profile",
]
