"""Compressed files in a store (``claims_2024.csv.gz``, exports packed as they were made):
before, a bucket's listing skipped every key but .csv, .parquet and .json*, so an erasure
said "verified" and left the person in ``exports/claims/2024.csv.gz``; a folder's CSV reader
choked on the packed bytes. Now each is read unpacked, and rewritten packed the same way,
every other record as it was: checked by unpacking with the standard library."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from veil.exceptions import InputError
from veil.rights import DataMap, retrieve
from veil.rights.erase import erase

CSV = (
    "member,email,county\r\n"
    "M1,a@example.co.ke,Nairobi\r\n"
    'M2,b@example.co.ke,"Kisumu, Lake"\r\n'
    "M3,a@example.co.ke,Nakuru\r\n"
)
UNPACK: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.decompress,
    ".bz2": bz2.decompress,
    ".xz": lzma.decompress,
}
PACK: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
}


def _map(name: str, store: dict[str, Any], pattern: str) -> DataMap:
    """A map of one store whose ``pattern`` holds people by their e-mail address."""
    table = {pattern: {"subject_keys": {"email": "email"}}}
    return DataMap.model_validate(
        {"subject_keys": ["email"], "stores": {name: {**store, "tables": table}}}
    )


def _files_map(folder: Path, pattern: str) -> DataMap:
    return _map("crm", {"kind": "files", "path": str(folder)}, pattern)


def _bucket_map(bucket: str, endpoint: str) -> DataMap:
    return _map("lake", {"kind": "s3", "bucket": bucket, "endpoint_url": endpoint}, "exports/")


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_packed_csv_in_a_folder_loses_exactly_the_persons_records(
    tmp_path: Path, suffix: str
) -> None:
    folder = tmp_path / "crm"
    folder.mkdir()
    path = folder / f"claims_2024.csv{suffix}"
    path.write_bytes(PACK[suffix](CSV.encode()))
    data_map = _files_map(folder, "claims_*")
    found = retrieve(data_map, {"email": "a@example.co.ke"})
    assert [r["member"] for r in found.stores["crm"]["claims_*"]] == ["M1", "M3"]
    result = erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert result.verified
    assert result.removed == {"crm.claims_*": 2}
    lines = CSV.splitlines(keepends=True)
    assert UNPACK[suffix](path.read_bytes()) == "".join([lines[0], lines[2]]).encode()
    assert retrieve(data_map, {"email": "a@example.co.ke"}).counts.get("claims_*", 0) == 0


def test_a_bucket_of_packed_exports_is_read_and_rewritten_packed(
    tmp_path: Path, s3_endpoint: str
) -> None:
    import boto3
    import pyarrow as pa
    import pyarrow.parquet as pq

    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = "veil-packed-test"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="exports/2024.csv.gz", Body=gzip.compress(CSV.encode()))
    events = [{"email": "a@example.co.ke", "what": "login"}, {"email": "c@example.co.ke"}]
    lines = "".join(json.dumps(e) + "\n" for e in events).encode()
    s3.put_object(Bucket=bucket, Key="exports/events.jsonl.xz", Body=lzma.compress(lines))
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"email": ["a@example.co.ke", "d@example.co.ke"]}), sink)
    parquet = sink.getvalue().to_pybytes()
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(parquet)
    s3.put_object(Bucket=bucket, Key="exports/old.parquet.zst", Body=sink.getvalue().to_pybytes())
    s3.put_object(Bucket=bucket, Key="exports/_SUCCESS", Body=b"")  # a marker: not a table
    data_map = _bucket_map(bucket, s3_endpoint)
    assert retrieve(data_map, {"email": "a@example.co.ke"}).counts == {"exports/": 4}
    result = erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert result.verified
    assert result.removed == {"lake.exports/": 4}

    def body(key: str) -> Any:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    left = gzip.decompress(body("exports/2024.csv.gz")).decode()
    assert left == "".join(CSV.splitlines(keepends=True)[i] for i in (0, 2))
    assert lzma.decompress(body("exports/events.jsonl.xz")) == lines.splitlines(True)[1]
    reader = pa.CompressedInputStream(pa.BufferReader(body("exports/old.parquet.zst")), "zstd")
    assert pq.read_table(pa.BufferReader(reader.read())).column("email").to_pylist() == [
        "d@example.co.ke"
    ]
    assert retrieve(data_map, {"email": "a@example.co.ke"}).counts.get("exports/", 0) == 0


def test_a_file_named_packed_that_is_not_is_one_line_and_nothing_changes(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "crm"
    folder.mkdir()
    path = folder / "claims_2024.csv.gz"
    path.write_bytes(CSV.encode())  # named .gz, written plain
    data_map = _files_map(folder, "claims_*")
    with pytest.raises(InputError, match=r"its name says gzip, but it does not unpack"):
        erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert path.read_bytes() == CSV.encode()


def test_an_object_of_a_kind_veil_cannot_read_stops_the_request(
    tmp_path: Path, s3_endpoint: str
) -> None:
    """A workbook under the prefix may hold the person too: the request stops before
    anything changes, naming it. Markers (``_SUCCESS``), hidden files and empty "folder"
    objects are no tables and are passed over."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = "veil-unread-test"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="exports/2024.csv", Body=CSV.encode())
    s3.put_object(Bucket=bucket, Key="exports/_SUCCESS", Body=b"")
    s3.put_object(Bucket=bucket, Key="exports/.part-0.crc", Body=b"crc")
    s3.put_object(Bucket=bucket, Key="exports/archive/", Body=b"")
    data_map = _bucket_map(bucket, s3_endpoint)
    assert retrieve(data_map, {"email": "a@example.co.ke"}).counts == {"exports/": 2}
    s3.put_object(Bucket=bucket, Key="exports/members.xlsx", Body=b"PK\x03\x04 a workbook")
    with pytest.raises(InputError, match=r"'exports/members.xlsx' under 'exports/' is of a kind"):
        erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert s3.get_object(Bucket=bucket, Key="exports/2024.csv")["Body"].read() == CSV.encode()


def test_a_store_file_that_unpacks_past_a_quarter_of_memory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A packed file in a store is unpacked by the same reader as a table (``veil.io.unpack``),
    so a small file that unpacks to gigabytes stops the request, nothing changed (here 16 MB
    of a machine said to have 64)."""
    from veil.io import _files

    monkeypatch.setattr(_files, "memory_bytes", lambda: 64 << 20)
    folder = tmp_path / "crm"
    folder.mkdir()
    path = folder / "claims_2024.csv.gz"
    body = CSV.encode() + b"M9,z@example.co.ke,Lamu\r\n" * ((32 << 20) // 25)
    path.write_bytes(gzip.compress(body))
    before = path.read_bytes()
    with pytest.raises(InputError, match=r"unpacks to more than 0.0 GB, a quarter"):
        erase(
            _files_map(folder, "claims_*"),
            {"email": "a@example.co.ke"},
            subject_id="a",
            journal=tmp_path / "j",
        )
    assert path.read_bytes() == before
