"""S3-compatible object storage as a store (boto3; moto's server or MinIO by
``endpoint_url``): a table of the map is an object key prefix (``exports/claims/``), its
objects CSV or Parquet files whose rows are searched as a folder's files are."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd

from veil.exceptions import InputError, MissingExtraError
from veil.rights._files import subject_rows
from veil.rights._map import Store


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


def read_object(s3: Any, store: Store, key: str) -> pd.DataFrame:
    """One object as a table, every value as text."""
    body = s3.get_object(Bucket=store.bucket, Key=key)["Body"].read()
    if key.lower().endswith(".parquet"):
        return pd.read_parquet(io.BytesIO(body)).astype("string")
    return pd.read_csv(io.BytesIO(body), dtype=str, keep_default_na=False)


def retrieve_objects(name: str, store: Store, subject: dict[str, str]
                     ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Rows about ``subject`` in every object of the store, with the key they came from."""
    s3 = client(name, store)
    out: dict[str, list[dict[str, Any]]] = {}
    for prefix, spec in store.tables.items():
        rows: list[dict[str, Any]] = []
        for key in objects_of(s3, name, store, prefix):
            frame = read_object(s3, store, key)
            hit = subject_rows(frame, spec.subject_keys, subject,
                               where=f"store {name!r}, object {key!r}")  # fmt: skip
            rows.extend({"_object": key, **{str(k): v for k, v in r.items()}}
                        for r in frame[hit].to_dict("records"))  # fmt: skip
        out[prefix] = rows
    return out
