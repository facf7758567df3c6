"""Data that ships with veil: the bundled sample (1001 synthetic Kenyan insurance clients with
national IDs and KRA PINs, CC0; see README.md here) that the demos read."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # read() imports pandas when the sample is read: the rights demo does not
    import pandas as pd

SAMPLE = "kenya_insurance.csv"


def sample() -> pd.DataFrame:
    """The bundled sample as a table."""
    from veil.io import read

    with resources.as_file(resources.files("veil.data") / SAMPLE) as path:
        return read(path)
