"""The columns section: a light profile of each column before and after."""

from __future__ import annotations

from typing import Any

import pandas as pd

from veil.privacy.certificate import Certificate
from veil.report import figures
from veil.report.measures import ranked
from veil.report.model import Block, Figure, Section
from veil.report.sections._common import Inputs, Progress, column_steps, percent


def column_profile(series: pd.Series) -> dict[str, Any]:
    """Type, missing share, distinct count and top values of one column."""
    n = len(series)
    counts = series.value_counts(dropna=True)
    return {
        "dtype": str(series.dtype),
        "missing": float(series.isna().mean()) if n else 0.0,
        "distinct": int(counts.size),
        "top": [(str(v), int(c)) for v, c in ranked(counts, top=3).items()],
    }


def _section(
    cert: Certificate, original: pd.DataFrame, data: pd.DataFrame, progress: Progress
) -> Section:
    per_column, _ = column_steps(cert)
    blocks = []
    for name in cert.columns_in:
        if name not in original.columns:
            continue
        progress(f"profiling {name}")
        role = cert.roles.get(name, "insensitive")
        before = column_profile(original[name])
        after = column_profile(data[name]) if name in data.columns else None
        lines = [
            "done: " + ("; ".join(per_column.get(name, [])) or "nothing"),
            f"type {before['dtype']}"
            + (f" → {after['dtype']}" if after and after["dtype"] != before["dtype"] else ""),
            f"missing {percent(before['missing'])}"
            + (f" → {percent(after['missing'])}" if after else ""),
            f"distinct {before['distinct']:,}" + (f" → {after['distinct']:,}" if after else ""),
        ]
        # free text that was redacted: its original cells hold what was redacted
        hidden = role == "identifier" or any(
            d.startswith("Redact(") for d in per_column.get(name, [])
        )
        if after is None:
            lines.append("not released")
        elif not hidden and after["top"] and after["top"][0][1] > 1:
            lines.append("most common after: " + ", ".join(f"{v} ({c:,})" for v, c in after["top"]))
        figs: tuple[Figure, ...] = ()
        if not hidden:  # a histogram of unique keys shows nothing and leaks values
            figs = (
                figures.distribution_figure(name, original[name], data[name] if after else None),
            )
        blocks.append(Block(title=name, tag=role, lines=tuple(lines), figures=figs))
    return Section(
        id="columns",
        title="Columns, before and after",
        text=(
            "A light profile of each column in the original and in the release. Direct "
            "identifiers get no histogram: their values are one per person.",
        ),
        blocks=tuple(blocks),
    )


def build(inputs: Inputs) -> Section | None:
    """The columns section, or None without the original table."""
    if inputs.original is None:
        return None
    return _section(inputs.cert, inputs.original, inputs.data, inputs.progress)
