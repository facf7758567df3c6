"""Folders of CSV or Parquet files as stores: a table of the map is a file name pattern
(``claims_*.csv``), its subject keys the columns holding them; values compare as text, as
they are written in a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from veil.exceptions import InputError
from veil.rights._map import Store


def files_of(name: str, store: Store, pattern: str) -> list[Path]:
    """The files of the store that a table pattern names, in a stable order."""
    assert store.path is not None
    folder = Path(store.path)
    if not folder.is_dir():
        raise InputError(f"store {name!r}: folder {str(folder)!r} does not exist")
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def read_file(path: Path) -> pd.DataFrame:
    """A whole file, every value as text (a key ``00123`` stays ``00123``)."""
    if path.suffix.lower() == ".parquet":
        return pd.read_parquet(path).astype("string")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def matches(frame: pd.DataFrame, column: str, value: str, *, where: str) -> pd.Series:
    """Rows whose ``column`` holds ``value`` (compared as trimmed text)."""
    if column not in frame.columns:
        raise InputError(f"{where} has no column {column!r}: fix the map")
    return frame[column].astype(str).str.strip() == value.strip()


def subject_rows(frame: pd.DataFrame, columns: dict[str, str], subject: dict[str, str], *,
                 where: str) -> pd.Series:  # fmt: skip
    """Rows holding any of the subject's keys the table maps (``columns``: key -> column)."""
    hit = pd.Series(False, index=frame.index)
    for key, column in columns.items():
        if key in subject:
            hit |= matches(frame, column, subject[key], where=where)
    return hit


def retrieve_store(name: str, store: Store, subject: dict[str, str]
                   ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Rows about ``subject`` in every file of the store, with the file they came from."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pattern, spec in store.tables.items():
        rows: list[dict[str, Any]] = []
        for path in files_of(name, store, pattern):
            frame = read_file(path)
            where = f"store {name!r}, file {path.name!r}"
            hit = subject_rows(frame, spec.subject_keys, subject, where=where)
            rows.extend({"_file": path.name, **{str(k): v for k, v in r.items()}}
                        for r in frame[hit].to_dict("records"))  # fmt: skip
        out[pattern] = rows
    return out
