"""The names compressed files go by: one list for the readers of tables and of a person's
stores."""

from __future__ import annotations

from pathlib import Path

#: Each suffix a compressed file is named with, and its codec (Arrow's names; xz Python's).
PACKED_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}


def unpacked_name(name: str) -> str:
    """``name`` without its compression suffix (``claims.csv.gz``: ``claims.csv``): what says
    the file's kind, and the stem its hierarchies are named after."""
    suffix = Path(name).suffix.lower()
    return name[: -len(suffix)] if suffix in PACKED_SUFFIXES else name
