"""One API over every source and engine: ``veil.anonymize``, ``veil.check``, ``veil.scan`` and
``veil.verify`` take a DataFrame, a Dask DataFrame, files or a SQL URL with ``engine=``; the
three engines give the same release row for row, and what an engine cannot do is refused in one
line, from Python as from the command line."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import distributed
import pandas as pd
import pytest
import sqlalchemy as sa

import veil
from veil.exceptions import ParameterError
from veil.io import Source, content_sha256

ADULT = Path(__file__).parent / "data" / "arx_adult"
POLICY = {
    "privacy": {"models": [{"model": "k_anonymity", "k": 5}], "max_suppression": 0.04},
    "keep_order": True,
    "columns": {"salary-class": {"role": "insensitive"}},
}
QIS = ["age", "sex", "race", "marital-status"]

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes, as a cluster's machines would run them."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


@pytest.fixture(scope="module")
def adult_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("adult-parquet")
    frame = pd.read_csv(ADULT / "adult.csv.gz", sep=";")
    frame.to_parquet(folder / "adult.parquet", index=False, row_group_size=4_000)
    for tree in ADULT.glob("adult_hierarchy_*.csv"):
        (folder / tree.name).write_bytes(tree.read_bytes())
    return folder


def test_the_three_engines_give_the_same_release_row_for_row(
    client: Any, adult_parquet: Path, tmp_path: Path
) -> None:
    data = adult_parquet / "adult.parquet"
    memory = veil.anonymize(data, POLICY, engine="memory", hierarchies=adult_parquet)
    streamed = veil.anonymize(
        data, POLICY, engine="stream", hierarchies=adult_parquet, batch_rows=3_001
    )
    clustered = veil.anonymize(data, POLICY, engine="dask", hierarchies=adult_parquet)
    assert type(memory).__name__ == "Release"
    assert type(streamed).__name__ == "StreamedRelease"
    assert type(clustered).__name__ == "DaskRelease"
    rows = len(memory.data)
    assert 25_000 < rows < 30_162  # some withheld: the search ran, and it was not a no-op
    expected = content_sha256(memory.data.reset_index(drop=True))
    assert content_sha256(streamed.data) == expected
    assert content_sha256(clustered.data.compute().reset_index(drop=True)) == expected
    for other in (streamed, clustered):
        assert other.certificate.search["levels"] == memory.certificate.search["levels"]
        assert other.certificate.rows_out == memory.certificate.rows_out
    # the streamed release was a private temporary file until it is given a name
    assert streamed.path is not None
    assert streamed.path.parent.name.startswith("veil-release-")
    moved = streamed.to_file(tmp_path / "release.parquet")
    assert moved.exists()
    assert not streamed.path.parent.name.startswith("veil-release-")
    assert veil.verify(moved, streamed.certificate).ok
    assert veil.verify(moved, streamed.certificate, engine="stream").ok


def test_check_takes_a_dask_frame_a_file_and_a_frame_alike(
    client: Any, adult_parquet: Path
) -> None:
    data = adult_parquet / "adult.parquet"
    frame = pd.read_parquet(data)
    measured = {
        "frame": veil.check(frame, QIS, sensitive="salary-class", k=2),
        "dask": veil.check(
            dd.from_pandas(frame, npartitions=5), QIS, sensitive="salary-class", k=2
        ),
        "file, stream": veil.check(data, QIS, sensitive="salary-class", k=2, engine="stream"),
        "file, dask": veil.check(data, QIS, sensitive="salary-class", k=2, engine="dask"),
    }
    first = measured["frame"].to_dict()
    assert first["k"] == 1
    assert first["failed"] == ["k >= 2"]
    for name, result in measured.items():
        assert result.to_dict() == first, name


def test_a_cluster_reads_a_csv_with_its_own_delimiter_and_refuses_a_packed_one(
    client: Any, tmp_path: Path
) -> None:
    """adult as downloaded is delimited by ';', and a .tsv by tabs: the cluster reads them
    with the delimiter ``read`` detects (it read one column, or took the .tsv for Parquet: an
    internal error). A compressed file, which cannot be cut into blocks, is refused in one
    line."""
    import gzip

    from veil.exceptions import InputError

    text = gzip.decompress((ADULT / "adult.csv.gz").read_bytes()).decode()
    semicolons = tmp_path / "adult.csv"
    semicolons.write_text(text)
    tabs = tmp_path / "adult.tsv"
    tabs.write_text(text.replace(";", "\t"))
    expected = veil.check(semicolons, QIS, sensitive="salary-class", k=2).to_dict()
    for source in (semicolons, tabs):
        clustered = veil.check(source, QIS, sensitive="salary-class", k=2, engine="dask")
        assert clustered.to_dict() == expected, source.name
    with pytest.raises(
        InputError, match="cannot cut into blocks for its workers; give --streaming"
    ):
        veil.check(ADULT / "adult.csv.gz", QIS, k=2, engine="dask")
    # Dask guessed each column's type from a sample and stopped with an internal error when a
    # later block held a value that did not fit it: the cluster now types as the stream does
    mixed = tmp_path / "ages.csv"
    mixed.write_text("age,county\n" + "".join(f"{20 + i % 60},Nyeri\n" for i in range(60_000)))
    with mixed.open("a") as tail:
        tail.write("n/a,Nyeri\nforty,Nyeri\n")
    streamed = veil.check(mixed, ["age", "county"], k=2, engine="stream").to_dict()
    assert veil.check(mixed, ["age", "county"], k=2, engine="dask").to_dict() == streamed
    assert veil.check(mixed, ["age", "county"], k=2).to_dict() == streamed


def test_scan_reads_a_postgresql_table_by_its_url(postgres_url: str) -> None:
    rows = pd.DataFrame(
        {
            "national_id": [f"{20000000 + i}" for i in range(60)],
            "county": ["Nairobi", "Kisumu", "Nakuru"] * 20,
            "age": list(range(20, 80)),
        }
    )
    with sa.create_engine(postgres_url).begin() as connection:
        rows.to_sql("engine_clients", connection, index=False, if_exists="replace")
    found = veil.scan(postgres_url, table="engine_clients")
    assert found.rows == 60
    assert found.column("national_id").role.value == "identifier"
    measured = veil.check(postgres_url, ["county"], table="engine_clients", k=2)
    assert measured.k == 20
    with pytest.raises(ParameterError, match="read whole"):
        veil.check(postgres_url, ["county"], table="engine_clients", engine="stream")


def test_a_database_s_password_is_never_printed(
    postgres_url: str, tmp_path: Path, key_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The URL a command was given, with a password (the tests' server trusts any): the
    scan's suggestion, its printed next command, a check that fails and the policy it wrote
    never show the password. Before, the scan printed the URL as given in the command it
    suggests."""
    from veil.cli import main

    rows = pd.DataFrame({"county": ["Nairobi", "Kisumu"] * 20, "age": list(range(20, 60))})
    with sa.create_engine(postgres_url).begin() as connection:
        rows.to_sql("secret_clients", connection, index=False, if_exists="replace")
    secret = "s3cret-word"
    url = sa.engine.make_url(postgres_url).set(password=secret)
    given = url.render_as_string(hide_password=False)
    assert secret in given
    policy = tmp_path / "p.yaml"
    table = ["--table", "secret_clients"]
    said = []
    for args in (
        ["scan", given, *table, "--suggest-policy", str(policy)],
        ["check", given, *table, "-q", "county,age", "-k", "5"],
    ):
        code = main(args)
        captured = capsys.readouterr()
        said.append(captured.out + captured.err)
        assert code == (0 if args[0] == "scan" else 1), said[-1]
    assert "veil anonymize postgresql+pg8000://postgres:***@" in said[0]
    assert "does not meet k >= 5" in said[1]
    for text in [*said, policy.read_text()]:
        assert secret not in text


def test_a_query_naming_a_person_is_not_written_into_the_policy(
    postgres_url: str, tmp_path: Path, key_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scan writes how it read the table into the policy it suggests, a query too; one
    that names a person (their phone number) is left out, saying so, and the policy with the
    query given again releases what the query selects. A query naming no one is kept."""
    from veil.cli import main

    rows = pd.DataFrame(
        {
            "phone": [f"+2547{12345600 + i}" for i in range(40)],
            "county": ["Nairobi", "Kisumu"] * 20,
            "age": [30 + i % 4 for i in range(40)],
        }
    )
    with sa.create_engine(postgres_url).begin() as connection:
        rows.to_sql("query_clients", connection, index=False, if_exists="replace")
    person = "+254712345611"
    named = f"SELECT county, age FROM query_clients WHERE phone <> '{person}'"
    policy = tmp_path / "p.yaml"
    assert main(["scan", postgres_url, "--query", named, "--suggest-policy", str(policy)]) == 0
    said = capsys.readouterr().out
    written = policy.read_text()
    assert person not in written
    assert "the query the scan read holds a phone number" in written
    assert "--query ...  (your query: it holds a phone number" in said
    out = tmp_path / "release.csv"
    args = ["anonymize", postgres_url, "--policy", str(policy), "-o", str(out)]
    assert main([*args, "--query", named]) == 0
    released = pd.read_csv(out)
    assert 0 < len(released) <= 39  # the query's 39 rows, less any the policy suppressed
    assert list(released.columns) == ["county", "age"]
    plain = "SELECT county, age FROM query_clients WHERE age > 30"
    assert (
        main(["scan", postgres_url, "--query", plain, "--suggest-policy", str(policy), "--force"])
        == 0
    )
    assert plain in policy.read_text()


def test_what_an_engine_cannot_do_is_refused_in_one_line(
    adult_parquet: Path, tmp_path: Path
) -> None:
    data = adult_parquet / "adult.parquet"
    frame = pd.read_parquet(data)
    refusals = [
        (
            lambda: veil.anonymize(data, POLICY, engine="stream", report=tmp_path / "r.html"),
            "--report is not supported on a table read in batches",
        ),
        (lambda: veil.anonymize(frame, POLICY, engine="stream"), "not read in batches"),
        (
            lambda: veil.check(data, QIS, engine="stream", weights="age"),
            "--weights is not supported on a table read in batches",
        ),
        (
            lambda: veil.scan(data, engine="dask", dates=["age"]),
            "--dates is not supported on a Dask cluster",
        ),
        (
            lambda: veil.anonymize(data, POLICY, engine="stream", output=tmp_path / "r.xlsx"),
            ".csv or .parquet",
        ),
        (lambda: veil.scan(data, engine="quantum"), "engine must be one of"),
    ]
    for call, said in refusals:
        with pytest.raises(ParameterError) as raised:
            call()
        assert said in str(raised.value)
        assert "\n" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []  # nothing written by a refused call


def test_auto_streams_a_file_over_a_tenth_of_memory(adult_parquet: Path, monkeypatch) -> None:
    from veil.io import _source

    data = Source.of(adult_parquet / "adult.parquet")
    assert data.engine() == "memory"
    monkeypatch.setattr(_source, "STREAMING_SHARE", 0.0)  # any file is large now
    assert data.engine() == "stream"
    assert Source.of(adult_parquet / "adult.parquet", dates=("age",)).engine() == "memory"
    assert Source.of(pd.DataFrame({"a": [1]})).engine() == "memory"
    assert Source.of(dd.from_pandas(pd.DataFrame({"a": [1]}), npartitions=1)).engine() == "dask"
    assert Source.of("sqlite:///x.db", table="t").engine() == "memory"


def test_auto_counts_a_parquet_file_by_its_cells_not_its_compressed_size(
    tmp_path: Path, monkeypatch
) -> None:
    """A Parquet file of repeated values is small on disk and large in memory (adult grown to
    10M rows: 34 MB on disk, 6.2 GB through a release in memory): ``"auto"`` weighs its cells,
    a CSV its size on disk."""
    from veil.io import _source

    frame = pd.DataFrame({"county": ["Nairobi"] * 20_000, "age": [34] * 20_000})
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.csv", index=False)
    on_disk = (tmp_path / "t.parquet").stat().st_size
    assert on_disk < 20_000  # dictionaries and compression: under a byte a cell
    held = Source.of(tmp_path / "t.parquet").size()
    assert held == 20_000 * 2 * _source.CELL_BYTES
    # a machine where a tenth of memory holds the file on disk, and the CSV, not the cells
    memory = 10 * max(on_disk, (tmp_path / "t.csv").stat().st_size) + 1
    assert memory * _source.STREAMING_SHARE < held
    monkeypatch.setattr(_source, "memory_bytes", lambda: memory)
    assert Source.of(tmp_path / "t.parquet").engine() == "stream"
    assert Source.of(tmp_path / "t.csv").engine() == "memory"
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    assert Source.of(tmp_path / "bad.parquet").size() == len(b"PAR1 not really")
    # a compressed CSV weighs what it unpacks to: streamed where the text would be, an xz
    # file (which Arrow cannot unpack as it reads) read in memory
    import gzip

    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress((tmp_path / "t.csv").read_bytes()))
    assert Source.of(packed).size() == packed.stat().st_size * _source.PACKED_RATIO
    monkeypatch.setattr(_source, "memory_bytes", lambda: 10 * packed.stat().st_size + 1)
    assert Source.of(packed).engine() == "stream"
    assert Source.of(tmp_path / "t.csv.xz").engine() == "memory"


def test_the_policy_read_section_applies_from_python(tmp_path: Path) -> None:
    """The policy's ``read:`` options read the source when veil reads it (the command line
    did this alone before)."""
    (tmp_path / "semi.csv").write_text("county;age\n" + "Nairobi;30\n" * 6 + "Kisumu;40\n" * 6)
    policy = {
        "read": {"sep": ";"},
        "privacy": {"k": 2},
        "columns": {"county": {"role": "quasi_identifier"}, "age": {"role": "quasi_identifier"}},
    }
    release = veil.anonymize(tmp_path / "semi.csv", policy)
    assert list(release.data.columns) == ["county", "age"]
    assert len(release.data) == 12
    assert os.listdir(tmp_path) == ["semi.csv"]
