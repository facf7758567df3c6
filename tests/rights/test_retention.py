"""Retention on a real database: rows older than their class keeps them (with the rows that
link to them) move to the archive store or go; everything younger stays as it was."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import sqlalchemy as sa
import yaml

from tests.rights.conftest import build_insurer, insurer_map
from tests.rights.test_erase import TABLES, _snapshot
from veil.cli import main
from veil.rights import DataMap
from veil.rights.retention import apply_retention


def _spec(url: str, archive: str, then: str) -> dict:
    spec = insurer_map(url, retention={"operational": {"keep": "3 years", "then": then,
                                                        "archive_to": "archive"}})  # fmt: skip
    spec["stores"]["core"]["tables"]["clients"].update(retention="operational",
                                                       date_column="joined")  # fmt: skip
    spec["stores"]["archive"] = {"kind": "sql", "url": archive, "tables": {}}
    return spec


def test_old_clients_and_their_rows_move_to_the_archive(tmp_path: Path, key: bytes) -> None:
    url, archive = f"sqlite:///{tmp_path / 'core.db'}", f"sqlite:///{tmp_path / 'archive.db'}"
    tables = build_insurer(url, clients=80)
    sa.create_engine(archive).dispose()
    as_of = pd.Timestamp("2024-06-01")
    old = set(tables["clients"].loc[tables["clients"]["joined"] < as_of - pd.DateOffset(years=3),
                                    "id"])  # fmt: skip
    assert 0 < len(old) < 80
    before = _snapshot(url)
    data_map = DataMap.model_validate(_spec(url, archive, "archive"))
    plan = apply_retention(data_map, as_of=as_of, dry_run=True)
    assert plan.archived["core.clients"] == len(old)
    assert _snapshot(url)["clients"].equals(before["clients"])
    done = apply_retention(data_map, as_of=as_of)
    assert done.archived == plan.archived
    after = _snapshot(url)
    assert set(after["clients"]["id"]) == set(before["clients"]["id"]) - old
    old_policies = set(before["policies"].loc[before["policies"]["client_id"].isin(old), "id"])
    assert not set(after["policies"]["id"]) & old_policies
    engine = sa.create_engine(archive)
    with engine.connect() as connection:
        archived_clients = pd.read_sql(sa.text("SELECT * FROM clients ORDER BY id"), connection)
    engine.dispose()
    assert set(archived_clients["id"]) == old
    columns = [(c["name"], str(c["type"])) for c in sa.inspect(engine).get_columns("clients")]
    source = sa.create_engine(url)
    assert columns == [
        (c["name"], str(c["type"])) for c in sa.inspect(source).get_columns("clients")
    ]  # the source's definition
    assert sa.inspect(engine).get_foreign_keys("policies")[0]["referred_table"] == "clients"
    source.dispose()
    for table in TABLES:  # what is younger stays row for row
        assert len(after[table]) + done.archived.get(f"core.{table}", 0) == len(before[table])
    again = apply_retention(data_map, as_of=as_of)  # nothing left to move
    assert again.archived == {}


def test_delete_class_and_the_cli(tmp_path: Path, key: bytes) -> None:
    url, archive = f"sqlite:///{tmp_path / 'core.db'}", f"sqlite:///{tmp_path / 'archive.db'}"
    build_insurer(url, clients=40)
    map_path = tmp_path / "insurer.yaml"
    map_path.write_text(yaml.safe_dump(_spec(url, archive, "delete")))
    assert main(["rights", "retention", "--map", str(map_path), "--as-of", "2024-06-01",
                 "--dry-run"]) == 0  # fmt: skip
    before = _snapshot(url)
    assert main(["rights", "retention", "--map", str(map_path), "--as-of", "2024-06-01"]) == 0
    after = _snapshot(url)
    assert len(after["clients"]) < len(before["clients"])
    assert (pd.to_datetime(after["clients"]["joined"]) >= pd.Timestamp("2021-06-01")).all()
    assert main(["rights", "audit", "--map", str(map_path), "--verify"]) == 0
