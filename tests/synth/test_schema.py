"""veil.synth.from_schema: test data from a schema alone, checked against Faker's own name
lists and scikit-learn's own generators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from faker import Faker
from sklearn.datasets import make_classification

from veil.cli import main
from veil.exceptions import ParameterError
from veil.synth import from_schema

SCHEMA = {
    "locale": "en_KE",
    "columns": {
        "gender": {"choice": {"Female": 0.6, "Male": 0.4}},
        "name": {"faker": "name", "gender_column": "gender", "unique": True},
        "email": {"faker": "email", "name_column": "name"},
        "age": {
            "distribution": "norm",
            "params": {"loc": 40, "scale": 12},
            "min": 18,
            "max": 90,
            "integer": True,
        },
        "income": {"distribution": "lognorm", "params": [0.6, 0, 30000], "missing": 0.1},
        "joined": {"date": {"start": "2015-01-01", "end": "2024-12-31"}},
        "kra_pin": {"pattern": "A#########?"},
    },
}


def test_names_follow_gender_by_fakers_own_lists_and_emails_follow_names() -> None:
    frame = from_schema(SCHEMA, 1500, random_state=1)
    person = Faker("en_KE").provider("faker.providers.person")
    female, male = set(person.first_names_female), set(person.first_names_male)
    for gender, name in zip(frame["gender"], frame["name"], strict=True):
        own = female if gender == "Female" else male
        given = next(t for t in name.split() if t in female | male)  # past "Dr.", "Rev"
        assert given in own, (gender, name)
    assert frame["name"].is_unique
    for name, email in zip(frame["name"], frame["email"], strict=True):
        local = email.split("@")[0]
        assert any(t.lower() in local for t in name.split() if len(t) > 2), (name, email)
    assert frame["gender"].eq("Female").mean() == pytest.approx(0.6, abs=0.04)
    assert frame["age"].dtype == np.int64
    assert frame["age"].between(18, 90).all()
    assert frame["income"].isna().mean() == pytest.approx(0.1, abs=0.025)
    joined = pd.to_datetime(frame["joined"])
    assert joined.between("2015-01-01", "2024-12-31").all()
    assert frame["kra_pin"].str.fullmatch(r"A\d{9}[A-Z]").all()
    again = from_schema(SCHEMA, 1500, random_state=1)
    pd.testing.assert_frame_equal(frame, again)  # same seed, same rows


def test_classification_is_scikit_learns_own() -> None:
    schema = {
        "kind": "classification",
        "features": 6,
        "informative": 3,
        "classes": 3,
        "target": "label",
    }
    frame = from_schema(schema, 400, random_state=7)
    x, y = make_classification(
        n_samples=400, n_features=6, n_informative=3, n_redundant=0, n_classes=3, random_state=7
    )
    np.testing.assert_array_equal(frame.drop(columns="label").to_numpy(), x)
    np.testing.assert_array_equal(frame["label"].to_numpy(), y)
    blobs = from_schema({"kind": "blobs", "centers": 4}, 300, random_state=2)
    assert sorted(blobs["target"].unique()) == [0, 1, 2, 3]


def test_a_bad_schema_says_which_column_and_what_to_do() -> None:
    with pytest.raises(ParameterError, match="'age'.*not a scipy.stats distribution"):
        from_schema({"columns": {"age": {"distribution": "nrm"}}}, 10)
    with pytest.raises(ParameterError, match="'x': give exactly one of"):
        from_schema({"columns": {"x": {"faker": "name", "pattern": "##"}}}, 10)
    with pytest.raises(ParameterError, match="'name' reads 'sex', which the schema does not"):
        from_schema({"columns": {"name": {"faker": "name", "gender_column": "sex"}}}, 10)
    with pytest.raises(ParameterError, match="unknown keys"):
        from_schema({"colums": {}}, 10)


def test_cli_synth_from_a_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(SCHEMA))  # keys sorted: email before name, still fine
    out = tmp_path / "test_data.csv"
    assert (
        main(["synth", "--schema", str(schema), "--rows", "200", "-o", str(out), "--seed", "3"])
        == 0
    )
    assert "no real row was read" in capsys.readouterr().out
    assert len(pd.read_csv(out)) == 200
    assert main(["synth", str(out), "--schema", str(schema), "-o", str(tmp_path / "y.csv")]) != 0
    assert "give DATA to learn from, or --schema" in capsys.readouterr().err
