"""Fixtures the privacy tests share."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

ADULT = Path(__file__).parents[1] / "data" / "arx_adult"


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ARX's adult as a plain CSV (``adult.csv``) and its hierarchies."""
    folder = tmp_path_factory.mktemp("adult")
    pd.read_csv(ADULT / "adult.csv.gz", sep=";").to_csv(folder / "adult.csv", index=False)
    for tree in ADULT.glob("adult_hierarchy_*.csv"):
        shutil.copy(tree, folder / tree.name)
    return folder
