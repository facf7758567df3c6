"""The scan section: what is personal in the original, and how identifying its columns are."""

from __future__ import annotations

from typing import Any

from veil.report import figures
from veil.report.model import Section, Table
from veil.report.sections._common import Inputs, percent
from veil.scan import ScanResult, scan


def _section(found: ScanResult) -> Section:
    rows = tuple(
        (c.name, c.role.value, c.entity or "", c.confidence, c.evidence) for c in found.columns
    )
    summary = found.risk
    text = [
        f"{len(found.columns)} columns scanned "
        f"({min(found.sample_size, found.rows):,} sampled rows of {found.rows:,}): "
        + ", ".join(
            f"{sum(1 for c in found.columns if c.role.value == role)} {label}"
            for role, label in (
                ("identifier", "direct identifiers"),
                ("quasi_identifier", "quasi-identifiers"),
                ("sensitive", "sensitive"),
                ("insensitive", "harmless"),
            )
        )
        + "."
    ]
    figures_: list[Any] = []
    if summary.quasi_identifiers:
        text.append(
            f"In the original, {summary.unique_rows:,} of {summary.rows:,} records "
            f"({percent(summary.uniqueness)}) are unique on "
            f"{', '.join(summary.quasi_identifiers)}: "
            "whoever knows those attributes of a person finds their record."
        )
        every = ", ".join(summary.quasi_identifiers)
        combos = [(every, summary.uniqueness)] + [
            (", ".join(c["columns"]), float(c["uniqueness"]))
            for c in summary.most_identifying
            if list(c["columns"]) != list(summary.quasi_identifiers)  # the first bar already
        ]
        if any(share > 0 for _, share in combos):  # bars of nothing say less than the text
            figures_.append(figures.uniqueness_figure(combos))
    if summary.population is not None:  # a sample: what it says of the population
        text += [line[0].upper() + line[1:] + "." for line in summary.population.lines()]
    return Section(
        id="scan",
        title="What is personal: the scan",
        text=tuple(text),
        figures=tuple(figures_),
        tables=(
            Table(
                "Columns and their roles",
                ("column", "role", "entity", "confidence", "evidence"),
                rows,
            ),
        ),
    )


def build(inputs: Inputs) -> Section | None:
    """The scan section (scanning the original if no scan is given), or None without either."""
    found = inputs.scan_result
    if found is None and inputs.original is not None:
        found = scan(inputs.original, progress=inputs.progress, **(inputs.sampling or {}))
    return None if found is None else _section(found)
