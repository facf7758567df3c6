"""The Dask backend on a real ``dask.distributed`` LocalCluster of worker processes: the release
equals the in-memory one row for row (and the streamed one), keyed pseudonyms are the same
whichever backend made them, a worker killed mid-job changes nothing, ``check`` and the DP
statistics add up partitions exactly, and the written parts verify."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import distributed
import numpy as np
import pytest

import veil
from veil.cli import main
from veil.exceptions import ParameterError
from veil.hierarchy import load_hierarchies
from veil.io import TableStream, content_sha256, read, write
from veil.privacy import anonymize, anonymize_stream, check, verify_files
from veil.privacy._dask import anonymize_dask, check_dask

ADULT = Path(__file__).parents[1] / "data" / "arx_adult"
KEY = "dask-test-key-0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes (one thread each), as a cluster's machines would run them; the
    pseudonymization key is in their environment as it would be in a deployment's."""
    previous = os.environ.get("VEIL_KEY")
    os.environ["VEIL_KEY"] = KEY
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()
    if previous is None:
        os.environ.pop("VEIL_KEY", None)
    else:
        os.environ["VEIL_KEY"] = previous


def _policy(**extra: Any) -> dict[str, Any]:
    return {
        "privacy": {"models": [{"model": "k_anonymity", "k": 5}], "max_suppression": 0.04},
        "keep_order": True,
        "columns": {"salary-class": {"role": "insensitive"}},
        **extra,
    }


def _plain(certificate: dict[str, Any]) -> dict[str, Any]:
    """A certificate without what names the run or the parts (time, hashes of a partitioned
    input and release)."""
    for key in (
        "created",
        "source_fingerprint",
        "release_fingerprint",
        "release_sha256",
        "release_parts",
    ):
        certificate.pop(key)
    certificate["search"].pop("seconds")
    return certificate


def test_a_cluster_release_is_the_in_memory_release_row_for_row(
    client: Any, adult: Path, tmp_path: Path
) -> None:
    table = read(adult / "adult.csv")
    hierarchies = load_hierarchies(adult, "adult")
    memory = anonymize(table, _policy(), hierarchies=hierarchies)
    frame = dd.from_pandas(table, npartitions=9)
    released = anonymize_dask(frame, _policy(), hierarchies=hierarchies)
    assert released.data.npartitions == 9
    held = released.data.compute()
    assert content_sha256(held) == content_sha256(memory.data)  # every cell, in order
    assert _plain(released.certificate.to_dict()) == _plain(memory.certificate.to_dict())
    assert released.certificate.release_parts == 9
    # written one file per partition; the parts verify, file by file
    folder = released.to_parquet(tmp_path / "release")
    assert sorted(p.name for p in folder.iterdir())[:2] == [
        "part-000000.parquet",
        "part-000001.parquet",
    ]
    verification = verify_files(TableStream(str(folder)), released.certificate.to_dict())
    assert verification.ok, verification.claims
    # the public entry point takes a Dask DataFrame too
    again = veil.anonymize(frame, _policy(), hierarchies=hierarchies)
    assert again.certificate.release_sha256 == released.certificate.release_sha256


def test_the_cluster_shuffle_is_seeded_and_a_killed_worker_changes_nothing(
    client: Any, adult: Path
) -> None:
    """Rows leave their partitions (a shuffle by a random key per row, seeded per partition);
    a worker killed with SIGKILL while tasks run is restarted by its nanny, and the release is
    the same one."""
    table = read(adult / "adult.csv")
    hierarchies = load_hierarchies(adult, "adult")
    policy = _policy(keep_order=False, random_state=11)
    frame = dd.from_pandas(table, npartitions=24)
    first = anonymize_dask(frame, policy, hierarchies=hierarchies)
    memory = anonymize(table, policy, hierarchies=hierarchies)
    columns = list(memory.data.columns)
    held = first.data.compute()
    assert content_sha256(held.sort_values(columns).reset_index(drop=True)) == content_sha256(
        memory.data.sort_values(columns).reset_index(drop=True)
    )
    assert (
        held.reset_index(drop=True).to_numpy()
        != memory.data.sort_index().reset_index(drop=True).to_numpy()
    ).any(axis=1).mean() > 0.9  # the order says nothing

    killed: dict[str, Any] = {}

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = client.processing()
            if any(busy.values()):
                pids = client.run(os.getpid)
                address = next(a for a, tasks in busy.items() if tasks)
                killed["tasks"] = len(busy[address])
                os.kill(pids[address], signal.SIGKILL)
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_one)
    killer.start()
    second = anonymize_dask(frame, policy, hierarchies=hierarchies)
    killer.join()
    assert killed.get("tasks", 0) >= 1  # a worker died while it had work
    assert second.certificate.release_sha256 == first.certificate.release_sha256
    client.wait_for_workers(2, timeout=60)  # the nanny started it again


def test_keyed_pseudonyms_are_the_same_on_every_backend(client: Any, tmp_path: Path) -> None:
    """The demo's identifiers pseudonymized in memory, streamed and on the cluster (whose
    workers read the key from their own environment): the same tokens for the same rows."""
    from veil.data import sample

    source = tmp_path / "insurance.csv"
    write(sample(), source)
    table = read(source)
    policy = {
        "keep_order": True,
        "columns": {
            "id": {"role": "identifier", "steps": [{"pseudonymize": {}}]},
            "ID_number": {
                "role": "identifier",
                "steps": [{"pseudonymize": {"format": "preserve"}}],
            },
            "Tax_id": {"role": "identifier", "steps": [{"pseudonymize": {"format": "preserve"}}]},
            "Notes": {"role": "identifier", "steps": [{"drop": {}}]},
        },
        "unlisted": "drop",
    }
    memory = anonymize(table, policy).data.reset_index(drop=True)
    anonymize_stream(TableStream(str(source)), policy, tmp_path / "s.csv", "csv", batch_rows=97)
    streamed = read(tmp_path / "s.csv")
    clustered = anonymize_dask(dd.from_pandas(table, npartitions=5), policy).data.compute()
    for column in ("id", "ID_number", "Tax_id"):
        assert memory[column].astype(str).tolist() == streamed[column].astype(str).tolist()
        assert (
            memory[column].astype(str).tolist()
            == clustered[column].astype(str).reset_index(drop=True).tolist()
        )
        assert not set(memory[column].astype(str)) & set(table[column].astype(str))


def test_check_on_the_cluster_counts_what_memory_counts(client: Any, adult: Path) -> None:
    table = read(adult / "adult.csv")
    quasi = ["sex", "race", "marital-status", "education", "workclass"]
    goals = {"k": 3, "l": 2, "t": 0.4, "population": 3e7}
    memory = check(table, quasi, sensitive="occupation", **goals)
    clustered = check_dask(
        dd.from_pandas(table, npartitions=6), quasi, sensitive="occupation", **goals
    )
    assert clustered.to_dict() == memory.to_dict()


def test_dp_statistics_add_partitions_exactly_and_spend_once(
    client: Any, adult: Path, tmp_path: Path
) -> None:
    from veil.dp import Accountant, Budget, stats
    from veil.dp._dask import _summed

    table = read(adult / "adult.csv")
    frame = dd.from_pandas(table, npartitions=7)
    ledger = Accountant.create(tmp_path / "ledger.db", Budget(40.0))
    # the exact aggregate under the noise is the in-memory one, to the last fixed-point step
    total, values, step, _ = _summed(frame, "age", (17.0, 90.0))
    whole = stats.fixed_point_sum(table["age"].to_numpy(dtype=float), (17.0, 90.0))
    assert (total, values, step) == (whole[0], len(table), whole[1])
    counted = stats.count(frame, epsilon=10.0, accountant=ledger)
    assert abs(counted.value - len(table)) < 10 * counted.error95
    average = stats.mean(frame, "age", bounds=(17, 90), epsilon=10.0, accountant=ledger)
    assert abs(average.value - table["age"].mean()) < 0.5
    summed = stats.sum(frame, "age", bounds=(17, 90), epsilon=10.0, accountant=ledger)
    assert abs(summed.value - table["age"].sum()) < 10 * summed.error95
    bars = stats.histogram(
        frame, "sex", categories=["Male", "Female"], epsilon=10.0, accountant=ledger
    )
    truth = table["sex"].value_counts()
    assert abs(bars.value["Male"] - truth["Male"]) < 10 * bars.error95
    entries = ledger.entries()
    assert [e.what for e in entries] == ["count()", "mean(age)", "sum(age)", "histogram(sex)"]
    assert sum(e.epsilon for e in entries) == pytest.approx(40.0)
    with pytest.raises(ParameterError, match="needs --bounds"):
        stats.mean(frame, "age", epsilon=0.1, accountant=ledger)
    assert len(ledger.entries()) == 4  # refused before spending


def test_the_command_runs_on_a_cluster_and_its_parts_verify(
    client: Any, adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--backend dask --scheduler ADDRESS`` on the running cluster's scheduler (as a user
    points veil at theirs), then ``--workers 1`` on a LocalCluster of its own."""
    table = read(adult / "adult.csv")
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[rows].to_parquet(parts / f"adult-{i}.parquet", index=False)
    for tree in adult.glob("adult_hierarchy_*.csv"):
        shutil.copy(tree, tmp_path / tree.name.replace("adult_", "adult-0_"))
    out = tmp_path / "release"
    args = [
        "anonymize",
        str(parts / "*.parquet"),
        "-k",
        "5",
        "--max-suppression",
        "0.04",
        "--hierarchies",
        str(tmp_path),
        "--backend",
        "dask",
        "--format",
        "json",
    ]
    code = main([*args, "-o", str(tmp_path / "remote"), "--scheduler", client.scheduler.address])
    assert code == 0
    remote = json.loads(capsys.readouterr().out)
    code = main(
        [*args, "-o", str(out), "--certificate", str(tmp_path / "c.json"), "--workers", "1"]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert remote["release_sha256"] != printed["release_sha256"]  # a fresh shuffle each run
    assert remote["rows_out"] == printed["rows_out"]
    assert printed["release_parts"] == len(list(out.iterdir())) >= 3
    assert main(["verify", str(out), "--certificate", str(tmp_path / "c.json")]) == 0
    (out / "part-000001.parquet").unlink()  # a part missing: caught
    assert main(["verify", str(out), "--certificate", str(tmp_path / "c.json")]) != 0


def test_the_scan_on_the_cluster_is_the_scan_in_memory(
    client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each partition profiled and confirmed on a worker: the same sample, verdicts and risk as
    the scan in memory; and ``veil scan --backend dask`` on the running cluster."""
    import veil
    import veil.data

    path = Path(veil.data.__file__).parent / "kenya_insurance.csv"
    table = read(path)
    whole = veil.scan(table).to_dict()
    assert veil.scan(dd.from_pandas(table, npartitions=7)).to_dict() == whole
    table.to_parquet(tmp_path / "clients.parquet", row_group_size=150)
    args = ["scan", str(tmp_path / "clients.parquet"), "--backend", "dask", "--format", "json"]
    suggested = tmp_path / "policy.yaml"
    assert (
        main([*args, "--scheduler", client.scheduler.address, "--suggest-policy", str(suggested)])
        == 0
    )
    assert json.loads(capsys.readouterr().out) == whole
    # the suggestion fitted on the counts the workers made: the one fitted on the table
    from veil.privacy.suggest import suggest_policy_yaml

    expected = suggest_policy_yaml(veil.scan(table), table, source="clients.parquet")
    # the same columns and the same search (the counts hold no sensitive value: no l)
    assert suggested.read_text().startswith(expected.split("# the goal", 1)[0])
    assert "records kept" in suggested.read_text()


def test_generalized_values_leave_the_free_text_on_the_cluster_too(client: Any) -> None:
    """Partitions read from separate files repeat their index labels; the release on the
    workers still replaces a generalized county in the notes, and counts it."""
    import re

    import pandas as pd

    from tests.test_first_try import _notes_table
    from veil.scan.recognizers.ke.counties import COUNTY_PROVINCE

    table = _notes_table(400)
    parts = [table.iloc[i : i + 100].reset_index(drop=True) for i in range(0, 400, 100)]
    frame = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    policy = {
        "columns": {
            "county": {"role": "quasi_identifier"},
            "occupation": {"role": "quasi_identifier"},
            "gender": {"role": "quasi_identifier"},
            "notes": {"role": "insensitive"},
        },
        "privacy": {"k": 5, "max_levels": {"gender": 0}},
    }
    release = anonymize_dask(frame, policy)
    notes = pd.Series(release.data.compute()["notes"])
    for county in COUNTY_PROVINCE:
        assert not notes.str.contains(rf"\b{re.escape(county)}\b").any(), county
    counted = {s.name: s.counts for s in release.certificate.steps}
    assert counted["scrub_text"]["county"] == len(notes)


@pytest.mark.parametrize(("alike", "keys"), [(True, 2**63), (False, 2**63), (True, 60)])
def test_a_bucket_s_pieces_join_in_the_order_of_their_keys(
    tmp_path: Path, alike: bool, keys: int
) -> None:
    """A bucket's pieces from several partitions (Arrow, text coded in some and not in others;
    or, ``alike`` False, partitions whose DataFrames differed in a dtype) are joined in the
    order of their random keys: the part holds the rows the DataFrames sorted by key hold,
    stably (keys drawn from 60 values repeat: rows of one key keep the pieces' order)."""
    import pandas as pd
    import pyarrow as pa

    from veil.io import ContentHash
    from veil.io import _pieces as pieces
    from veil.privacy._dask import _KEY, _PIECES, _Gather

    rng = np.random.default_rng(4)
    frames = []
    for i, rows in enumerate([300, 40, 200]):
        frame = pd.DataFrame(
            {
                "county": pd.array(rng.choice(["Kisumu", "Nyeri"], rows), dtype="str"),
                "visits": rng.integers(0, 9, rows),
                _KEY: rng.integers(0, keys, rows, dtype=np.uint64),
            }
        )
        if i == 1:
            frame["county"] = pd.array([f"c{j}" for j in range(rows)], dtype="str")  # many
            if not alike:
                frame["visits"] = frame["visits"].astype("Int64")
        frames.append(frame)
    schema = pa.Table.from_pandas(frames[0].drop(columns=_KEY), preserve_index=False).schema
    keyed = schema.append(pa.field(_KEY, pa.uint64()))
    folder = tmp_path / _PIECES
    folder.mkdir(parents=True)
    for i, frame in enumerate(frames):  # each partition's file: all its rows to bucket 0
        table = pa.Table.from_pandas(frame, schema=keyed, preserve_index=False)
        pieces.write_buckets(pieces.coded(table), [len(frame)], folder / f"{i:06d}.arrow")
    found = [pieces.read_bucket(p, 0) for p in sorted(folder.iterdir())]
    joined = pieces.joined([t for t in found if t is not None])
    assert (joined is not None) is alike  # the DataFrame path is the one taken otherwise
    columns = ["county", "visits"]
    _, digest, rows, _ = _Gather(tmp_path, schema, columns, [])(0)
    want = pd.concat(frames, ignore_index=True).sort_values(_KEY, kind="stable")[columns]
    assert rows == len(want)
    assert digest == ContentHash(columns).update(want).hexdigest()


def test_partition_lengths_come_from_parquet_metadata_and_equal_the_rows(tmp_path: Path) -> None:
    """A Parquet file's partitions (its row groups) are counted from its metadata, with no
    task run (a scheduler that fails on any); a frame whose rows only a task knows (a filter)
    is counted on the workers. Both equal the rows each partition holds."""
    import dask
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from veil.io import dask_frame
    from veil.io._folds import partition_lengths

    path = tmp_path / "groups.parquet"
    table = pa.Table.from_pandas(pd.DataFrame({"age": np.arange(1_000) % 90}))
    pq.write_table(table, path, row_group_size=300)
    frame = dask_frame(str(path))

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a task ran")

    with dask.config.set(scheduler=refuse):
        assert partition_lengths(frame) == [300, 300, 300, 100]
    filtered = frame[frame.age < 30]
    with dask.config.set(scheduler="synchronous"):
        counted = [len(filtered.partitions[i].compute()) for i in range(filtered.npartitions)]
        assert partition_lengths(filtered) == counted
    assert sum(counted) == int((np.arange(1_000) % 90 < 30).sum())


@pytest.mark.parametrize("texts_type", ["large_string", "string"])
def test_a_partition_s_generalized_columns_go_to_the_buckets_as_codes(
    tmp_path: Path, texts_type: str
) -> None:
    """A partition's release leaves its generalized columns as their codes (an Arrow
    dictionary of the labels) for the buckets' pieces: each part the buckets make is the part
    the same rows made as texts give, and a column whose texts the release's schema types
    otherwise is made texts first."""
    import pandas as pd
    import pyarrow as pa

    from veil.io import _pieces as pieces
    from veil.privacy._dask import _Gather, _Scatter

    rng = np.random.default_rng(8)
    labels = pa.array(["[20-29]", "*", "[30-39]"], pa.large_string())
    codes = rng.integers(0, 3, 500).astype(np.int32)
    coded = pa.DictionaryArray.from_arrays(pa.array(codes), labels)
    out = pd.DataFrame(
        {
            "age": pd.Series(pd.arrays.ArrowExtensionArray(coded)),
            "visits": pd.array(rng.integers(0, 9, 500), dtype="Int64"),
            "stays": pd.array(rng.integers(0, 4, 500), dtype="int64[pyarrow]"),  # Arrow's too
        }
    )
    texts = pieces.with_texts(out)
    schema = pa.Table.from_pandas(texts, preserve_index=False).schema.remove_metadata()
    schema = schema.set(0, schema.field(0).with_type(getattr(pa, texts_type)()))

    class Produce:
        def __init__(self, frame: pd.DataFrame) -> None:
            self.frame = frame

        def __call__(self, part: pd.DataFrame) -> tuple[pd.DataFrame, list[Any]]:
            return pieces.with_texts(self.frame), []

        def coded(self, part: pd.DataFrame, *, texts: bool) -> tuple[Any, ...]:
            return (self.frame if not texts else pieces.with_texts(self.frame)), [], {}

    parts = {}
    for name, frame in (("coded", out), ("texts", texts)):
        folder = tmp_path / name
        folder.mkdir()
        columns = ["age", "visits", "stays"]
        scatter = _Scatter(Produce(frame), folder, 3, 7, schema, columns, ["age"])
        scatter(out.iloc[:0], 0)
        piece = next((folder / ".pieces").glob("*.arrow"))
        sent = [pieces.read_bucket(piece, b) for b in range(3)]
        age = next(t for t in sent if t is not None).column("age").chunk(0)
        # the codes as given (their labels in the hierarchy's order) only where the schema
        # types the texts as the labels are; coded again, as first seen, otherwise
        as_given = age.dictionary.to_pylist() == labels.to_pylist()
        assert as_given is (name == "coded" and texts_type == "large_string")
        gather = _Gather(folder, schema, columns, ["age"])
        parts[name] = [gather(b)[1:3] for b in range(3)]
        written = pd.concat(pd.read_parquet(p) for p in sorted(folder.glob("part-*.parquet")))
        assert written["visits"].dtype == "Int64"  # pandas' dtypes come back
    assert parts["coded"] == parts["texts"]
    assert sum(rows for _, rows in parts["coded"]) == 500


#: Real tables the cluster's reading was not written for (provenance in tests/data/README.md).
REAL_TABLES = [
    "ke_claims.csv",
    "heart.csv",
    "ibm_hr_attrition.csv",
    "organs_vitals.csv",
    "surveys/CPS1985.csv.gz",
    "surveys/acs12.csv.gz",
    "arx_fars/fars_int.csv.gz",
]


def _typed(rows: int = 2_500) -> Any:
    """A table of every kind of column ``parquet_parts`` reads itself: texts with missing
    values and empty ones, integers, floats with NaN, truth values, timestamps with and without
    a time zone, and dates."""
    import datetime

    import pandas as pd

    rng = np.random.default_rng(5)
    texts = np.array(["Nairobi", "Kisumu", "", "Nyeri", "Mombasa"], dtype=object)
    text = texts[rng.integers(0, 5, rows)]
    text[rng.random(rows) < 0.1] = None
    stamps = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 10**6, rows), "s")
    return pd.DataFrame(
        {
            "county": pd.Series(text, dtype="str"),
            "age": rng.integers(18, 90, rows),
            "income": np.where(rng.random(rows) < 0.05, np.nan, rng.normal(5e4, 1e4, rows)),
            "insured": rng.random(rows) < 0.5,
            "seen": stamps,
            "seen_utc": stamps.tz_localize("UTC"),
            "born": [
                datetime.date(1950, 1, 1) + datetime.timedelta(days=int(d))
                for d in rng.integers(0, 20_000, rows)
            ],
        }
    )


@pytest.mark.parametrize("name", [*REAL_TABLES, "typed"])
def test_parquet_parts_are_the_partitions_dask_reads(name: str, tmp_path: Path) -> None:
    """Each row group read by ``ParquetParts`` (with its texts' dictionaries) is the partition
    Dask's own ``read_parquet`` makes of it: the same values, dtypes and index, whole and for
    some columns in another order than the file's; so are the lengths and the first rows."""
    import dask
    import pandas as pd

    from veil.io import Source
    from veil.io._folds import dask_frame, parquet_parts, partition_lengths

    table = _typed() if name == "typed" else read(_plain_table(name, tmp_path))
    path = tmp_path / "table.parquet"
    table.to_parquet(path, index=False, row_group_size=len(table) // 3 + 1)
    chosen = list(reversed(table.columns))[:4]
    for columns in (None, chosen):
        parts = parquet_parts(str(path), columns)
        assert parts is not None
        theirs = dask_frame(str(path), columns=columns)
        assert parts.npartitions == theirs.npartitions == 3
        assert list(parts.lengths) == partition_lengths(theirs)
        assert parts.columns == [str(c) for c in theirs.columns]
        with dask.config.set(scheduler="synchronous"):
            for i, piece in enumerate(parts.pieces):
                pd.testing.assert_frame_equal(parts.reader(piece), theirs.partitions[i].compute())
            rows = parts.lengths[0] + 5  # across two partitions
            pd.testing.assert_frame_equal(parts.head(rows), theirs.head(rows, npartitions=2))
    assert isinstance(Source(path).dask(), type(parts))  # the command's way to a cluster


def _plain_table(name: str, folder: Path) -> Path:
    import gzip

    source = Path(__file__).parents[1] / "data" / name
    if source.suffix != ".gz":
        return source
    target = folder / source.stem
    target.write_bytes(gzip.decompress(source.read_bytes()))
    return target


def test_parquet_parts_take_dask_s_order_of_files_and_leave_it_the_rest(tmp_path: Path) -> None:
    """A folder or a glob of files is read in Dask's order (part.2 before part.10); where
    Dask's reading may differ (a dictionary column, a decimal, a stored index, a folder with
    other files), the files stay a Dask DataFrame, which reads them as before."""
    import decimal

    import dask
    import pandas as pd

    from veil._lazy import is_dask
    from veil.io import Source
    from veil.io._folds import dask_frame, parquet_parts

    table = _typed(600)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, rows in zip((1, 2, 10), np.array_split(np.arange(600), 3), strict=True):
        table.iloc[rows].to_parquet(folder / f"part.{i}.parquet", index=False)
    for source in (str(folder), str(folder / "part.*.parquet")):
        parts = parquet_parts(source)
        assert parts is not None
        assert [Path(p).name for p, _ in parts.pieces] == [
            "part.1.parquet",
            "part.2.parquet",
            "part.10.parquet",
        ]
        with dask.config.set(scheduler="synchronous"):
            read_whole = pd.concat([parts.reader(p) for p in parts.pieces])
            pd.testing.assert_frame_equal(read_whole, dask_frame(source).compute())

    odd = {
        "dictionary": table.assign(county=table["county"].astype("category")),
        "decimal": table.assign(price=[decimal.Decimal("1.10")] * len(table)),
        "index": table.set_index("age"),
    }
    for kind, frame in odd.items():
        path = tmp_path / f"{kind}.parquet"
        frame.to_parquet(path)
        assert parquet_parts(str(path)) is None, kind
        assert is_dask(Source(path).dask()), kind
    (folder / "_SUCCESS").write_text("")
    assert parquet_parts(str(folder)) is None


def test_a_fold_over_parquet_parts_codes_no_text_and_keeps_no_code(tmp_path: Path) -> None:
    """The task that reads a partition keeps its text columns' codes (from the file's
    dictionaries) for the fold's function, as a stream's batches do: each code indexes its
    row's text. Once the task is done, no code is kept."""
    import dask

    from veil.io._content import _KNOWN, known_codes
    from veil.io._folds import Partitions, parquet_parts
    from veil.progress import as_progress

    table = _typed(3_000)
    path = tmp_path / "t.parquet"
    table.to_parquet(path, index=False, row_group_size=1_000)
    parts = parquet_parts(str(path))
    assert parts is not None

    def coded(batch: Any, first: int) -> list[Any]:
        kept = known_codes(batch["county"])
        assert kept is not None  # not coded again: the file's own codes
        codes, texts = kept
        held = batch["county"].to_numpy(dtype=object)
        made = np.array([None if c < 0 else texts[c] for c in codes], dtype=object)
        return [bool((made == held)[batch["county"].notna().to_numpy()].all()), first]

    with dask.config.set(scheduler="synchronous"):
        found = Partitions(parts, as_progress(None)).fold("codes", coded, list.__add__, [])
    assert found == [True, 0, True, 1_000, True, 2_000]  # each partition with its first row
    assert not _KNOWN.entries


def test_a_release_from_parquet_parts_is_the_one_from_dask_s_reading(
    client: Any, tmp_path: Path
) -> None:
    """The demo table with keyed pseudonyms, a drop, a generalization by the search and a
    seeded shuffle, released on the cluster from ``ParquetParts`` and from Dask's own reading
    of the same file: the same release, cell for cell, and the same certificate."""
    from veil.data import sample
    from veil.io._folds import dask_frame, parquet_parts

    path = tmp_path / "insurance.parquet"
    sample().to_parquet(path, index=False, row_group_size=120)
    policy = {
        "random_state": 5,
        "columns": {
            "id": {"role": "identifier", "steps": [{"pseudonymize": {}}]},
            "ID_number": {
                "role": "identifier",
                "steps": [{"pseudonymize": {"format": "preserve"}}],
            },
            "Notes": {"role": "identifier", "steps": [{"drop": {}}]},
        },
        "privacy": {"models": [{"model": "k_anonymity", "k": 3}], "max_suppression": 0.1},
    }
    parts = parquet_parts(str(path))
    assert parts is not None
    assert parts.npartitions >= 3
    ours = anonymize_dask(parts, policy)
    theirs = anonymize_dask(dask_frame(str(path)), policy)
    timeless = []
    for certificate in (ours.certificate, theirs.certificate):
        made = certificate.to_dict()
        made.pop("created")
        made["search"].pop("seconds")
        timeless.append(made)
    assert timeless[0] == timeless[1]
    assert ours.certificate.release_sha256 == theirs.certificate.release_sha256
    assert ours.certificate.rows_out < len(sample())  # the search withheld some


def test_tasks_come_in_order_with_a_few_at_a_time_on_the_cluster(client: Any) -> None:
    """``in_turn`` keeps at most ``WAVE`` tasks submitted or held (a worker's memory), yields
    their results in order however the workers finish them, and leaves nothing behind when its
    caller stops early."""
    import gc
    import random

    import dask

    from veil.io._folds import WAVE, in_turn

    def slow(i: int) -> int:
        time.sleep(random.Random(i).random() / 50)
        return i

    before = len(client.futures)
    tasks = [dask.delayed(slow, pure=True)(i) for i in range(3 * WAVE + 5)]
    seen = []
    for result in in_turn(tasks):
        # the following ones, and the one just taken until the client lets its future go
        assert len(client.futures) - before <= WAVE + 1
        seen.append(result)
    assert seen == list(range(3 * WAVE + 5))
    early = in_turn([dask.delayed(slow, pure=True)(i + 1_000) for i in range(3 * WAVE)])
    assert [next(early) for _ in range(3)] == [1_000, 1_001, 1_002]
    early.close()
    del early
    gc.collect()
    deadline = time.monotonic() + 10
    while len(client.futures) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(client.futures) == before


def test_an_empty_row_group_is_the_empty_partition_dask_reads(tmp_path: Path) -> None:
    """A row group of no rows (a writer given an empty batch first) is read as Dask reads it:
    its columns, typed, no row; and a head of no rows, or across it, is the first rows of
    Dask's partitions (Dask's own ``head(7, npartitions=2)`` of this file fails: it drops the
    empty partition, then finds one partition where it was asked for two)."""
    import dask
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from veil.io._folds import dask_frame, parquet_parts

    table = pa.Table.from_pandas(_typed(50), preserve_index=False)
    path = tmp_path / "t.parquet"
    with pq.ParquetWriter(path, table.schema) as writer:
        writer.write_table(table.slice(0, 0))
        writer.write_table(table)
    parts = parquet_parts(str(path), ["born", "county", "age"])
    assert parts is not None
    assert list(parts.lengths) == [0, 50]
    theirs = dask_frame(str(path), columns=["born", "county", "age"])
    with dask.config.set(scheduler="synchronous"):
        read = [theirs.partitions[i].compute() for i in range(theirs.npartitions)]
    for piece, partition in zip(parts.pieces, read, strict=True):
        pd.testing.assert_frame_equal(parts.reader(piece), partition)
    for rows in (0, 7):
        pd.testing.assert_frame_equal(parts.head(rows), pd.concat(read).head(rows))
    # a user's own Dask DataFrame of that file: its first rows as well
    from veil.io._folds import Partitions
    from veil.progress import as_progress

    with dask.config.set(scheduler="synchronous"):
        head = Partitions(theirs, as_progress(None)).head(7)
    pd.testing.assert_frame_equal(head.reset_index(drop=True), read[1].head(7))
