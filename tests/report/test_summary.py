"""The HTML summary: every data value is escaped, no key reaches it, sections are there."""

from __future__ import annotations

import re

import pandas as pd

from tests.conftest import TEST_KEY
from veil import anonymize
from veil.report import render_summary

PAYLOADS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']


def test_values_and_names_are_escaped(key_env: str) -> None:
    frame = pd.DataFrame(
        {
            "note": PAYLOADS * 3,
            "<b>col</b>": ["x"] * 6,
            "pin": [f"A{i:09d}Z" for i in range(6)],
        }
    )
    release = anonymize(
        frame, {"columns": {"pin": {"role": "identifier", "steps": ["pseudonymize"]}}}
    )
    html = render_summary(frame, release, title="<i>t</i>")
    assert "<script>alert(1)</script>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;col&lt;/b&gt;" in html
    assert "<i>t</i>" not in html
    assert not re.search(r"<script", html, re.IGNORECASE)  # the page runs no script at all
    assert TEST_KEY not in html


def test_summary_shows_columns_steps_and_sample(key_env: str, people: pd.DataFrame) -> None:
    policy = {
        "columns": {
            "name": {"role": "identifier", "steps": ["drop"]},
            "age": {"role": "quasi_identifier", "steps": [{"generalize": {"bins": [0, 50, 200]}}]},
        },
        "steps": [{"suppress_rows": {"where": "age == '[0, 50)' and gender == 'Male'"}}],
    }
    release = anonymize(people, policy)
    html = render_summary(people, release)
    for text in (
        "In plain words",
        "Columns",
        "Table-level steps",
        "First rows of the release",
        "not released",
        "Generalize(age; bins=[0, 50, 200])",
    ):
        assert text in html
    assert html.count("<svg") == people.shape[1]  # one before/after figure per column
    assert f"{len(release.data):,}</b><span>records released of {len(people):,}" in html
