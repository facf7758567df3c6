"""The audit log's hash chain: every kind of tampering is found, and the first bad entry is
named; the subject is never written, only its keyed hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veil.exceptions import CheckFailedError
from veil.rights import AuditLog, subject_hash

KEY = b"0123456789abcdef0123456789abcdef"


def _log(tmp_path: Path, entries: int = 5) -> AuditLog:
    log = AuditLog(tmp_path / "audit.jsonl", KEY)
    for i in range(entries):
        log.append(
            "retrieve",
            subject=subject_hash(KEY, {"national_id": f"2000000{i}"}),
            stores=["core"],
            counts={"clients": 1, "claims": i},
        )
    return log


def _lines(log: AuditLog) -> list[str]:
    return log.path.read_text().splitlines()


def _write(log: AuditLog, lines: list[str]) -> None:
    log.path.write_text("".join(line + "\n" for line in lines))


def test_an_intact_log_verifies_and_holds_no_raw_subject(tmp_path: Path) -> None:
    log = _log(tmp_path)
    assert log.verify() == 5
    text = log.path.read_text()
    assert "20000003" not in text
    assert subject_hash(KEY, {"national_id": "20000003"}) in text
    assert (
        subject_hash(b"another key of 32 bytes, really.", {"national_id": "20000003"}) not in text
    )
    assert AuditLog(tmp_path / "empty.jsonl", KEY).verify() == 0


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        ("edit", r"entry 3 \(seq 3\) was edited"),
        ("delete", r"entry 2 \(seq 3\) does not follow entry 1"),
        ("insert", r"entry 3 \(seq 2\) does not follow entry 2"),
        ("reorder", r"entry 2 \(seq 3\) does not follow entry 1"),
        ("truncate", r"the head records 5 entries, the log holds 4"),
        ("garbage", r"line 4 is not an entry"),
        ("head", r"head file was edited"),
        ("rehash", r"entry 3 \(seq 3\) was edited"),
    ],
)
def test_every_kind_of_tampering_names_the_first_bad_entry(
    tmp_path: Path, tamper: str, message: str
) -> None:
    log = _log(tmp_path)
    lines = _lines(log)
    if tamper == "edit":
        entry = json.loads(lines[2])
        entry["counts"]["claims"] = 0
        lines[2] = json.dumps(entry, sort_keys=True)
    elif tamper == "delete":
        del lines[1]
    elif tamper == "insert":
        lines.insert(2, lines[1])
    elif tamper == "reorder":
        lines[1], lines[2] = lines[2], lines[1]
    elif tamper == "truncate":
        lines = lines[:4]
    elif tamper == "garbage":
        lines[3] = lines[3][:40]
    elif tamper == "head":
        head = json.loads(log.head.read_text())
        head["entries"] = 4
        log.head.write_text(json.dumps(head))
    elif tamper == "rehash":  # without the key, a recomputed plain hash does not pass
        import hashlib

        entry = json.loads(lines[2])
        entry["actor"] = "someone else"
        body = json.dumps(
            {k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":")
        )
        entry["hash"] = hashlib.sha256(body.encode()).hexdigest()
        lines[2] = json.dumps(entry, sort_keys=True)
    _write(log, lines)
    with pytest.raises(CheckFailedError, match=message):
        log.verify()


def test_the_rights_demo_runs_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from veil.cli import main

    monkeypatch.setenv("VEIL_KEY", KEY.decode())
    assert main(["rights", "demo", "--out", str(tmp_path / "demo")]) == 0
    printed = capsys.readouterr().out
    assert "3. retrieve again: 0 rows" in printed
    assert "hash chain intact" in printed
    assert (
        main(["rights", "audit", "--map", str(tmp_path / "demo" / "insurer.yaml"), "--verify"]) == 0
    )


def test_an_erasure_confirmation_comes_from_the_verified_log(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `erase`, `audit --subject ... -o` writes the person's confirmation: the entry's
    number and hash as they stand in the log, the counts erase printed, no raw identifier; a
    person never erased, or a log tampered with, gets none (exit 1)."""
    import yaml

    from tests.rights.conftest import build_insurer, insurer_map
    from veil.cli import main

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=30)
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(insurer_map(url)))
    base = ["rights", "audit", "--map", str(map_path)]
    subject = ["--subject", "national_id=20000004"]
    assert main(["rights", "retrieve", "--map", str(map_path), *subject]) == 0
    assert main([*base, *subject, "-o", str(tmp_path / "early.json")]) == 1
    assert "no verified erasure of this person" in capsys.readouterr().err
    assert main(["rights", "erase", "--map", str(map_path), *subject, "--format", "json"]) == 0
    erased = json.loads(capsys.readouterr().out)
    assert main([*base, *subject, "-o", str(tmp_path / "confirmation.json")]) == 0
    body = json.loads((tmp_path / "confirmation.json").read_text())
    entries = [
        json.loads(line) for line in (tmp_path / "insurer.audit.jsonl").read_text().splitlines()
    ]
    entry = entries[body["audit"]["entry"] - 1]
    assert entry["action"] == "erase"
    assert body["audit"]["hash"] == entry["hash"]
    assert body["counts"] == erased["removed"]
    assert [r["action"] for r in body["requests"]] == ["retrieve", "erase"]
    assert main([*base, *subject, "-o", str(tmp_path / "confirmation.html")]) == 0
    page = (tmp_path / "confirmation.html").read_text()
    assert "Your data was erased" in page
    for text in (page, (tmp_path / "confirmation.json").read_text()):
        assert "20000004" not in text
    assert main([*base, "--subject", "national_id=20000005", "-o", str(tmp_path / "x.json")]) == 1
    lines = (tmp_path / "insurer.audit.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"retrieve"', '"erase"')
    (tmp_path / "insurer.audit.jsonl").write_text("\n".join(lines) + "\n")
    assert main([*base, *subject, "-o", str(tmp_path / "again.json")]) == 1
    assert "entry 1 (seq 1) was edited" in capsys.readouterr().err
    assert not (tmp_path / "again.json").exists()


@pytest.mark.parametrize(
    "attack", ["delete log and head", "truncate log and head", "delete anchor file only"]
)
def test_deleting_or_cutting_the_log_with_its_head_fails_verification(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str], attack: str
) -> None:
    """The head is also anchored beside the journal folder and in each SQL store: deleting the
    log and its head ("0 entries, intact" before), or cutting both back, is found and named;
    and the next request refuses to start a new chain."""
    import yaml

    from tests.rights.conftest import build_insurer, insurer_map
    from veil.cli import main

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=20)
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(insurer_map(url)))
    base = ["rights", "audit", "--map", str(map_path), "--verify"]
    for i in range(3):
        assert (
            main(
                [
                    "rights",
                    "retrieve",
                    "--map",
                    str(map_path),
                    "--subject",
                    f"national_id=2000000{i}",
                ]
            )
            == 0
        )
    assert main(base) == 0
    capsys.readouterr()
    log, head = tmp_path / "insurer.audit.jsonl", tmp_path / "insurer.audit.jsonl.head"
    if attack == "delete log and head":
        log.unlink()
        head.unlink()
        expected = r"is missing, but its anchor in .* records 3"
    elif attack == "truncate log and head":
        # cut back to the first entry, with a head that matches it (forged with the key)
        lines = log.read_text().splitlines()
        log.write_text(lines[0] + "\n")
        first = AuditLog(tmp_path / "x.jsonl", key)
        first._write_head(1, json.loads(lines[0])["hash"])
        head.write_text((tmp_path / "x.jsonl.head").read_text())
        expected = r"holds 1 entries, but its anchor in .* records 3"
    else:  # one anchor gone: the others still hold, and the log is intact
        next(tmp_path.glob("insurer.journal.locks/audit-*.anchor")).unlink()
        assert main(base) == 0
        return
    assert main(base) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert __import__("re").search(expected, err), err
    # and no request starts a new chain over the gap
    assert (
        main(["rights", "retrieve", "--map", str(map_path), "--subject", "national_id=20000005"])
        == 1
    )
    assert "records 3" in capsys.readouterr().err
