"""Stores of files: a folder of CSV or Parquet files, or S3-compatible object storage (boto3;
moto's server or MinIO by ``endpoint_url``). A table of the map is a file name pattern
(``claims_*.csv``) or an object key prefix (``exports/claims/``); each file or object is a
:class:`Unit` that is read and rewritten whole; its subject keys are columns whose values
compare as text, as they are written in a file.

Rewriting keeps everyone else's bytes: a CSV record that is neither removed nor anonymized is
written back exactly as it was read (quoting, line ends and multi-line fields included)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from veil.exceptions import InputError, MissingExtraError
from veil.io._packed import PACKED_SUFFIXES, unpacked_name
from veil.rights._map import Store, TableMap
from veil.rights._subject import TOKEN, Subject, token, values_of


@dataclass(frozen=True)
class Unit:
    """One file or object of a store: read, replaced, removed whole."""

    label: str  # the file's name (relative to the store's folder) or the object's key
    marker = "_file"  # the column a retrieved row names it in

    def where(self, store: str) -> str:
        """How messages name it."""
        return f"store {store!r}, {self.marker[1:]} {self.label!r}"

    def table(self) -> pd.DataFrame:
        """Its rows, every value as text (a key ``00123`` stays ``00123``)."""
        return parse(self.read(), self.label)

    def read(self) -> bytes:
        """Its bytes (unpacked when its name says it is compressed: ``claims.csv.gz``)."""
        return unpacked(self._get(), self.label)

    def peek(self) -> bytes | None:
        """Its bytes (unpacked), or None when it does not exist."""
        raw = self._peek()
        return None if raw is None else unpacked(raw, self.label)

    def write(self, data: bytes) -> None:
        """Replace it whole with ``data`` (packed as its name says; a reader sees the old
        bytes or the new, never a mix)."""
        self._put(packed(data, self.label))

    def _get(self) -> bytes:
        """Its bytes as stored."""
        raise NotImplementedError

    def _peek(self) -> bytes | None:
        """Its bytes as stored, or None when it does not exist."""
        raise NotImplementedError

    def _put(self, data: bytes) -> None:
        """Replace its stored bytes whole."""
        raise NotImplementedError

    def delete(self) -> None:
        """Remove it (no error when it is gone already)."""
        raise NotImplementedError

    def modified(self) -> pd.Timestamp:
        """When it was last written (UTC, without a zone), its age when rows carry no date."""
        raise NotImplementedError


@dataclass(frozen=True)
class FileUnit(Unit):
    """A file in a store's folder."""

    folder: Path = Path()

    @property
    def path(self) -> Path:
        return self.folder / self.label

    def _get(self) -> bytes:
        return self.path.read_bytes()

    def _peek(self) -> bytes | None:
        return self._get() if self.path.is_file() else None

    def _put(self, data: bytes) -> None:
        from veil.io import atomic_open

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(self.path, "wb") as handle:  # a temporary file, then a rename
            handle.write(data)

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)

    def modified(self) -> pd.Timestamp:
        return pd.Timestamp(self.path.stat().st_mtime, unit="s")


@dataclass(frozen=True)
class ObjectUnit(Unit):
    """An object in a store's bucket (a PUT replaces it atomically)."""

    marker = "_object"
    s3: Any = None
    bucket: str = ""

    def _get(self) -> bytes:
        return bytes(self.s3.get_object(Bucket=self.bucket, Key=self.label)["Body"].read())

    def _peek(self) -> bytes | None:
        from botocore.exceptions import ClientError

        try:
            return self._get()
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise

    def _put(self, data: bytes) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=self.label, Body=data)

    def delete(self) -> None:
        self.s3.delete_object(Bucket=self.bucket, Key=self.label)

    def modified(self) -> pd.Timestamp:
        stamp = self.s3.head_object(Bucket=self.bucket, Key=self.label)["LastModified"]
        return pd.Timestamp(stamp).tz_convert("UTC").tz_localize(None)


def parse(data: bytes, name: str) -> pd.DataFrame:
    """A CSV, Parquet, JSON (an array of objects) or JSON-lines file's bytes as a table of
    text; a JSON record's nested fields are columns named by their path (``contact.email``)."""
    if _parquet(name):
        from veil.io import parquet_frame

        return parquet_frame(data).astype("string")
    if _json_kind(name):
        records = _json_records(data, name)
        frame = pd.json_normalize(records, sep=".") if records else pd.DataFrame()
        frame = frame.map(_json_text).astype(object) if len(frame) else frame
        frame.attrs["json"] = True  # a field no record of this file holds is simply absent
        return frame
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


#: file endings of JSON stores: an array of objects, or one object per line
JSON_ENDINGS = {".json": "array", ".jsonl": "lines", ".ndjson": "lines"}


def _json_kind(name: str) -> str | None:
    inner = unpacked_name(name).lower()
    return next((kind for end, kind in JSON_ENDINGS.items() if inner.endswith(end)), None)


#: A store file's compression, by its name's last suffix (``claims_2024.csv.gz``)


def unpacked(data: bytes, label: str) -> bytes:
    """A stored file's bytes unpacked as its name says (as they are for other names), by
    ``veil.io.unpack`` (stopped past a quarter of the machine's memory); a file whose name
    says compressed but whose bytes are not is one clear line."""
    from veil.io import memory_bytes, unpack

    codec = PACKED_SUFFIXES.get(Path(label).suffix.lower())
    if codec is None:
        return data
    most = memory_bytes() // 4
    try:
        out = unpack(data, codec, most)
    except Exception as err:  # each codec raises its own types (OSError, EOFError, ...)
        raise InputError(
            f"{label!r}: its name says {codec}, but it does not unpack ({err}); rename it or "
            "check it was copied whole (nothing was changed)"
        ) from err
    if out is None:
        raise InputError(
            f"{label!r} unpacks to more than {most / 1e9:,.1f} GB, a quarter of this machine's "
            "memory: refusing to read it (nothing was changed)"
        )
    return out.to_pybytes()


def packed(data: bytes, label: str) -> bytes:
    """``data`` packed as ``label``'s name says (gzip without a timestamp, so equal rows give
    equal bytes); as it is for other names."""
    import bz2
    import gzip
    import lzma

    codec = PACKED_SUFFIXES.get(Path(label).suffix.lower())
    if codec is None:
        return data
    if codec == "zstd":
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as stream:
            stream.write(data)
        return sink.getvalue().to_pybytes()
    pack = {"gzip": lambda d: gzip.compress(d, mtime=0), "bz2": bz2.compress}
    return pack.get(codec, lzma.compress)(data)


def _json_text(value: Any) -> str:
    """A JSON value as the text a key compares as (nested lists as JSON)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _json_records(data: bytes, name: str) -> list[dict[str, Any]]:
    """A JSON store file's records, each an object (or one clear line)."""
    text = data.decode("utf-8")
    try:
        if _json_kind(name) == "lines":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            records = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: not valid JSON (line {err.lineno}): left as it is") from err
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InputError(
            f"{name}: a JSON store file must hold objects (an array of them, or one per line)"
        )
    return records


def _set_path(record: dict[str, Any], path: str, value: Any) -> None:
    """Set a nested field by its dotted path (the column ``parse`` named it by)."""
    if path in record:
        record[path] = value
        return
    head, _, rest = path.partition(".")
    if rest and isinstance(record.get(head), dict):
        _set_path(record[head], rest, value)


def _json_rewritten(
    data: bytes, label: str, *, drop: pd.Series, anonymize: pd.Series, columns: Collection[str]
) -> bytes:
    """A JSON store file without the dropped records and with the anonymized ones' fields
    replaced; in a JSON-lines file every other line keeps its bytes."""
    records = _json_records(data, label)
    if _json_kind(label) == "lines":
        lines = data.decode("utf-8").splitlines(keepends=True)
        out, index = [], 0
        for line in lines:
            if not line.strip():
                out.append(line)
                continue
            if drop.iloc[index]:
                pass
            elif anonymize.iloc[index]:
                record = records[index]
                for column in columns:
                    _set_path(record, column, token())
                ending = line[len(line.rstrip("\r\n")) :] or "\n"
                out.append(json.dumps(record, ensure_ascii=False) + ending)
            else:
                out.append(line)
            index += 1
        return "".join(out).encode("utf-8")
    kept = []
    for i, record in enumerate(records):
        if drop.iloc[i]:
            continue
        if anonymize.iloc[i]:
            for column in columns:
                _set_path(record, column, token())
        kept.append(record)
    indent = 2 if b"\n" in data.strip() else None
    return (json.dumps(kept, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def _parquet(name: str) -> bool:
    return unpacked_name(name).lower().endswith(".parquet")


def units(name: str, store: Store, pattern: str) -> list[Unit]:
    """The files (or objects) of the store a table names, in a stable order, as its kind
    lists them (``veil.rights.file_kinds``)."""
    from veil.rights.stores import kind_of

    found: list[Unit] = kind_of(store).units(name, store, pattern)
    return found


@dataclass(frozen=True)
class Opened:
    """A unit read for a step of a request: its table's map, its bytes, its rows as text."""

    pattern: str
    spec: TableMap
    unit: Unit
    step: str  # its journal step
    data: bytes
    frame: pd.DataFrame
    where: str


def opened(
    name: str, store: Store, patterns: Iterable[str], step: str, skip: Callable[[str], bool]
) -> Iterator[Opened]:
    """Each file or object of ``patterns``, read, but for those whose journal step (``step/
    label``) ``skip`` says an earlier run finished."""
    for pattern in patterns:
        for item in units(name, store, pattern):
            part = f"{step}/{item.label}"
            if skip(part):
                continue
            data = item.read()
            yield Opened(
                pattern,
                store.tables[pattern],
                item,
                part,
                data,
                parse(data, item.label),
                item.where(name),
            )


def client(name: str, store: Store) -> Any:
    """A boto3 S3 client for the store (credentials as boto3 finds them: environment,
    profile, instance role)."""
    try:
        import boto3
    except ImportError as err:
        raise MissingExtraError("S3 stores need boto3: pip install 'veil[rights]'") from err
    return boto3.client("s3", endpoint_url=store.endpoint_url)


def objects_of(s3: Any, name: str, store: Store, prefix: str) -> list[str]:
    """The object keys under ``prefix``: each of a kind veil reads (CSV, Parquet, JSON, each
    also packed: ``.csv.gz``). Any other object there, which may hold the person's data too,
    stops the request in one line before anything is read or changed, but for the markers
    and hidden files data tools leave (a name from ``_`` or ``.``: ``_SUCCESS``) and empty
    objects (a "folder")."""
    from botocore.exceptions import BotoCoreError, ClientError

    keys: list[str] = []
    unread: list[str] = []
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=store.bucket, Prefix=prefix
        ):
            for found in page.get("Contents", []):
                key = found["Key"]
                if unpacked_name(key).lower().endswith((".csv", ".parquet", *JSON_ENDINGS)):
                    keys.append(key)
                elif found.get("Size", 1) and not key.rsplit("/", 1)[-1].startswith(("_", ".")):
                    unread.append(key)
    except (BotoCoreError, ClientError) as err:
        raise InputError(
            f"store {name!r} (bucket {store.bucket!r}) cannot be listed: {err}"
        ) from err
    if unread:
        shown = ", ".join(repr(k) for k in sorted(unread)[:3])
        more = f" and {len(unread) - 3:,} more" if len(unread) > 3 else ""
        raise InputError(
            f"store {name!r}: {shown}{more} under {prefix!r} is of a kind veil cannot read "
            "(it reads CSV, Parquet and JSON files, each also packed: .gz, .bz2, .xz, .zst), "
            "and may hold the person's data: convert it, or move it out of the prefix "
            "(nothing was read or changed)"
        )
    return sorted(keys)


def matches(
    frame: pd.DataFrame, column: str, value: str | Collection[str], *, where: str
) -> pd.Series:
    """Rows whose ``column`` holds ``value`` (or one of several; compared as trimmed text)."""
    if column not in frame.columns:
        if frame.attrs.get("json"):
            return pd.Series(False, index=frame.index)
        raise InputError(f"{where} has no column {column!r}: fix the map")
    wanted = {v.strip() for v in values_of(value)}
    return frame[column].astype(str).str.strip().isin(wanted)


def subject_rows(
    frame: pd.DataFrame, columns: dict[str, str], subject: Subject, *, where: str
) -> pd.Series:
    """Rows holding any of the subject's keys the table maps (``columns``: key -> column)."""
    hit = pd.Series(False, index=frame.index)
    for key, column in columns.items():
        if key in subject:
            hit |= matches(frame, column, subject[key], where=where)
    return hit


def retrieve_store(name: str, store: Store, subject: Subject) -> dict[str, list[dict[str, Any]]]:
    """Rows about ``subject`` in every file or object of the store, with the one they came
    from."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pattern, spec in store.tables.items():
        rows: list[dict[str, Any]] = []
        for item in units(name, store, pattern):
            frame = item.table()
            hit = subject_rows(frame, spec.subject_keys, subject, where=item.where(name))
            rows.extend(
                {item.marker: item.label, **{str(k): v for k, v in r.items()}}
                for r in frame[hit].to_dict("records")
            )
        out[pattern] = rows
    return out


# ------------------------------------------------------------------------------ rewriting
def _records(data: bytes, where: str, rows: int) -> tuple[str, list[str]]:
    """A CSV's header line and each record's raw text (quoted newlines kept)."""
    text = data.decode("utf-8")
    lines = text.splitlines(keepends=True)
    records: list[str] = []
    if lines:
        reader = csv.reader(io.StringIO(text))
        next(reader, None)
        start = reader.line_num
        for _ in reader:
            records.append("".join(lines[start : reader.line_num]))
            start = reader.line_num
    if len(records) != rows:
        raise InputError(f"{where}: its rows could not be told apart (blank lines?): left as it is")
    return "".join(lines[:1]), records


def tokens_only(frame: pd.DataFrame, columns: Collection[str]) -> pd.Series:
    """Rows whose ``columns`` hold only tokens or nothing (anonymized already)."""
    done = pd.Series(True, index=frame.index)
    for column in columns:
        text = frame[column].astype("string").fillna("")
        done &= text.str.startswith(TOKEN) | (text == "")
    return done


def rewritten(
    data: bytes,
    label: str,
    where: str,
    *,
    drop: pd.Series,
    anonymize: pd.Series,
    columns: Collection[str],
) -> bytes:
    """The file without the rows in ``drop`` and with ``columns`` of the rows in
    ``anonymize`` replaced by tokens (masks over its rows in order)."""
    if _json_kind(label):
        return _json_rewritten(data, label, drop=drop, anonymize=anonymize, columns=columns)
    if _parquet(label):
        from veil.io import parquet_bytes, parquet_frame

        frame = parquet_frame(data)
        mask, held = drop.to_numpy(), anonymize.to_numpy()
        for column in columns:
            frame[column] = frame[column].astype(object)
            frame.loc[held, column] = [token() for _ in range(int(held.sum()))]
        return parquet_bytes(frame[~mask])
    frame = parse(data, label)
    header, records = _records(data, where, len(frame))
    out = [header]
    for i, record in enumerate(records):
        if drop.iloc[i]:
            continue
        if not anonymize.iloc[i]:
            out.append(record)
            continue
        row = frame.iloc[i].copy()
        for column in columns:
            row[column] = token()
        buffer = io.StringIO()
        ending = record[len(record.rstrip("\r\n")) :] or "\n"
        csv.writer(buffer, lineterminator=ending).writerow(row.tolist())
        out.append(buffer.getvalue())
    return "".join(out).encode("utf-8")


def selected(data: bytes, label: str, where: str, rows: pd.Series) -> bytes:
    """The file with only the rows in ``rows`` (a CSV's header and records as they were)."""
    return rewritten(data, label, where, drop=~rows, anonymize=rows & False, columns=())


def appended(existing: bytes | None, addition: bytes, label: str, where: str) -> bytes:
    """``addition``'s rows after ``existing``'s (same columns, or one clear line)."""
    if existing is None:
        return addition
    if _json_kind(label) == "lines":
        head = existing if existing.endswith(b"\n") or not existing else existing + b"\n"
        return head + addition
    if _json_kind(label):
        both = _json_records(existing, label) + _json_records(addition, label)
        return (json.dumps(both, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    old, new = parse(existing, label), parse(addition, label)
    if list(old.columns) != list(new.columns):
        raise InputError(
            f"{where} holds columns {list(old.columns)}, the rows to add "
            f"{list(new.columns)}: archive them elsewhere"
        )
    if _parquet(label):
        from veil.io import parquet_bytes, parquet_frame

        frames = [parquet_frame(existing), parquet_frame(addition)]
        return parquet_bytes(pd.concat(frames, ignore_index=True))
    _, records = _records(addition, where, len(new))
    head = existing if existing.endswith(b"\n") or not existing else existing + b"\n"
    return head + "".join(records).encode("utf-8")
