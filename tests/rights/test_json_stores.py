"""JSON and JSON-lines file stores: a record per object, nested fields by their path
(``contact.email``). Retrieve finds a person's records, erase removes exactly them (in a
JSON-lines file every other line keeps its bytes), a legal hold replaces the nested fields,
and an S3 store of JSON-lines objects works the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from veil.rights import DataMap, retrieve
from veil.rights.erase import erase

LINES = [
    {"id": 1, "contact": {"email": "a@example.co.ke", "phone": "+254700000001"}, "tier": "gold"},
    {
        "id": 2,
        "contact": {"email": "b@example.co.ke"},
        "tier": "silver",
        "notes": ["called twice", "prefers SMS"],
    },
    {"id": 3, "contact": {"email": "a@example.co.ke"}, "tier": "gold"},
    {"id": 4, "tier": "bronze"},
]


def _map(folder: Path, pattern: str, **table: Any) -> DataMap:
    return DataMap.model_validate(
        {
            "subject_keys": ["email", "phone"],
            "retention": {"record": {"hold": "7 years"}},
            "stores": {
                "crm": {
                    "kind": "files",
                    "path": str(folder),
                    "tables": {
                        pattern: {
                            "subject_keys": {"email": "contact.email", "phone": "contact.phone"},
                            **table,
                        }
                    },
                }
            },
        }
    )


def test_json_lines_lose_exactly_the_persons_records(tmp_path: Path) -> None:
    folder = tmp_path / "crm"
    folder.mkdir()
    lines = [json.dumps(r) + "\r\n" for r in LINES]
    (folder / "people.jsonl").write_text("".join(lines), newline="")
    data_map = _map(folder, "*.jsonl")
    found = retrieve(data_map, {"email": "a@example.co.ke"})
    assert [r["id"] for r in found.stores["crm"]["*.jsonl"]] == ["1", "3"]
    assert found.keys["phone"] == ["+254700000001"]  # followed from the nested field
    result = erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert result.verified
    assert result.removed == {"crm.*.jsonl": 2}
    assert (folder / "people.jsonl").read_bytes() == (lines[1] + lines[3]).encode()


def test_a_json_array_and_a_hold_replace_the_nested_fields(tmp_path: Path) -> None:
    folder = tmp_path / "crm"
    folder.mkdir()
    records = [{**r, "closed": "2025-06-01"} for r in LINES]
    (folder / "people.json").write_text(json.dumps(records, indent=2))
    data_map = _map(folder, "*.json", retention="record", date_column="closed")
    result = erase(data_map, {"email": "a@example.co.ke"}, subject_id="a", journal=tmp_path / "j")
    assert result.verified
    assert result.anonymized == {"crm.*.json": 2}
    kept = json.loads((folder / "people.json").read_text())
    assert [r["id"] for r in kept] == [1, 2, 3, 4]  # held: kept, identifiers replaced
    assert kept[0]["contact"]["email"].startswith("erased-")
    assert kept[0]["contact"]["phone"].startswith("erased-")
    assert kept[1] == records[1]
    assert "a@example.co.ke" not in (folder / "people.json").read_text()


def test_an_s3_store_of_json_lines_objects(tmp_path: Path, s3_endpoint: str) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    bucket = "veil-json-test"
    s3.create_bucket(Bucket=bucket)
    body = "".join(json.dumps(r) + "\n" for r in LINES).encode()
    s3.put_object(Bucket=bucket, Key="events/2025.ndjson", Body=body)
    data_map = DataMap.model_validate(
        {
            "subject_keys": ["email", "phone"],
            "stores": {
                "lake": {
                    "kind": "s3",
                    "bucket": bucket,
                    "endpoint_url": s3_endpoint,
                    "tables": {"events/": {"subject_keys": {"email": "contact.email"}}},
                }
            },
        }
    )
    assert retrieve(data_map, {"email": "b@example.co.ke"}).counts == {"events/": 1}
    assert erase(
        data_map, {"email": "b@example.co.ke"}, subject_id="b", journal=tmp_path / "j"
    ).verified
    left = s3.get_object(Bucket=bucket, Key="events/2025.ndjson")["Body"].read()
    assert left == b"".join(
        line for line in body.splitlines(keepends=True) if b"b@example" not in line
    )
