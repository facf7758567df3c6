"""The release summary: what was done to each column and what it changed, on one page.

Every value that comes from the data goes through jinja2's autoescaping; no script runs in
the page; no secret reaches it (steps describe themselves without their keys).
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

import jinja2
import pandas as pd

from veil.io import atomic_open, check_output
from veil.privacy.certificate import Release

_SAMPLE_ROWS = 10


def column_profile(series: pd.Series) -> dict[str, Any]:
    """Type, missing share, distinct count and top values of one column."""
    n = len(series)
    counts = series.value_counts(dropna=True)
    return {
        "dtype": str(series.dtype),
        "missing": float(series.isna().mean()) if n else 0.0,
        "distinct": int(counts.size),
        "top": [(str(v), int(c)) for v, c in counts.head(3).items()],
    }


def _environment() -> jinja2.Environment:
    templates = resources.files("veil.report") / "templates"
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: (templates / name).read_text(encoding="utf-8")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_summary(original: pd.DataFrame, release: Release, *, title: str = "veil release") -> str:
    cert = release.certificate
    column_steps: dict[str, list[str]] = {}
    table_steps = []
    for step in cert.steps:
        if step.where.startswith("columns."):
            column = step.where.removeprefix("columns.").rsplit(".steps[", 1)[0]
            column_steps.setdefault(column, []).append(step.description)
        else:
            table_steps.append(step)
    rows: list[dict[str, Any]] = []
    for name in cert.columns_in:
        before = column_profile(original[name])
        after = column_profile(release.data[name]) if name in release.data.columns else None
        rows.append(
            {
                "name": name,
                "role": cert.roles.get(name, "insensitive"),
                "steps": column_steps.get(name, []),
                "before": before,
                "after": after,
            }
        )
    new_columns = [c for c in cert.columns_out if c not in cert.columns_in]
    widest = max([r["before"]["distinct"] for r in rows] + [1])
    sample = (
        release.data.head(_SAMPLE_ROWS)
        .astype(object)
        .where(release.data.head(_SAMPLE_ROWS).notna(), "")
    )
    return (
        _environment()
        .get_template("summary.html.j2")
        .render(
            title=title,
            cert=cert,
            summary=cert.summary(),
            rows=rows,
            widest=widest,
            table_steps=table_steps,
            new_columns=new_columns,
            sample_columns=[str(c) for c in sample.columns],
            sample_rows=[[str(v) for v in row] for row in sample.itertuples(index=False)],
        )
    )


def write_summary(
    path: str | os.PathLike[str],
    original: pd.DataFrame,
    release: Release,
    *,
    force: bool = False,
    inputs: tuple[str | os.PathLike[str], ...] = (),
) -> None:
    html = render_summary(original, release)
    check_output(path, inputs=inputs, force=force)
    with atomic_open(path) as fh:
        fh.write(html)
