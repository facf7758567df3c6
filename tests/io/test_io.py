"""Reading and writing tables: formats, detection, and bad input that gets a clear error."""

from __future__ import annotations

import codecs
import errno
import itertools
import mmap
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import veil
from veil import io
from veil.exceptions import InputError, OutputError, ParameterError, UnknownColumnError
from veil.io import _files as files
from veil.io import arrow_source


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16"])
def test_arrow_parses_from_its_own_memory_never_from_a_python_object(encoding: str) -> None:
    """Arrow's threads drop their source last, without the GIL at the interpreter's exit: the
    source of a parse holds no reference to the caller's bytes, and its bytes are the text as
    UTF-8 whatever the file's encoding was."""
    text = "town,age\nMûranga,34\nRenée,35\n"
    data = text.encode(encoding)
    held = sys.getrefcount(data)
    source = arrow_source(data, encoding)
    assert sys.getrefcount(data) == held
    assert source.read().decode("utf-8") == text  # utf-16: its byte-order mark read


def test_a_large_file_in_utf16_is_transcoded_piece_by_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces of 7 bytes split UTF-16's two-byte units and its four-byte pairs: the table is
    still the one pandas reads from the file."""
    monkeypatch.setattr(files, "_TRANSCODE_BYTES", 7)
    rows = "".join(f"Mûranga 𝄞{i % 50},{i % 90}\n" for i in range(40_000))
    path = write_bytes(tmp_path, "wide.csv", ("town,age\n" + rows).encode("utf-16"))
    assert path.stat().st_size > 1 << 20
    frame = io.read(path, encoding="utf-16")
    expected = pd.read_csv(path, encoding="utf-16")
    assert frame["town"].tolist() == expected["town"].tolist()
    assert frame["age"].tolist() == expected["age"].tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(alphabet='ab é€",\n\r', max_size=6), st.integers(0, 99)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["cp1252", "utf-16", "utf-8-sig"]),
    st.integers(3, 40),
    st.sampled_from(["\n", "\r\n"]),
)
def test_a_stream_in_another_encoding_is_cut_only_where_a_row_ends(
    rows: list[tuple[str, int]], encoding: str, piece: int, ending: str
) -> None:
    """A stream of a file not in UTF-8 is decoded by veil a piece at a time and each piece
    parsed by Arrow: cut into pieces of a few bytes, inside quoted values holding delimiters,
    doubled quotes and line breaks, the rows are those of the file read whole."""
    import csv
    import tempfile

    from veil.io import TableStream
    from veil.io import _batches as batches

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        with open(path, "w", encoding=encoding, newline="") as handle:
            writer = csv.writer(handle, lineterminator=ending)
            writer.writerow(["note", "n"])
            # (the csv module of Python 3.11 quotes a lone CR only where lines end in one)
            written = [
                (f"x{t}" if "\r" in ending else f"x{t}".replace("\r", ""), n) for t, n in rows
            ]
            writer.writerows(written)
        whole = io.read(path, encoding=encoding)
        held = batches._TRANSCODE_BYTES
        batches._TRANSCODE_BYTES = piece
        try:
            stream = TableStream(str(path), encoding=encoding)
            streamed = pd.concat(list(stream.batches(7)), ignore_index=True)
        finally:
            batches._TRANSCODE_BYTES = held
    pd.testing.assert_frame_equal(streamed, whole)
    assert streamed["note"].tolist() == [text for text, _ in written]


# a value's quotes are plain unless it starts with one (its tail after the closing quote must
# not start with one: two quotes there are a quote inside)
_PLAIN = st.text(alphabet='ab "', max_size=5).filter(lambda v: not v.startswith('"'))
_QUOTED = st.builds(
    lambda inside, tail: '"' + inside.replace('"', '""') + '"' + tail,
    st.text(alphabet='ab,"\n\r', max_size=5),
    _PLAIN,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(_PLAIN, _QUOTED),
            st.one_of(_PLAIN, _QUOTED),
            st.sampled_from(["\n", "\r\n", "\r"]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 200),
)
def test_a_piece_ends_where_arrow_ends_a_row(rows: list[tuple[str, str, str]], at: int) -> None:
    """Arrow is the oracle: a text cut where ``_row_end`` says, each side parsed on its own,
    gives the rows Arrow parses from the whole. The values hold quotes Arrow reads as plain
    (``5" tall``: inside a value that does not start with one, and after a closing quote),
    doubled quotes, delimiters and line breaks inside quotes, and every line ending."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from veil.io._batches import _row_end, _row_end_by_quotes, _rows

    text = "".join(f"{a},{b}{end}" for a, b, end in rows).encode("utf-8")

    def parsed(part: bytes) -> list[dict[str, str]]:
        if not part.strip(b"\r\n"):
            return []
        table = pacsv.read_csv(
            pa.BufferReader(part),
            read_options=pacsv.ReadOptions(column_names=["a", "b"]),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(column_types={"a": pa.string(), "b": pa.string()}),
        )
        return table.to_pylist()

    whole = parsed(text)
    assert len(whole) == len(rows)  # what was written (every line ending a row)
    head = text[: min(at, len(text))]
    cut = _row_end(head, ",", quoted=True)
    assert cut <= len(head)
    # the quotes' count, where it answers, answers as the reading of every value does
    counted = _row_end_by_quotes(head, ",")
    if counted is not None:
        assert counted == cut == _rows(",").match(head).end()  # type: ignore[union-attr]
    assert parsed(text[:cut]) + parsed(text[cut:]) == whole
    assert _row_end(text, ",", quoted=True) == len(text)  # the whole text ends a row


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_a_row_longer_than_arrows_block_is_read_or_stops_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """A cell holding a document is longer than Arrow's first block: the first reading starts
    again with larger blocks, and the stream reads it. A hostile cell, a quote opened and never
    closed, would hold the rest of the file as one row (in memory, and read again with each
    piece): it stops the stream in one line once no row ends within the largest block."""
    from veil.io import TableStream
    from veil.io import _batches as batches

    monkeypatch.setattr(batches, "_TRANSCODE_BYTES", 1000)
    monkeypatch.setattr(batches, "_BLOCK_BYTES", 4000)
    monkeypatch.setattr(batches, "_LARGEST_BLOCK_BYTES", 64_000)
    rows = "".join(f"Nyeri {i},{i % 90}\n" for i in range(20_000))
    document = "é" * 20_000
    path = write_bytes(tmp_path, "t.csv", f"town,age\n{document},34\n{rows}".encode(encoding))
    frame = pd.concat(
        list(TableStream(str(path), encoding=encoding).batches(5000)), ignore_index=True
    )
    assert frame["town"].iloc[0] == document
    assert len(frame) == 20_001
    path = write_bytes(
        tmp_path, "t.csv", f'town,age\nNyeri,34\n"Mûranga,35\n{rows}'.encode(encoding)
    )
    pieces: list[bytes] = []
    real = batches._row_end
    monkeypatch.setattr(batches, "_row_end", lambda text, *a: pieces.append(text) or real(text, *a))
    with pytest.raises(InputError, match=r"a row is longer than .* MB \(a quoted value left open"):
        list(TableStream(str(path), encoding=encoding).batches(100))
    assert max(map(len, pieces), default=0) < 64_000 + 2 * 1000  # never the whole file held


def test_a_long_row_past_the_first_batch_is_read_when_types_were_presumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file typed on its first batch (``typed_as_read``) holding a document far past it:
    the reading that meets it stops, the file is typed over every row with larger blocks, and
    the reading made again reads it; an open quote there still stops the stream in one line."""
    from veil.io import TableStream, typed_as_read
    from veil.io import _batches as batches
    from veil.progress import Progress

    monkeypatch.setattr(batches, "_BLOCK_BYTES", 4000)
    monkeypatch.setattr(batches, "_LARGEST_BLOCK_BYTES", 64_000)
    rows = "".join(f"Nyeri {i},{i % 90}\n" for i in range(20_000))
    document = "é" * 20_000
    path = write_bytes(tmp_path, "t.csv", f"town,age\n{rows}{document},34\n{rows}".encode())
    source = TableStream(str(path))
    steps: list[str] = []
    told = Progress()
    told.step = steps.append  # type: ignore[method-assign]
    frame = pd.concat(
        typed_as_read(source, 5000, told, lambda: list(source.batches(5000))),
        ignore_index=True,
    )
    assert sum("a row is longer than Arrow's block: typing every row" in s for s in steps) == 1
    assert frame["town"].iloc[20_000] == document
    assert len(frame) == 40_001
    assert source._block == 4000 * 4**2  # grown past the 20,000-character row
    path = write_bytes(tmp_path, "t.csv", f'town,age\n{rows}"Mûranga,35\n{rows}'.encode())
    source = TableStream(str(path))
    with pytest.raises(InputError, match=r"a row is longer than .* MB \(a quoted value left open"):
        typed_as_read(source, 5000, Progress(), lambda: list(source.batches(5000)))


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16"])
def test_a_stream_in_another_encoding_hands_arrow_utf8_in_its_own_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """pyarrow given another encoding decodes through a Python codec called from Arrow's own
    threads (what a process exiting aborts on, README): every parse of the stream is told
    UTF-8 and reads one of Arrow's own streams."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from veil.io import TableStream

    told: list[tuple[str, type]] = []
    for name in ("open_csv", "read_csv"):
        real = getattr(pacsv, name)

        def spy(source: Any, *args: Any, real: Any = real, **kwargs: Any) -> Any:
            told.append((kwargs["read_options"].encoding, type(source)))
            return real(source, *args, **kwargs)

        monkeypatch.setattr(pacsv, name, spy)
    path = write_bytes(tmp_path, "t.csv", "town,age\nMûranga,34\nRenée,35\n".encode(encoding))
    stream = TableStream(str(path))
    frame = pd.concat(list(stream.batches(1)), ignore_index=True)
    assert frame["town"].tolist() == ["Mûranga", "Renée"]
    assert told
    assert {encoding for encoding, _ in told} == {"utf8"}
    assert all(issubclass(kind, pa.NativeFile) for _, kind in told)
    assert not any(issubclass(kind, pa.PythonFile) for _, kind in told)


WAGE = Path(__file__).parents[1] / "data" / "surveys" / "Wage.csv.gz"


def _packed(codec: str, text: bytes) -> bytes:
    import bz2
    import gzip
    import lzma

    import pyarrow as pa

    if codec == "zstd":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as stream:
            stream.write(text)
        return sink.getvalue().to_pybytes()
    return {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[codec](text)


@pytest.mark.parametrize("codec", ["gzip", "bz2", "xz", "zstd"])
def test_a_compressed_csv_reads_as_its_text(tmp_path: Path, codec: str) -> None:
    """A table as downloaded (this repository's own are .csv.gz) was refused as "not a text
    (CSV) file": read now gives the table the unpacked file gives, told by its first bytes
    whatever its name, cp1252 and all."""
    import gzip

    text = gzip.decompress(WAGE.read_bytes()).decode("utf-8").replace("Middle", "Mïddle")
    plain = write_bytes(tmp_path, "wage.csv", text.encode("cp1252"))
    packed = write_bytes(tmp_path, "wage.data", _packed(codec, plain.read_bytes()))
    frame = io.read(packed)
    pd.testing.assert_frame_equal(frame, io.read(plain))
    assert frame.attrs == io.read(plain).attrs
    assert "Mïddle" in " ".join(frame.astype(str).stack())


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_a_large_compressed_csv_is_parsed_where_it_was_unpacked(tmp_path: Path, codec: str) -> None:
    """Past the first MB the unpacked text is parsed in Arrow's buffer, judged on its head as
    a large file is: a cp1252 letter and a quoted line break far past the head still read as
    pandas reads the plain file."""
    rows = [f"{20 + i % 60},Nyeri {i % 40}\n" for i in range(150_000)]
    rows[120_000] = '44,"Mïranga\nwest"\n'
    text = ("age,town\n" + "".join(rows)).encode("cp1252")
    assert text.index("ï".encode("cp1252")) > 1 << 20
    plain = write_bytes(tmp_path, "towns.csv", text)
    packed = write_bytes(tmp_path, "towns.csv.gz", _packed(codec, text))
    frame = io.read(packed)
    expected = pd.read_csv(plain, encoding="cp1252")
    assert frame["town"].tolist() == expected["town"].tolist()
    assert frame["age"].tolist() == expected["age"].tolist()
    assert "Mïranga\nwest" in set(frame["town"])


def test_a_zip_archive_or_a_cut_one_is_refused_in_one_line(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "wage.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("wage.csv", "age,wage\n34,100\n")
    with pytest.raises(InputError, match=r"a ZIP archive, which may hold several files; extract"):
        io.read(archive)
    cut = write_bytes(tmp_path, "wage.csv.gz", WAGE.read_bytes()[:2000])
    with pytest.raises(InputError, match=r"a gzip file that does not unpack .*copied whole"):
        io.read(cut)
    text = WAGE.read_bytes()
    cut = write_bytes(tmp_path, "wage.csv.xz", _packed("xz", text)[:-200])
    with pytest.raises(InputError, match=r"an? xz file that does not unpack"):
        io.read(cut)


@pytest.mark.parametrize("codec", ["gzip", "xz", "zstd"])
def test_a_file_that_unpacks_past_a_quarter_of_memory_is_refused_as_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str
) -> None:
    """A small hostile file (a "zip bomb": 64 MB of one row repeated packs into a few hundred
    kB) is not unpacked whole: past a quarter of the memory (here 16 MB of a machine said to
    have 64) the read stops, saying to stream it unpacked."""
    monkeypatch.setattr(files, "memory_bytes", lambda: 64 << 20)
    text = b"age,wage\n" + b"34,100\n" * ((64 << 20) // 7)
    bomb = write_bytes(tmp_path, "wage.csv.gz", _packed(codec, text))
    assert bomb.stat().st_size < len(text) // 100
    with pytest.raises(InputError, match=r"unpacks to more than 0.0 GB, a quarter .*--streaming"):
        io.read(bomb)


def test_a_compressed_csv_is_checked_whole_and_streamed_as_the_unpacked_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``veil check`` of the .csv.gz as downloaded counts what the unpacked file gives, in
    memory and in batches (Arrow unpacks gzip, bzip2 and zstd as it reads); an xz file, which
    Arrow cannot unpack as it reads, is refused in one line saying what to do."""
    import gzip

    from veil.cli import main

    text = gzip.decompress(WAGE.read_bytes())
    plain = write_bytes(tmp_path, "wage.csv", text)
    args = ["check", "-k", "2", "-q", "age,maritl,race", "--batch-rows", "701"]
    code = main([*args, str(plain), "--streaming"])
    expected = capsys.readouterr().out.replace(str(plain), "")
    assert "k = " in expected
    for codec in ("gzip", "bz2", "zstd"):
        packed = write_bytes(tmp_path, f"wage-{codec}.csv.gz", _packed(codec, text))
        for engine in ("--in-memory", "--streaming"):
            assert main([*args, str(packed), engine]) == code
            assert capsys.readouterr().out.replace(str(packed), "") == expected, (codec, engine)
    xz = write_bytes(tmp_path, "wage.csv.xz", _packed("xz", text))
    assert main([*args, str(xz), "--streaming"]) == 2
    assert "not the xz-compressed" in capsys.readouterr().err
    hidden = write_bytes(tmp_path, "wage.csv", _packed("xz", text))  # xz, named as plain text
    assert main([*args, str(hidden), "--streaming"]) != 0
    assert "unpack it (unxz)" in capsys.readouterr().err


@pytest.mark.parametrize("codec", ["gzip", "bz2", "zstd"])
def test_a_compressed_csv_streams_to_the_release_of_its_text(tmp_path: Path, codec: str) -> None:
    """The release streamed from a compressed file, a few rows a batch, is the plain file's
    byte for byte; its hierarchies are found by the unpacked file's stem (``adult`` of
    ``adult.csv.gz``)."""
    adult = Path(__file__).parents[1] / "data" / "arx_adult"
    import gzip

    text = gzip.decompress((adult / "adult.csv.gz").read_bytes())
    plain = write_bytes(tmp_path, "adult.csv", text)
    packed = write_bytes(
        tmp_path,
        "adult.csv." + {"gzip": "gz", "bz2": "bz2"}.get(codec, "zst"),
        _packed(codec, text),
    )
    for tree in adult.glob("adult_hierarchy_*.csv"):
        write_bytes(tmp_path, tree.name, tree.read_bytes())
    policy = {
        "privacy": {"models": [{"model": "k_anonymity", "k": 5}], "max_suppression": 0.04},
        "columns": {"salary-class": {"role": "insensitive"}},
        "random_state": 7,
    }
    out = {}
    for source in (plain, packed):
        out[source] = tmp_path / f"release-{source.name}.csv"
        veil.anonymize(
            source,
            policy,
            engine="stream",
            hierarchies=tmp_path,
            batch_rows=4_001,
            output=out[source],
        )
    assert out[packed].read_bytes() == out[plain].read_bytes()
    assert 25_000 < len(io.read(out[plain])) < 30_162  # the search ran


def test_a_compressed_file_cut_short_stops_the_stream_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cut in the head read for the dialect (16 MB unpacked) or past it, in a batch: one line,
    no release; a file named .gz that is plain text streams as the text it is."""
    import gzip

    from veil.cli import main
    from veil.io._batches import _HEAD_BYTES

    rows = "age,town\n" + "".join(f"{20 + i % 60},Nyeri{i % 40}\n" for i in range(1_600_000))
    packed = gzip.compress(rows.encode(), compresslevel=1)
    assert len(rows) > _HEAD_BYTES
    for cut in (2_000, len(packed) - 5_000):
        short = write_bytes(tmp_path, f"cut{cut}.csv.gz", packed[:cut])
        out = tmp_path / f"release{cut}.csv"
        code = main(["anonymize", str(short), "-k", "2", "-o", str(out), "--streaming"])
        assert code == 2
        assert "a gzip file that does not unpack" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"cut{cut}.csv.gz" for cut in (2_000, len(packed) - 5_000)
    )  # no release, no staged part of one
    plain = write_bytes(tmp_path, "named.csv.gz", rows.encode())
    assert io.read(plain)["age"].tolist()[:3] == [20, 21, 22]
    assert main(["check", str(plain), "-q", "age", "-k", "2", "--streaming"]) == 0


def write_bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- CSV detection -----------------------------------------------------------------------------
def test_semicolon_csv_is_detected(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"name;age;county\nAmina;34;Lamu\nBaraka;51;Meru\n")
    frame = io.read(path)
    assert list(frame.columns) == ["name", "age", "county"]
    assert frame["age"].tolist() == [34, 51]


def test_explicit_sep_overrides_detection(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"a|b\n1,5|2\n")
    assert io.read(path, sep="|")["a"].tolist() == ["1,5"]


@pytest.mark.parametrize(
    "encoding", ["cp1252", "latin-1", "utf-8-sig", "utf-16", "utf-16-be", "utf-32", "utf-16-le"]
)
def test_encodings_are_detected(tmp_path: Path, encoding: str) -> None:
    text = "name,town\nRenée,Mûranga\nJosé,Nyeri\nZoë,Kitui\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":  # with its byte-order mark, as Excel's "Unicode text" has
        data = codecs.BOM_UTF16_BE + data
    path = write_bytes(tmp_path, "a.csv", data)
    if encoding == "utf-16-le":  # no BOM, NUL bytes: detection refuses, an explicit one works
        with pytest.raises(InputError, match="NUL bytes"):
            io.read(path)
        frame = io.read(path, encoding="utf-16-le")
    else:
        frame = io.read(path)
    assert frame["name"].tolist() == ["Renée", "José", "Zoë"]
    assert list(frame.columns) == ["name", "town"]


def test_leading_zero_numbers_stay_text(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"phone,n,x\n0712345678,1,1.5\n0722000111,20,\n")
    frame = io.read(path)
    assert frame["phone"].tolist() == ["0712345678", "0722000111"]
    assert frame["n"].dtype == np.int64
    assert frame["x"].dtype == np.float64
    assert np.isnan(frame["x"].iloc[1])


def test_iso_dates_parse_and_dayfirst_dates_parse_when_asked(tmp_path: Path) -> None:
    path = write_bytes(
        tmp_path,
        "a.csv",
        b"iso,ke\n2013-11-14 01:12,14/11/13 01:12\n2015-09-11 02:32,11/09/15 02:32\n",
    )
    frame = io.read(path)
    assert pd.api.types.is_datetime64_any_dtype(frame["iso"])
    assert frame["ke"].dtype != "datetime64[ns]"  # ambiguous: left as text unless asked
    parsed = io.read(path, dates=["ke"], dayfirst=True)
    assert parsed["ke"].tolist() == list(frame["iso"])
    formatted = io.read(path, dates=["ke"], date_format="%d/%m/%y %H:%M")
    assert formatted["ke"].tolist() == list(frame["iso"])


def test_quoted_fields_with_newlines_and_delimiters(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b'id,note\n1,"call 0712 345 678,\nthen email"\n2,ok\n')
    frame = io.read(path)
    assert frame["note"].iloc[0] == "call 0712 345 678,\nthen email"
    assert len(frame) == 2


def test_a_quote_far_into_a_large_file_still_keeps_its_line_break(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file without a quote is parsed without lexing quotes (faster): the one quoted value
    with a line break, in the last window looked at, must make the parser lex them again, in
    memory and streamed alike; a file without one reads as the lexing parser reads it."""
    from veil.io import _files

    monkeypatch.setattr(_files, "_QUOTE_SCAN_BYTES", mmap.ALLOCATIONGRANULARITY)
    monkeypatch.setattr(_files, "_UTF8_HEAD", 1 << 12)  # parsed from the file, as a large one
    rows = [f"{i},Nairobi,{i % 7}" for i in range(3000)]
    plain = tmp_path / "plain.csv"
    plain.write_text("id,county,code\n" + "\n".join(rows) + "\n")
    quoted = tmp_path / "quoted.csv"
    quoted.write_text("id,county,code\n" + "\n".join(rows) + '\n3000,"Kisumu\nWest",1\n')
    assert plain.stat().st_size > 4 * mmap.ALLOCATIONGRANULARITY
    assert _files.may_quote(quoted, "utf-8")
    assert not _files.may_quote(plain, "utf-8")
    frame = io.read(quoted)
    assert len(frame) == 3001
    assert frame["county"].iloc[-1] == "Kisumu\nWest"
    streamed = pd.concat(io.TableStream(str(quoted)).batches(1000))
    assert len(streamed) == 3001
    assert streamed["county"].iloc[-1] == "Kisumu\nWest"
    lexed = pd.read_csv(plain, engine="python")  # an independent parser: the same table
    pd.testing.assert_frame_equal(io.read(plain), lexed, check_dtype=False)
    result = veil.check(plain, ["county", "code"])
    assert result.rows == 3000
    assert result.k == 428


def test_a_quote_is_looked_for_only_where_it_is_the_byte_quote() -> None:
    """In an EBCDIC page the quote is another byte: no byte search can rule it out."""
    from veil.io._files import may_quote

    assert may_quote(b"id,name\n1,Amina\n", "cp500")
    assert not may_quote(b"id,name\n1,Amina\n", "utf-8")
    assert may_quote('id,"na,me"\n'.encode("utf-16"), "utf-16")
    assert may_quote(b"id\n1\n", "no-such-encoding")


# -- other sources -----------------------------------------------------------------------------
def test_parquet_excel_sql_and_dataframe_round_trip(tmp_path: Path, people: pd.DataFrame) -> None:
    frame = people.reset_index(drop=True).drop(columns=["joined"])
    for suffix in (".parquet", ".xlsx", ".csv"):
        path = io.write(frame, tmp_path / f"t{suffix}")
        back = io.read(path)
        assert list(back.columns) == list(frame.columns)
        assert back["phone"].tolist() == frame["phone"].tolist()
        assert np.allclose(back["salary"], frame["salary"])

    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'x.db'}"
    engine = sa.create_engine(url)
    frame.to_sql("clients", engine, index=False)
    engine.dispose()
    assert len(io.read(url, table="clients")) == len(frame)
    assert io.read(url, query="SELECT name FROM clients WHERE age > 50").shape[1] == 1
    with pytest.raises(InputError, match="table 'nope' does not exist; tables: clients"):
        io.read(url, table="nope")
    with pytest.raises(ParameterError, match="exactly one of table or query"):
        io.read(url)
    assert io.read(frame) is frame


def test_excel_unknown_sheet(tmp_path: Path) -> None:
    path = io.write(pd.DataFrame({"a": [1]}), tmp_path / "t.xlsx")
    with pytest.raises(InputError, match="--sheet"):
        io.read(path, sheet="Missing")


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"", "the file is empty"),
        (b"\n\n  \n", "holds no data"),
        (b"a,b\n", "header but no data rows"),
        (b"a,b\n1,2\n3,4,5\n", "line 3 has 3 fields but the header has 2"),
        (b"a,b,c\n1,2,3\n4,5\n6,7,8\n", "line 3 has 2 fields but the header has 3"),
        (b"a,a\n1,2\n", r"duplicate column name\(s\) \['a'\]"),
        (b"a,,c\n1,2,3\n", r"header field\(s\) \[2\] are empty; every column needs a name$"),
        # a spreadsheet's export: every line ends with the delimiter
        (b"a,b,\n1,2,\n", r"\[3\] are empty; .*remove the delimiter that ends every line"),
        # a title above the table
        (b"Claims 2026\n\na,b,c\n1,2,3\n", "line 3 has 3 .*remove the lines above it"),
        (b"a\x00b\n\x00\x01\n", "NUL bytes"),
    ],
)
def test_bad_csv_gets_one_clear_line(tmp_path: Path, content: bytes, pattern: str) -> None:
    path = write_bytes(tmp_path, "bad.csv", content)
    with pytest.raises(InputError, match=pattern) as info:
        io.read(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_undecodable_bytes_name_the_line(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", "a,b\n1,ok\n2,Renée\n".encode("cp1252"))
    with pytest.raises(InputError, match=r"line 3: byte 0xe9 is not valid utf-8.*--encoding"):
        io.read(path, encoding="utf-8")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        io.read(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a directory"):
        io.read(tmp_path)


def test_unknown_date_column(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"a,b\n1,2\n")
    with pytest.raises(UnknownColumnError, match="'c' \\(dates\\) is not in the table"):
        io.read(path, dates=["c"])


def test_unparseable_dates_suggest_a_format(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"a,d\n1,soon\n")
    with pytest.raises(InputError, match="--date-format"):
        io.read(path, dates=["d"])


# -- writing -----------------------------------------------------------------------------------
def test_write_refuses_existing_unless_forced(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": [1]})
    target = tmp_path / "out.csv"
    target.write_text("keep me")
    with pytest.raises(OutputError, match="already exists; pass --force"):
        io.write(frame, target)
    assert target.read_text() == "keep me"
    io.write(frame, target, force=True)
    assert io.read(target)["a"].tolist() == [1]


def test_write_never_overwrites_an_input(tmp_path: Path) -> None:
    source = write_bytes(tmp_path, "in.csv", b"a\n1\n")
    link = tmp_path / "same.csv"
    os.link(source, link)  # another name for the same file is still the input
    for target in (source, link):
        with pytest.raises(OutputError, match="is the input file"):
            io.write(pd.DataFrame({"a": [2]}), target, force=True, inputs=[source])
    assert source.read_bytes() == b"a\n1\n"


def test_failed_write_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"a": range(1000)})
    target = tmp_path / "out.csv"

    def half_then_fail(self: pd.DataFrame, where: Any, **kwargs: object) -> None:
        if hasattr(where, "write"):  # a partial file...
            where.write(b"a\n0\n1\n")
        else:
            Path(where).write_text("a\n0\n1\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # ...then the failure

    # whichever writes it: Arrow's kernels (veil.io._csvout) or pandas
    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    monkeypatch.setattr("veil.io._write.write_any", half_then_fail)
    with pytest.raises(OutputError, match=r"cannot write .*out\.csv: No space left on device"):
        io.write(frame, target)
    assert list(tmp_path.iterdir()) == []

    target.write_text("old")  # an existing file survives a failed forced overwrite intact
    with pytest.raises(OutputError, match="No space left"):
        io.write(frame, target, force=True)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_output_extension_and_folder_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="extension must be one of"):
        io.write(pd.DataFrame({"a": [1]}), tmp_path / "out.txt")
    with pytest.raises(OutputError, match="does not exist"):
        io.write(pd.DataFrame({"a": [1]}), tmp_path / "no" / "out.csv")


def test_fingerprint_tracks_content() -> None:
    a = pd.DataFrame({"x": [1, 2]})
    assert io.fingerprint(a) == io.fingerprint(a.copy())
    assert io.fingerprint(a) != io.fingerprint(pd.DataFrame({"x": [1, 3]}))
    assert io.fingerprint(a) != io.fingerprint(pd.DataFrame({"y": [1, 2]}))


def test_a_full_fingerprint_sees_every_row_and_certificates_carry_it(key_env: str) -> None:
    from veil import anonymize

    frame = pd.DataFrame({"x": np.arange(50_000) % 7, "county": ["Nyeri", "Lamu"] * 25_000})
    changed = frame.copy()
    changed.loc[1, "x"] = 6  # row 1 is not among 10,000 evenly spaced rows of 50,000
    assert io.fingerprint(frame, sample=10_000) == io.fingerprint(changed, sample=10_000)
    assert io.fingerprint(frame) != io.fingerprint(changed)
    assert len(io.fingerprint(frame)) == 64
    cert = anonymize(
        frame,
        {
            "version": 1,
            "columns": {"x": {"role": "insensitive"}, "county": {"role": "quasi_identifier"}},
        },
    ).certificate
    assert cert.format == 6
    assert cert.source_fingerprint == io.fingerprint(frame)
    assert cert.release_fingerprint == cert.release_sha256
    assert len(cert.release_fingerprint) == 64


def test_a_wrong_separator_is_named_as_such(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "a.csv", b"id,County,Age\n1,Nyeri,30\n2,Lamu,40\n")
    with pytest.raises(InputError, match=r"the separator looks like ','; pass --sep ','"):
        io.read(path, sep=";")
    assert list(io.read(path).columns) == ["id", "County", "Age"]


FORMATTED = (
    "id,Age,Amount,Mixed,Seen,Day,Entry,Score\n"
    "1,62,1.50,1e3,2021-04-04T12:05,2021-04-04,2013-11-14 01:12,7\n"
    "2,,2.25,2.5,2021-04-05T08:00,2021-04-05,2015-09-11 02:32,\n"
    "3,45,0.10,3,,2021-04-06,2014-01-02 23:59,3\n"
)


def test_columns_left_as_they_were_keep_the_inputs_form(tmp_path: Path) -> None:
    """62 in a column with gaps, 1.50, 2021-04-04T12:05 and 01:12 go out as they came in;
    a column a transform changed is written as usual; and what is written reads back as
    the same values (the certificate's hash still holds)."""
    from veil.transforms import Noise

    source = tmp_path / "in.csv"
    source.write_text(FORMATTED)
    frame = io.read(source)
    assert frame["Age"].dtype == float  # gaps: pandas holds whole numbers as floats
    noised = Noise("Score", scale=0.5, random_state=1).fit_transform(frame)
    out = tmp_path / "out.csv"
    io.write(noised, out)
    lines = out.read_text().splitlines()
    original = FORMATTED.splitlines()
    cells = [line.split(",") for line in lines]
    want = [line.split(",") for line in original]
    kept = [0, 1, 2, 4, 5, 6]  # Mixed (1e3, 2.5, 3) has no one form: written as numbers
    for row, expected in zip(cells[1:], want[1:], strict=True):
        assert [row[i] for i in kept] == [expected[i] for i in kept]
    assert cells[1][7] != "7"  # the noised column is not forced into the input's form
    assert io.content_sha256(io.read(out)) == io.content_sha256(noised)


def test_a_form_is_used_only_where_every_value_fits_it() -> None:
    frame = pd.DataFrame({"a": [1.5, 2.25, np.nan], "b": [1.0, np.nan, 3.0]})
    written = io._write._as_written(frame, {"a": "%.2f", "b": "%d"})
    assert written["a"].tolist()[:2] == ["1.50", "2.25"]
    assert written["b"].dtype == "Int64"
    assert written["b"].isna().tolist() == [False, True, False]
    # a value with more decimals than the form shows: the column is written as usual
    finer = io._write._as_written(frame.assign(a=[1.5, 2.251, 0.0]), {"a": "%.2f"})
    assert finer["a"].dtype == float


def test_the_content_hash_is_the_same_for_any_split_of_the_rows() -> None:
    """A release streamed to disk is hashed batch by batch; ``verify`` hashes it whole."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "n": rng.integers(0, 9, 40).astype(float),
            "t": rng.choice(["", "a", "bb", None, "ccc"], 40),
            "d": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 9, 40), "D"),
        }
    )
    frame.loc[3, "n"] = np.nan
    whole = io.content_sha256(frame)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.integers(0, 40), max_size=6))
    def split(cuts: list[int]) -> None:
        running = io.ContentHash(list(frame.columns))
        edges = [0, *sorted(cuts), len(frame)]
        for start, stop in itertools.pairwise(edges):
            running.update(frame.iloc[start:stop])
        assert running.hexdigest() == whole

    split()
    # and it still tells tables apart: one cell, the order, an empty text made missing
    changed = frame.copy()
    changed.loc[5, "t"] = "zz" if changed.loc[5, "t"] != "zz" else "y"
    assert io.content_sha256(changed) != whole
    assert io.content_sha256(frame.iloc[::-1]) != whole
    moved = frame.copy()
    moved["t"] = ["a" + (v or "") if i == 0 else v for i, v in enumerate(moved["t"])]
    assert io.content_sha256(moved) != whole


def test_a_text_column_held_in_arrow_hashes_as_its_canonical_cells_do() -> None:
    """``ContentHash`` reads a text column as Arrow holds it (its offsets and bytes) rather
    than making canonical cells: the digest must be the one the canonical cells give (the same
    texts held as Python objects), however the column is chunked, sliced or typed, with empty
    texts, missing cells, and a missing cell whose slot spans bytes (Arrow allows it)."""
    cells = st.one_of(st.none(), st.just(""), st.text(max_size=6))

    def digest(column: pd.Series) -> str:
        return io.ContentHash(["t"]).update(pd.DataFrame({"t": column})).hexdigest()

    @settings(max_examples=120, deadline=None)
    @given(
        st.lists(cells, max_size=30),
        st.lists(st.integers(0, 30), max_size=3),
        st.integers(0, 3),
        st.sampled_from([pa.string(), pa.large_string()]),
    )
    def same(values: list[str | None], cuts: list[int], skip: int, kind: pa.DataType) -> None:
        edges = [0, *sorted(min(c, len(values)) for c in cuts), len(values)]
        # a slice of a longer array: each chunk read from its own offset
        chunks = [
            pa.array(["pad"] * skip + values[a:b], kind).slice(skip)
            for a, b in itertools.pairwise(edges)
        ]
        held = pa.chunked_array(chunks, kind)
        want = digest(pd.Series(values, dtype=object))
        assert digest(pd.Series(pd.arrays.ArrowStringArray(held.cast(pa.large_string())))) == want
        assert digest(pd.Series(held, dtype=pd.ArrowDtype(kind))) == want

    same()
    # a missing cell whose slot holds "zz": the digest of its canonical cells, not of its bytes
    offsets = pa.py_buffer(np.array([0, 1, 3, 4], dtype=np.int32).tobytes())
    nulls = pa.array([True, False, True]).buffers()[1]
    spanning = pa.Array.from_buffers(pa.string(), 3, [nulls, offsets, pa.py_buffer(b"azzb")], 1)
    column = pd.Series(spanning, dtype=pd.ArrowDtype(pa.string()))
    assert digest(column) == digest(pd.Series(["a", None, "b"], dtype=object))
    # and the digest a certificate already holds for this table: it did not change
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "n": rng.integers(0, 9, 40).astype(float),
            "t": rng.choice(["", "a", "bb", None, "ccc", "M\u00fbranga"], 40),
            "d": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 9, 40), "D"),
        }
    )
    frame.loc[3, "n"] = np.nan
    pinned = "f78a74f814f2f794fb647ee3f9a9a79cacc22d873106c31f7036f70c61521f56"
    assert io.content_sha256(frame) == pinned


def test_an_encoding_is_judged_on_the_whole_file_when_its_start_is_plain(tmp_path: Path) -> None:
    """The first MB decides an encoding to detect and Arrow checks the rest: a cp1252 letter
    past the first MB still makes the whole file cp1252, for the table and for its check."""
    plain = "".join(f"Nyeri,{i % 90}\n" for i in range(130_000))  # > 1 MB of ASCII
    text = "town,age\n" + plain + "Mûranga,34\nRenée,34\n"
    path = write_bytes(tmp_path, "late.csv", text.encode("cp1252"))
    assert path.stat().st_size > 1 << 20
    frame = io.read(path)
    assert frame["town"].iloc[-2:].tolist() == ["Mûranga", "Renée"]
    assert veil.check(path, ["town"]).k == 1  # Renée alone: read as the table reads it
    assert veil.check(path, ["town", "age"]).classes == 92


def test_a_cell_longer_than_arrows_block_is_read_from_a_large_file(tmp_path: Path) -> None:
    """A 10 MB cell straddles Arrow's 4 MB blocks (Arrow takes a row over one boundary, not
    over two): the file (read by Arrow from disk, being over a MB) is parsed again with blocks
    large enough, for the table and for its check."""
    document = "word " * 2_000_000
    text = f"id,note\n1,short\n2,{document}\n3,short\n"
    path = write_bytes(tmp_path, "long.csv", text.encode())
    assert path.stat().st_size > 9 << 20
    frame = io.read(path)
    assert frame["note"].tolist() == ["short", document, "short"]
    assert veil.check(path, ["note"]).k == 1
    assert veil.check(path, ["note"]).classes == 2


_NUMBER_TEXT = st.one_of(
    st.text(alphabet="0123456789+-. \t\u00a0\u2003e", max_size=20),
    st.builds(
        str.__add__, st.sampled_from(["", "-", " ", "+"]), st.text("0123456789", min_size=14)
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.none(), _NUMBER_TEXT), max_size=40),
    st.integers(0, 5),
    st.booleans(),
)
def test_a_number_not_plain_is_found_as_the_expression_finds_it(
    texts: list[str | None], cut: int, large: bool
) -> None:
    """``any_not_plain``, which matches only the texts whose first byte or length may make
    them one, answers as the expression matched over every text does: on slices, chunks,
    large strings and gaps, with signs, zeros, ASCII and other spaces, and long digits."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = pa.large_string() if large else pa.string()
    whole = pa.array(texts, kind)
    for values in (
        whole,
        whole.slice(min(cut, len(whole))),
        pa.chunked_array([whole.slice(0, cut), whole.slice(cut)], kind),
    ):
        expected = bool(pc.any(pc.match_substring_regex(values, files._NOT_PLAIN)).as_py())
        assert files.any_not_plain(values) == expected
    for one in whole.slice(0, 8):  # each text alone: the others do not answer for it
        alone = pa.array([one.as_py()], kind)
        expected = bool(pc.any(pc.match_substring_regex(alone, files._NOT_PLAIN)).as_py())
        assert files.any_not_plain(alone) == expected
