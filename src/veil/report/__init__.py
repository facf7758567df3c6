"""Reports on a release: one Report model, rendered to self-contained HTML (figures inline, no
script, no CDN) and to JSON."""

from __future__ import annotations

from veil.report.build import build_report, report_files
from veil.report.model import Block, Fact, Figure, Report, Section, Table
from veil.report.sections._common import Curve
from veil.report.sections.columns import column_profile

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
    "report_files",
]
