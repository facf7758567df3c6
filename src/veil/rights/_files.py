"""Stores of files: a folder of CSV or Parquet files, or S3-compatible object storage (boto3;
moto's server or MinIO by ``endpoint_url``). A table of the map is a file name pattern
(``claims_*.csv``) or an object key prefix (``exports/claims/``); each file or object is a
:class:`Unit` that is read and rewritten whole; its subject keys are columns whose values
compare as text, as they are written in a file."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from veil.exceptions import InputError, MissingExtraError
from veil.rights._map import Store


@dataclass(frozen=True)
class Unit:
    """One file or object: its name, how to read its bytes and how to replace them."""

    label: str  # the file's name or the object's key
    marker: str  # the column a retrieved row names it in: "_file" or "_object"
    read: Callable[[], bytes]
    write: Callable[[bytes], None]

    def where(self, store: str) -> str:
        """How messages name it."""
        return f"store {store!r}, {self.marker[1:]} {self.label!r}"

    def table(self) -> pd.DataFrame:
        """Its rows, every value as text (a key ``00123`` stays ``00123``)."""
        return parse(self.read(), self.label)


def parse(data: bytes, name: str) -> pd.DataFrame:
    """A CSV or Parquet file's bytes as a table of text."""
    if name.lower().endswith(".parquet"):
        return pd.read_parquet(io.BytesIO(data)).astype("string")
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def units(name: str, store: Store, pattern: str) -> list[Unit]:
    """The files (or objects) of the store a table names, in a stable order."""
    if store.kind == "s3":
        s3 = client(name, store)
        return [Unit(key, "_object", _getter(s3, store, key), _putter(s3, store, key))
                for key in objects_of(s3, name, store, pattern)]  # fmt: skip
    assert store.path is not None
    folder = Path(store.path)
    if not folder.is_dir():
        raise InputError(f"store {name!r}: folder {str(folder)!r} does not exist")
    return [Unit(p.name, "_file", p.read_bytes, _rewriter(p))
            for p in sorted(folder.glob(pattern)) if p.is_file()]  # fmt: skip


def _rewriter(path: Path) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        from veil.io import atomic_open

        with atomic_open(path, "wb") as handle:  # a temporary file, then a rename
            handle.write(data)

    return write


def _getter(s3: Any, store: Store, key: str) -> Callable[[], bytes]:
    return lambda: bytes(s3.get_object(Bucket=store.bucket, Key=key)["Body"].read())


def _putter(s3: Any, store: Store, key: str) -> Callable[[bytes], None]:
    return lambda data: s3.put_object(Bucket=store.bucket, Key=key, Body=data)


def client(name: str, store: Store) -> Any:
    """A boto3 S3 client for the store (credentials as boto3 finds them: environment,
    profile, instance role)."""
    try:
        import boto3
    except ImportError as err:
        raise MissingExtraError("S3 stores need boto3: pip install 'veil[rights]'") from err
    return boto3.client("s3", endpoint_url=store.endpoint_url)


def objects_of(s3: Any, name: str, store: Store, prefix: str) -> list[str]:
    """The object keys under ``prefix`` ending in .csv or .parquet."""
    from botocore.exceptions import BotoCoreError, ClientError

    keys: list[str] = []
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=store.bucket,
                                                                 Prefix=prefix):  # fmt: skip
            keys.extend(o["Key"] for o in page.get("Contents", [])
                        if o["Key"].lower().endswith((".csv", ".parquet")))  # fmt: skip
    except (BotoCoreError, ClientError) as err:
        raise InputError(f"store {name!r} (bucket {store.bucket!r}) cannot be listed: "
                         f"{err}") from err  # fmt: skip
    return sorted(keys)


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
    """Rows about ``subject`` in every file or object of the store, with the one they came
    from."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pattern, spec in store.tables.items():
        rows: list[dict[str, Any]] = []
        for unit in units(name, store, pattern):
            frame = unit.table()
            hit = subject_rows(frame, spec.subject_keys, subject, where=unit.where(name))
            rows.extend({unit.marker: unit.label, **{str(k): v for k, v in r.items()}}
                        for r in frame[hit].to_dict("records"))  # fmt: skip
        out[pattern] = rows
    return out
