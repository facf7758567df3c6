"""The kinds of store behind one protocol: SQL, files and S3 are classes registered in
``veil.rights.stores.KINDS``, every request finds a store's kind there, and a new kind is one
class (shown with a kind registered by this test, which retrieve and erase then serve)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pydantic
import pytest

from tests.rights.conftest import build_insurer, insurer_map, write_exports
from veil.rights import DataMap, retrieve
from veil.rights.erase import erase
from veil.rights.file_kinds import Files
from veil.rights.stores import KINDS, kind_named, kind_of, known_kinds


def test_the_three_kinds_are_registered_and_found_by_their_word() -> None:
    assert sorted(known_kinds()) == ["files", "s3", "sql"]
    assert all(kind_named(k).kind == k for k in known_kinds())
    assert sorted(KINDS) == ["files", "s3", "sql"]  # each registered once it was first needed
    store = DataMap.model_validate(insurer_map("sqlite:///x.db")).stores["core"]
    assert kind_of(store).kind == "sql"
    assert kind_of(store).linked
    assert kind_of(store).erased_last


def test_an_unknown_kind_is_refused_when_the_map_loads_with_the_nearest_word() -> None:
    spec = insurer_map("sqlite:///x.db")
    spec["stores"]["core"]["kind"] = "flies"
    with pytest.raises(pydantic.ValidationError, match="did you mean 'files'"):
        DataMap.model_validate(spec)


class Mirror(Files):
    """A folder of files under another name: a kind of store added by one class."""

    kind = "mirror"
    needs = "path"


@pytest.fixture
def mirror() -> Iterator[None]:
    KINDS.add("mirror", Mirror(), aliases=["copy"])
    try:
        yield
    finally:
        KINDS.remove("mirror")
        # gone from every list: a test run after this one in the same process sees the
        # kinds veil ships (it once saw "mirror" among them, by name though not by member)
        assert "mirror" not in known_kinds()
        assert "copy" not in KINDS


def _map(url: str, folder: Path, kind: str) -> dict[str, Any]:
    spec = insurer_map(url)
    spec["stores"]["exports"] = {
        "kind": kind,
        "path": str(folder),
        "tables": {"export_*.csv": {"subject_keys": {"national_id": "NationalID"}}},
    }
    return spec


def test_a_kind_registered_by_one_class_is_served_by_retrieve_and_erase(
    tmp_path: Path, key: bytes, mirror: None
) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    tables = build_insurer(url, clients=40)
    write_exports(tmp_path / "exports", tables)
    person = {"national_id": str(tables["clients"]["national_id"].iloc[3])}
    files_map = DataMap.model_validate(_map(url, tmp_path / "exports", "files"))
    mirror_map = DataMap.model_validate(_map(url, tmp_path / "exports", "mirror"))
    assert kind_of(mirror_map.stores["exports"]).kind == "mirror"
    through_files = retrieve(files_map, person)
    through_mirror = retrieve(mirror_map, person)
    assert through_mirror.counts == through_files.counts
    assert through_mirror.counts["export_*.csv"] == 1  # one row of one export file
    done = erase(
        mirror_map, person, subject_id="mirror-test", journal=tmp_path / "journal", key=key
    )
    assert done.verified
    assert done.removed["exports.export_*.csv"] == 1
    assert done.removed["core.clients"] == 1
    assert retrieve(files_map, person).total == 0
    left = pd.read_csv(tmp_path / "exports" / "export_0.csv", dtype=str)
    assert person["national_id"] not in set(left["NationalID"])


def test_a_request_on_a_sql_map_loads_no_table_library(tmp_path: Path) -> None:
    """The file kinds (and pandas with them) load only for a map that has files or objects:
    the right of access on a SQL map, in a process of its own, never imports pandas."""
    import subprocess
    import sys

    import yaml

    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    tables = build_insurer(url, clients=20)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump(insurer_map(url)))
    someone = str(tables["clients"]["national_id"].iloc[0])
    probe = (
        "import sys\n"
        "from veil.rights import access\n"
        f"found = access({str(tmp_path / 'map.yaml')!r}, 'national_id={someone}')\n"
        "print(sum(found.counts.values()), 'pandas' in sys.modules, 'veil.rights.file_kinds' in "
        "sys.modules)\n"
    )
    env = {**os.environ, "VEIL_KEY": "k" * 40}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    rows, pandas_loaded, file_kinds_loaded = done.stdout.split()
    assert int(rows) >= 1  # the person was found
    assert pandas_loaded == "False"
    assert file_kinds_loaded == "False"
