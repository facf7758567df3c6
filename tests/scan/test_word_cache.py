"""The vocabulary recognizers' word lists are built once and then read from the cache folder;
a cache file that is not a list of words (cut short, not UTF-8) is never trusted, and a folder
that cannot be written is passed over."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.scan.recognizers import vocabulary
from veil.scan.recognizers.vocabulary import _stored, cache_folder


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VEIL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_list_is_built_once_then_read(folder: Path) -> None:
    calls: list[int] = []

    def build() -> list[str]:
        calls.append(1)
        return ["wanjiku", "otieno"]

    assert _stored("names", build) == {"wanjiku", "otieno"}
    (written,) = folder.glob("words-names-*.txt")
    assert written.read_text() == "otieno\nwanjiku\n"
    assert _stored("names", build) == {"wanjiku", "otieno"}
    assert calls == [1]  # the second came from the file
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary left


@pytest.mark.parametrize("content", [b"otieno\nwanj", b"", b"\xff\xfeotieno\n"])
def test_a_cache_file_that_is_not_a_list_of_words_is_rebuilt(folder: Path, content: bytes) -> None:
    folder.mkdir(parents=True)
    name = f"words-names-{vocabulary._inputs_digest()}.txt"
    (folder / name).write_bytes(content)
    assert _stored("names", lambda: ["wanjiku"]) == {"wanjiku"}
    assert (folder / name).read_text() == "wanjiku\n"


def test_a_word_with_a_newline_is_never_stored(folder: Path) -> None:
    assert _stored("names", lambda: ["a\nb", "c"]) == {"a\nb", "c"}
    assert not folder.exists() or not list(folder.glob("words-names-*"))


def test_a_cache_folder_that_is_a_file_is_passed_over(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("VEIL_CACHE", str(blocker))
    assert _stored("names", lambda: ["wanjiku"]) == {"wanjiku"}


def test_the_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEIL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache_folder() == Path("/somewhere/veil")
    monkeypatch.setenv("VEIL_CACHE", "/else")
    assert cache_folder() == Path("/else")


def test_the_lists_read_back_equal_the_lists_built(folder: Path) -> None:
    built = vocabulary._build_first_names()
    assert _stored("first_names", vocabulary._build_first_names) == built
    assert _stored("first_names", list) == built  # read, not built again
    assert len(built) > 10_000


def test_without_a_home_folder_the_list_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory")

    monkeypatch.setattr(vocabulary, "cache_folder", no_home)
    assert _stored("names", lambda: ["wanjiku"]) == {"wanjiku"}
