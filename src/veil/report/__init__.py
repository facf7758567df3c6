"""Reports on a release: self-contained HTML (no CDN, no script) and JSON."""

from __future__ import annotations

from veil.report.summary import column_profile, render_summary, write_summary

__all__ = ["column_profile", "render_summary", "write_summary"]
