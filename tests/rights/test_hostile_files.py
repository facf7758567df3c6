"""Files stay inside their store: a link to a file outside the store's folder is refused, a
link inside it is followed (the file it names is rewritten, the link stays), and patterns
that climb out of the folder or are absolute are refused by name, before anything is read.
Each case: one line, nothing changed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from veil.cli import main
from veil.exceptions import InputError
from veil.rights import DataMap
from veil.rights.erase import erase
from veil.rights.retrieve import retrieve

ROWS = b"national_id,name\r\n30000001,Person One\r\n30000002,Person Two\r\n"


def _store(tmp_path: Path, pattern: str = "export_*.csv") -> dict[str, Any]:
    return {
        "subject_keys": ["national_id"],
        "stores": {
            "exports": {
                "kind": "files",
                "path": str(tmp_path / "exports"),
                "tables": {pattern: {"subject_keys": {"national_id": "national_id"}}},
            }
        },
    }


def _snapshot(root: Path) -> dict[str, tuple[bool, bytes]]:
    return {
        str(p.relative_to(root)): (p.is_symlink(), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_link_out_of_the_store_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.csv").write_bytes(ROWS)
    (tmp_path / "exports" / "export_1.csv").write_bytes(ROWS)
    os.symlink("../outside/secret.csv", tmp_path / "exports" / "export_0.csv")
    before = _snapshot(tmp_path)
    data_map = DataMap.model_validate(_store(tmp_path))
    with pytest.raises(
        InputError,
        match=r"'export_0.csv' is a link to .*outside.*secret.csv"
        r".*outside the store's folder.*nothing was changed",
    ):
        erase(data_map, {"national_id": "30000001"}, subject_id="s", journal=tmp_path / "j")
    with pytest.raises(InputError, match="outside the store's folder"):
        retrieve(data_map, {"national_id": "30000001"})
    assert _snapshot(tmp_path) == before
    assert (tmp_path / "exports" / "export_0.csv").is_symlink()


def test_a_link_inside_the_store_rewrites_the_file_it_names(tmp_path: Path) -> None:
    (tmp_path / "exports" / "archive").mkdir(parents=True)
    (tmp_path / "exports" / "archive" / "export_9.csv").write_bytes(ROWS)
    os.symlink("archive/export_9.csv", tmp_path / "exports" / "export_0.csv")
    data_map = DataMap.model_validate(_store(tmp_path))
    result = erase(data_map, {"national_id": "30000001"}, subject_id="s", journal=tmp_path / "j")
    assert result.verified
    link = tmp_path / "exports" / "export_0.csv"
    assert link.is_symlink()  # the link was not replaced by a copy
    assert (
        tmp_path / "exports" / "archive" / "export_9.csv"
    ).read_bytes() == b"national_id,name\r\n30000002,Person Two\r\n"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("../outside/*.csv", "climbs out of the store's folder"),
        ("/etc/*.csv", "is absolute"),
        ("sub/../../outside/*.csv", "climbs out of the store's folder"),
    ],
)
def test_patterns_that_leave_the_folder_are_map_errors(
    tmp_path: Path, pattern: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "exports").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.csv").write_bytes(ROWS)
    before = _snapshot(tmp_path)
    map_path = tmp_path / "map.yaml"
    map_path.write_text(yaml.safe_dump(_store(tmp_path, pattern)))
    code = main(["rights", "erase", "--map", str(map_path), "--subject", "national_id=30000001"])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert _snapshot(tmp_path) == {**before, "map.yaml": (False, map_path.read_bytes())}
    assert not (tmp_path / "map.journal").exists()


def test_a_link_to_a_missing_parent_column_is_one_line_and_no_journal(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """It exited 3 (KeyError) before; now a map error, before any journal exists."""
    from tests.rights.conftest import build_insurer, insurer_map

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=10)
    spec = insurer_map(url)
    spec["stores"]["core"]["tables"]["policies"]["links"] = {"client_id": "clients.uuid"}
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(spec))
    code = main(["rights", "erase", "--map", str(map_path), "--subject", "national_id=20000001"])
    assert code == 2
    err = capsys.readouterr().err
    assert "table 'clients' (linked from 'policies') has no column 'uuid'" in err
    assert not (tmp_path / "insurer.journal").exists()


def test_a_link_in_place_of_a_lock_file_is_refused(tmp_path: Path) -> None:
    """A lock file is opened without following a link: a link planted in its place would
    otherwise make veil create (and lock) whatever file it names."""
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "export_1.csv").write_bytes(ROWS)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere" / "planted", tmp_path / ".exports.veil-lock")
    with pytest.raises(InputError, match=r"cannot take the lock .*\.exports\.veil-lock.*link"):
        erase(
            DataMap.model_validate(_store(tmp_path)),
            {"national_id": "30000001"},
            subject_id="s",
            journal=tmp_path / "j",
        )
    assert not (tmp_path / "elsewhere" / "planted").exists()
    assert (tmp_path / "exports" / "export_1.csv").read_bytes() == ROWS
