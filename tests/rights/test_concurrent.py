"""Requests at the same moment, in separate processes released together: two erasures of
different people whose rows share one CSV file, and retention running beside an erasure. Each
store is locked from its first read to its verified rewrite, so neither undoes the other: both
verified every time, both rows gone, everyone else's bytes unchanged."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pandas as pd

from veil.rights import DataMap
from veil.rights.erase import erase
from veil.rights.retention import apply_retention

TRIALS = 30
AS_OF = pd.Timestamp("2026-01-01")


def _table(path: Path) -> bytes:
    lines = ["national_id,name,closed\r\n"]
    for i in range(60):
        closed = "2020-03-01" if i % 7 == 0 else "2025-12-01"  # every 7th aged out
        lines.append(f"{40000000 + i},Person {i},{closed}\r\n")
    data = "".join(lines).encode()
    path.write_bytes(data)
    return data


def _map(folder: Path) -> DataMap:
    return DataMap.model_validate(
        {
            "subject_keys": ["national_id"],
            "retention": {"closed": {"keep": "2 years"}},
            "stores": {
                "exports": {
                    "kind": "files",
                    "path": str(folder),
                    "tables": {
                        "people.csv": {
                            "subject_keys": {"national_id": "national_id"},
                            "retention": "closed",
                            "date_column": "closed",
                        }
                    },
                }
            },
        }
    )


def _run(job: tuple[str, ...], start: Any, results: Any) -> None:
    try:
        _job(job, start, results)
    except BaseException as err:  # the test names what went wrong in the child
        import traceback

        results.put(("error", "".join(traceback.format_exception(err))))
        raise


def _job(job: tuple[str, ...], start: Any, results: Any) -> None:
    kind, folder, who, *tag = job
    data_map = _map(Path(folder))
    journal = Path(folder).with_name("map.journal")
    start.wait()
    if kind == "erase":
        result = erase(data_map, {"national_id": who}, subject_id=f"id-{who}", journal=journal)
        if tag:  # the same person twice: what each says it did
            results.put((tag[0], (result.verified, sum(result.removed.values()), result.resumed)))
        else:
            results.put((who, result.verified))
    else:
        done = apply_retention(data_map, journal=journal, as_of=AS_OF)
        results.put(("retention", sum(done.deleted.values())))


def _together(jobs: list[tuple[str, ...]]) -> dict[str, Any]:
    # a fork server: children forked from a clean process (this one may run other threads,
    # and fork copies none of them safely), with veil imported once there
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["veil.rights.erase", "veil.rights.retention", __name__])
    start, results = context.Barrier(len(jobs)), context.Queue()
    processes = [context.Process(target=_run, args=(job, start, results)) for job in jobs]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=60)
    said = dict(results.get(timeout=5) for _ in jobs)
    assert "error" not in said, said["error"]
    assert [p.exitcode for p in processes] == [0] * len(jobs)
    return said


def _without(data: bytes, ids: set[str], aged: bool = False) -> bytes:
    lines = data.splitlines(keepends=True)
    keep = [lines[0]]
    for line in lines[1:]:
        if line.split(b",")[0].decode() in ids or (aged and b"2020-03-01" in line):
            continue
        keep.append(line)
    return b"".join(keep)


def test_two_erasures_sharing_a_file_at_the_same_moment_both_hold(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        folder = tmp_path / f"t{trial}" / "exports"
        folder.mkdir(parents=True)
        original = _table(folder / "people.csv")
        a, b = "40000005", "40000008"
        verified = _together([("erase", str(folder), a), ("erase", str(folder), b)])
        assert verified == {a: True, b: True}, trial
        assert (folder / "people.csv").read_bytes() == _without(original, {a, b}), trial


def test_retention_beside_an_erasure_of_the_same_file_both_hold(tmp_path: Path) -> None:
    aged = 9  # rows 0, 7, ..., 56
    for trial in range(TRIALS):
        folder = tmp_path / f"t{trial}" / "exports"
        folder.mkdir(parents=True)
        original = _table(folder / "people.csv")
        who = "40000010"
        done = _together([("erase", str(folder), who), ("retention", str(folder), "")])
        assert done == {who: True, "retention": aged}, trial
        assert (folder / "people.csv").read_bytes() == _without(original, {who}, aged=True)


def test_two_erasures_of_one_person_at_once_count_the_rows_once(tmp_path: Path) -> None:
    for trial in range(10):
        folder = tmp_path / f"t{trial}" / "exports"
        folder.mkdir(parents=True)
        original = _table(folder / "people.csv")
        who = "40000012"
        said = _together(
            [("erase", str(folder), who, "first"), ("erase", str(folder), who, "second")]
        )
        # one removed the row, the other found nothing; neither finished "an interrupted" one
        assert sorted(said.values()) == [(True, 0, False), (True, 1, False)], trial
        assert (folder / "people.csv").read_bytes() == _without(original, {who})
