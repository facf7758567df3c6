"""Building a first map from a live database (reflection and veil's scan) and checking a map
against the stores: missing tables and columns are errors, unindexed keys and unreachable
tables warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml

from tests.rights.conftest import build_insurer, insurer_map
from veil.cli import main
from veil.rights import DataMap, load_map, retrieve
from veil.rights.mapper import build_map, check_map


def test_a_map_built_from_the_database_retrieves_like_the_hand_written_one(database: str) -> None:
    built = build_map([database])
    store = next(iter(built.stores.values()))
    assert store.tables["claims"].links == {"policy_id": "policies.id"}
    assert store.tables["payments"].links == {"claim_id": "claims.id"}
    assert store.tables["clients"].subject_keys.get("email") == "email"
    assert "national_id" in built.subject_keys
    hand = retrieve(DataMap.model_validate(insurer_map(database)), {"national_id": "20000042"})
    auto = retrieve(built, {"national_id": "20000042"})
    assert auto.counts == hand.counts
    errors, _ = check_map(built)
    assert errors == []


def test_check_names_missing_columns_unindexed_keys_and_unreachable_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=10)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE notes (id INTEGER PRIMARY KEY, phone TEXT)"))
    engine.dispose()
    spec = insurer_map(url)
    spec["stores"]["core"]["tables"]["clients"]["subject_keys"]["email"] = "name"  # no index
    spec["stores"]["core"]["tables"]["notes"] = {}
    path = tmp_path / "map.yaml"
    path.write_text(yaml.safe_dump(spec))
    errors, warnings = check_map(load_map(path))
    assert errors == []
    assert any("core.clients.name has no index" in w for w in warnings)
    assert any("core.notes: no subject key and no link" in w for w in warnings)
    spec["stores"]["core"]["tables"]["claims"]["links"] = {"policy": "policies.id"}
    spec["stores"]["core"]["tables"]["gone"] = {"links": {"claim_id": "claims.id"}}
    path.write_text(yaml.safe_dump(spec))
    errors, _ = check_map(load_map(path))
    assert "core.claims: no column 'policy'" in errors
    assert "core.gone: no such table" in errors
    assert main(["rights", "map", "--map", str(path), "--check"]) == 1
    assert "error: core.gone: no such table" in capsys.readouterr().out
    out = tmp_path / "new.yaml"
    assert main(["rights", "map", url, "-o", str(out)]) == 0
    assert "clients" in load_map(out).stores["insurer"].tables


FIDES = """
dataset:
  - fides_key: insurer
    name: Insurer core database
    collections:
      - name: clients
        fields:
          - name: id
            data_categories: [system.operations]
            fides_meta: {primary_key: true}
          - name: national_id
            data_categories: [user.government_id.national_identification_number]
            fides_meta: {identity: national_id, data_type: string}
          - name: email
            data_categories: [user.contact.email]
            fides_meta: {identity: email, data_type: string}
      - name: policies
        fields:
          - name: client_id
            fides_meta:
              references: [{dataset: insurer, field: clients.id, direction: from}]
      - name: claims
        fields:
          - name: policy_id
            fides_meta:
              references: [{dataset: insurer, field: policies.id, direction: from}]
      - name: payments
        fields:
          - name: claim_id
      - name: contacts
        fields:
          - name: client_id
            fides_meta:
              references: [{dataset: insurer, field: clients.id, direction: from}]
"""


def test_a_fides_dataset_becomes_a_map_that_retrieves_the_same(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=60)
    fides = FIDES.replace(
        "          - name: claim_id\n",
        "          - name: claim_id\n"
        "            fides_meta:\n              references: [{dataset: insurer,"
        " field: claims.id, direction: from}]\n",
    )
    path = tmp_path / "fides.yml"
    path.write_text(fides)
    out = tmp_path / "map.yaml"
    assert (
        main(
            ["rights", "map", "--from-fides", str(path), "--url", f"insurer={url}", "-o", str(out)]
        )
        == 0
    )
    data_map = load_map(out)
    assert data_map.stores["insurer"].tables["payments"].links == {"claim_id": "claims.id"}
    hand = retrieve(DataMap.model_validate(insurer_map(url)), {"national_id": "20000021"})
    assert retrieve(data_map, {"national_id": "20000021"}).counts == {
        t.replace("core.", ""): n for t, n in hand.counts.items()
    }
    from veil.exceptions import PolicyError
    from veil.rights.fides import from_fides

    with pytest.raises(PolicyError, match="has no database URL: pass --url insurer=URL"):
        from_fides(path, {})
    path.write_text(FIDES.replace("fides_key: insurer", "fides_key: 'bad key!'"))
    with pytest.raises(PolicyError, match="Fides dataset 'bad key!'"):
        from_fides(path, {"bad key!": url})


def test_proposed_keys_are_key_shaped_and_index_statements_run(tmp_path: Path) -> None:
    """The map proposes key-shaped columns and the people table's own key, never a free-text
    column; the CREATE INDEX it suggests runs on the database it was suggested for."""
    url = f"sqlite:///{tmp_path / 'insurer.db'}"
    build_insurer(url, clients=30)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "CREATE TABLE letters (id INTEGER PRIMARY KEY, client_id "
                "INTEGER REFERENCES clients(id), body TEXT)"
            )
        )
        for i in range(1, 31):
            connection.execute(
                sa.text("INSERT INTO letters VALUES (:i, :i, :b)"),
                {
                    "i": i,
                    "b": f"Dear Client {i}, we called +2547{i:08d} and wrote to "
                    f"client{i}@example.co.ke about claim {i}.",
                },
            )
    engine.dispose()
    built = build_map([url])
    tables = next(iter(built.stores.values())).tables
    assert "body" not in tables["letters"].subject_keys.values()
    assert tables["clients"].subject_keys.get("clients_id") == "id"
    spec = insurer_map(url)
    spec["stores"]["core"]["tables"]["clients"]["subject_keys"]["email"] = "name"  # no index
    path = tmp_path / "map.yaml"
    path.write_text(yaml.safe_dump(spec))
    _, warnings = check_map(load_map(path))
    statement = next(w for w in warnings if "core.clients.name has no index" in w)
    create = statement.split("; ", 1)[1]
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text(create))  # SQLite rejected the unnamed form
    engine.dispose()
    _, warnings = check_map(load_map(path))
    assert not any("core.clients.name has no index" in w for w in warnings)
