"""veil check against pycanon (an external oracle) on several datasets and column sets.

pycanon pins its own numpy/pandas, so it lives in `.venv-pycanon` (made by `make test`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import veil
from veil.demo import demo_data
from veil.privacy import check

ROOT = Path(__file__).resolve().parents[2]
PYCANON = ROOT / ".venv-pycanon" / "bin" / "python"
ADULT = ROOT / "tests" / "data" / "arx_adult" / "adult.csv.gz"

CASES = [
    ("adult", ["sex", "age", "race"], "occupation"),
    ("adult", ["sex", "race", "marital-status"], "occupation"),
    ("adult", ["sex", "race"], "age"),  # numeric sensitive: ordered distance
    ("adult", ["education", "workclass"], "salary-class"),
    ("adult", ["sex", "age", "race", "marital-status", "education"], None),
    ("kenya", ["Gender", "Marital_status"], "Illness_category"),
    ("kenya", ["Gender", "Tier"], "Retention"),  # numeric sensitive
    ("kenya", ["County", "Gender"], "Illness_category"),
]


@pytest.fixture(scope="module")
def pycanon_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], dict[str, Path]]:
    """pycanon's measures of each case, and the CSV files it read."""
    if not PYCANON.exists():
        pytest.fail(f"{PYCANON} is missing: run `make test`, which builds the pycanon oracle")
    folder = tmp_path_factory.mktemp("pycanon")
    kenya = folder / "kenya.csv"
    demo_data().to_csv(kenya, index=False)
    adult = folder / "adult.csv"
    pd.read_csv(ADULT, sep=";").to_csv(adult, index=False)
    paths = {"adult": adult, "kenya": kenya}
    spec = [{"csv": str(paths[name]), "qi": qi, "sa": sa} for name, qi, sa in CASES]
    spec_file = folder / "spec.json"
    spec_file.write_text(json.dumps(spec))
    runner = Path(__file__).with_name("pycanon_runner.py")
    out = subprocess.run(
        [str(PYCANON), str(runner), str(spec_file)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(out.stdout), paths


@pytest.mark.parametrize("from_file", [False, True], ids=["frame", "csv-by-arrow"])
@pytest.mark.parametrize("index", range(len(CASES)))
def test_agrees_with_pycanon(
    index: int, from_file: bool, pycanon_run: tuple[list[dict], dict[str, Path]]
) -> None:
    """A DataFrame measured, and the very CSV file pycanon read measured by ``veil.check``
    (read, typed and counted by Arrow, without pandas)."""
    name, qi, sa = CASES[index]
    values, paths = pycanon_run
    if from_file:
        ours = veil.check(paths[name], qi, sensitive=sa)
    else:
        frame = pd.read_csv(ADULT, sep=";") if name == "adult" else demo_data()
        ours = check(frame, qi, sensitive=sa)
    theirs = values[index]
    assert ours.k == theirs["k"]
    if sa:
        assert ours.l_distinct == theirs["l_distinct"]
        assert ours.l_entropy == theirs["l_entropy"]
        assert ours.t == pytest.approx(theirs["t"], abs=1e-9)
        # pycanon's recursive c sorts the value counts ascending (its r1 is the *least*
        # frequent value), which is not Machanavajjhala et al.'s definition; recursive c is
        # checked against a from-the-definition computation in test_check.py instead
