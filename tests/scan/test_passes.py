"""The scan of a table read in passes (``veil scan --streaming``): the same sample, every
verdict confirmed on every row, the risk from the counts: the result of the scan in memory, to
the JSON, however the rows are split into batches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import veil
import veil.data
from veil.cli import main
from veil.io import TableStream, read
from veil.scan import core, scan_stream
from veil.scan import passes as scan_passes

DATA = Path(__file__).parents[1] / "data"
DEMO_DATA = Path(veil.data.__file__).parent / "kenya_insurance.csv"
TABLES = [
    DEMO_DATA,  # Kenyan insurance: KRA PINs, phones, counties, diagnoses
    DATA / "ibm_hr_attrition_full.csv",  # numbers: ages, incomes, keys (median, skew)
    DATA / "heart.csv",  # a health table: terse column names made clinical by the table
    DATA / "organs_vitals.csv",  # dates in mixed day/month order
    DATA / "free_text_notes.csv",  # prose searched inside
]


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.name)
@pytest.mark.parametrize("batch_rows", [97, 1000])
def test_the_scan_in_batches_is_the_scan_in_memory(path: Path, batch_rows: int) -> None:
    whole = veil.scan(read(path)).to_dict()
    streamed = scan_stream(TableStream(path), batch_rows=batch_rows).to_dict()
    assert streamed == whole


def test_population_estimates_and_weights_come_from_the_counts(tmp_path: Path) -> None:
    table = read(DATA / "ibm_hr_attrition.csv")
    table["weight"] = (np.arange(len(table)) % 7 + 1) * 25.0
    path = tmp_path / "hr.csv"
    table.to_csv(path, index=False)
    table = read(path)
    for options in ({"population": 60_000}, {"sampling_fraction": 0.05}, {"weights": "weight"}):
        whole = veil.scan(table, **options).to_dict()
        streamed = scan_stream(TableStream(path), batch_rows=200, **options).to_dict()
        assert streamed["risk"]["population"] == whole["risk"]["population"], options
        assert streamed == whole
        assert whole["risk"]["population"]["population"] > len(table)


def test_a_verdict_is_confirmed_on_every_row_not_the_sample(tmp_path: Path) -> None:
    """Ten values sampled, 1,000 rows: the share of e-mail addresses the evidence states is
    that of all rows (650 of 1,000), counted batch by batch."""
    rng = np.random.default_rng(3)
    mails = [f"u{i}@m{i % 9}x.com" for i in range(650)]
    others = [f"ref-{i:05d}" for i in range(350)]
    cells = np.array(mails + others, dtype=object)[rng.permutation(1000)]
    path = tmp_path / "contacts.csv"
    pd.DataFrame({"contact": cells, "n": np.arange(1000)}).to_csv(path, index=False)
    streamed = scan_stream(TableStream(path), batch_rows=128, sample_size=10)
    whole = veil.scan(read(path), sample_size=10)
    found = streamed.column("contact")
    assert found.to_dict() == whole.column("contact").to_dict()
    assert found.entity == "EMAIL"  # the sample said e-mails; every row confirmed 65%
    assert found.evidence.startswith("65% of 1,000 values")


def test_one_address_the_sample_misses_is_found_in_memory_and_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One e-mail address in 30,000 rows of ``none``: not in the scan's sample of 1,000, so the
    column read as harmless and a suggested policy released it. Every value of a text column
    found harmless is searched, in memory and batch by batch (each value's first row kept
    over the batches), to the same finding: an identifier whose step redacts."""
    cells = np.array(["none", "see file"] * 15_000, dtype=object)
    cells[12_345] = "write to jane.doe@example.org"
    cells[29_000] = "jane.doe@example.org"
    path = tmp_path / "remarks.csv"
    pd.DataFrame({"comment": cells, "n": np.arange(30_000) % 7}).to_csv(path, index=False)
    whole = veil.scan(read(path))
    found = whole.column("comment")
    assert (found.role.value, found.entity) == ("identifier", "FREE_TEXT")
    assert found.evidence == (
        "rows 12,346 and 29,001 hold an e-mail address, found by a search of every value "
        "(too few for a sample of 1,000)"
    )
    for batch_rows in (7_000, 30_000):
        streamed = scan_stream(TableStream(path), batch_rows=batch_rows)
        assert streamed.to_dict() == whole.to_dict()
    # a column of more distinct values than the first pass counts: each batch searched whole
    monkeypatch.setattr(scan_passes, "COUNTED", 3)
    streamed = scan_stream(TableStream(path), batch_rows=7_000)
    assert streamed.column("comment").to_dict() == found.to_dict()
    sampled = core.scan(read(path), sweep=False).column("comment")
    assert sampled.role.value != "identifier"  # the sample alone: what it was


def test_distinct_values_beyond_the_counts_are_estimated_by_the_sketch(tmp_path: Path) -> None:
    """A key of 250,000 distinct values is more than the counts keep (100,000): its distinct
    ratio is the KMV sketch's estimate, within 3%, and the key is still found."""
    n = 250_000
    keys = np.random.default_rng(5).permutation(n) * 7 + 1_000_003
    path = tmp_path / "keys.parquet"
    pd.DataFrame({"policy_no": keys, "plan": np.arange(n) % 4}).to_parquet(
        path, row_group_size=40_000
    )
    streamed = scan_stream(TableStream(path), batch_rows=40_000)
    found = streamed.column("policy_no")
    assert found.distinct_ratio == pytest.approx(1.0, abs=0.03)
    assert found.role.value == "identifier"
    assert streamed.column("plan").distinct_ratio == 4 / n  # counted exactly
    assert n > scan_passes.SKETCH


def test_moments_merged_in_any_split_equal_the_whole() -> None:
    rng = np.random.default_rng(8)
    values = np.concatenate([rng.lognormal(8, 1, 3000), rng.normal(50, 3, 17)])
    whole = scan_passes._Moments.of(values)
    merged = scan_passes._Moments()
    for part in np.array_split(values, [5, 6, 1800, 2999]):
        merged = merged.merge(scan_passes._Moments.of(part))
    assert (merged.n, merged.low, merged.high) == (whole.n, whole.low, whole.high)
    assert merged.m2 == pytest.approx(whole.m2, rel=1e-9)
    assert merged.m3 == pytest.approx(whole.m3, rel=1e-9)


def test_the_command_scans_in_batches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key_env: str
) -> None:
    data = str(DEMO_DATA)
    assert main(["scan", data, "--in-memory", "--format", "json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main(["scan", data, "--streaming", "--batch-rows", "50", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == whole
    memory, streamed = tmp_path / "memory.yaml", tmp_path / "streamed.yaml"
    assert main(["scan", data, "--in-memory", "--suggest-policy", str(memory)]) == 0
    assert (
        main(["scan", data, "--streaming", "--batch-rows", "70", "--suggest-policy", str(streamed)])
        == 0
    )
    capsys.readouterr()
    # fitted on the counts, not the rows: the same columns and outcome (the counts hold no
    # sensitive value, so the l the table in memory reaches is left to the release)
    head = memory.read_text().split("# the goal", 1)[0]
    assert streamed.read_text().startswith(head)
    assert "records kept" in streamed.read_text()
    assert main(["scan", data, "--streaming", "--batch-rows", "0"]) != 0
    assert "--batch-rows must be at least 1" in capsys.readouterr().err


def test_a_policy_suggested_in_passes_measures_what_the_release_in_batches_does(
    tmp_path: Path, key_env: str
) -> None:
    """IBM HR scanned in batches: the suggestion is searched on the counts the scan kept, and
    the records it says are kept are those a release in batches keeps."""
    import re

    from veil.privacy import anonymize_stream
    from veil.privacy.suggest import suggest_policy_yaml

    path = DATA / "ibm_hr_attrition_full.csv"
    result = scan_stream(TableStream(path), batch_rows=200)
    assert result.column("MonthlyRate").entity == "UNIQUE_NUMBER"
    text = suggest_policy_yaml(result)  # no table: the counts the scan kept
    kept = re.search(r"#   ([\d,]+) of ([\d,]+) records kept", text)
    assert kept is not None
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    released = anonymize_stream(
        TableStream(path), str(policy), tmp_path / "out.csv", "csv", batch_rows=200
    )
    assert released.certificate.rows_out == int(kept.group(1).replace(",", ""))
    assert released.certificate.after.k >= 5
