"""Matplotlib through its object API (no pyplot: no global state, no backend switch in the
user's session): blank canvases in veil's colours, PNG/SVG bytes, and the epsilon curve that
both ``veil.dp.curves`` and the report draw."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd

from veil.exceptions import MissingExtraError

BEFORE = "#9fb3c8"  # the original
AFTER = "#2f7d6d"  # the release
WARN = "#b54708"


def canvas(width: float, height: float, *, panels: int = 1) -> tuple[Any, Any]:
    """A figure and its row of axes, without top/right spines."""
    try:
        from matplotlib.figure import Figure
    except ImportError as err:  # a core dependency; only a broken install gets here
        raise MissingExtraError("plots need matplotlib: pip install matplotlib") from err
    figure = Figure(figsize=(width, height), dpi=100)
    axes = figure.subplots(1, panels, squeeze=False)[0]
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
    return figure, axes


def render(figure: Any, *, format: str = "png", tight: bool = False) -> bytes:
    """The figure's bytes, without the software stamp (so equal figures give equal bytes)."""
    buffer = io.BytesIO()
    if not tight:
        figure.tight_layout()
    metadata = {"Software": None} if format == "png" else {"Creator": None, "Date": None}
    figure.savefig(buffer, format=format, metadata=metadata, bbox_inches="tight" if tight else None)
    return buffer.getvalue()


def draw_curve(
    ax: Any, table: pd.DataFrame, *, y: str, ylabel: str, reference: str | None = None
) -> None:
    """``table[y]`` against ``table.epsilon`` on a log axis, with an optional reference line."""
    ax.plot(table["epsilon"], table[y], marker="o", color=AFTER, label=ylabel)
    if reference is not None:
        ax.axhline(
            float(table[reference].iloc[0]),
            color=BEFORE,
            linestyle="--",
            label="without differential privacy",
        )
        ax.legend(frameon=False, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (privacy loss; smaller is more private)", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.grid(alpha=0.3)
