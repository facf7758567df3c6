"""The rights demo's insurer, built from the bundled sample without pandas, holds the sample
as veil reads it (``veil.data.sample``, through pandas), and loads no pandas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from tests.loaded import loaded_by
from veil.data import sample
from veil.rights.demo import build_database


def test_the_insurer_holds_the_bundled_sample_as_read(tmp_path: Path) -> None:
    database = tmp_path / "insurer.db"
    clients = build_database(database)
    read = sample()
    with sqlite3.connect(database) as connection:
        stored = pd.read_sql("SELECT * FROM clients ORDER BY id", connection)
        policies = pd.read_sql("SELECT * FROM policies ORDER BY id", connection)
        claims = pd.read_sql("SELECT * FROM claims ORDER BY id", connection)
    assert len(stored) == len(read) == len(clients["id"])
    assert stored["national_id"].tolist() == read["ID_number"].astype(str).tolist()
    assert stored["kra_pin"].tolist() == read["Tax_id"].astype(str).tolist()
    assert stored["county"].tolist() == read["County"].tolist()
    joined = pd.to_datetime(read["Date_of_entry"]).dt.strftime("%Y-%m-%d")
    assert stored["joined"].tolist() == joined.tolist()
    assert policies["policy_limit"].tolist() == read["Policy_limit"].astype(str).tolist()
    # each claim's illness is its client's (the claim's policy is the client's own)
    illness = read["Illness_category"].to_numpy()[claims["policy_id"].to_numpy() - 1]
    assert claims["illness"].tolist() == illness.tolist()
    assert clients["national_id"][:3] == stored["national_id"][:3].tolist()


def test_the_rights_demo_loads_no_pandas(tmp_path: Path) -> None:
    demo = ["rights", "demo", "-o", tmp_path / "demo"]
    loaded, printed = loaded_by(demo, ["pandas"], env={"VEIL_KEY": "k" * 43})
    assert "hash chain intact" in printed
    assert loaded == []
