"""Free text searched as a column (``find_entities_cells``, ``find_all_cells``): the same spans
as searching each text alone, on the labelled notes, on hostile variants of them (other
scripts' digits and spaces, a lone surrogate, cues in letters that are not ASCII), and on
generated text; and Arrow's kernels do spare the searches that cannot find anything."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.scan import text as search
from veil.scan.text import find_all, find_all_cells, find_entities, find_entities_cells

NOTES_CSV = Path(__file__).parents[1] / "data" / "free_text_notes.csv"


def notes() -> list[str]:
    with NOTES_CSV.open(encoding="utf-8") as fh:
        return [row["note"] for row in csv.DictReader(fh)]


ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def hostile(note: str) -> list[str]:
    """The note as a hostile or merely unusual cell could write it."""
    return [
        note,
        note.translate(ARABIC_DIGITS),  # Python's \d reads these; RE2's does not
        note.replace(" ", "\u00a0"),  # no-break spaces: Python's \s, not RE2's
        note.replace(" ", "\x0b"),
        note.replace(" ", "\u2003 "),
        note.replace("Call", "\uff23all").replace("Dear", "Dèar"),  # cues folded to ASCII
        note + " \ud800",  # a lone surrogate: no UTF-8, Arrow cannot hold it
        "-" + note.replace(" ", " -"),
        note.upper(),
        note.lower(),
        note.replace(".", ". "),
        f"{note} {note}",
    ]


def alone(texts: list[str], entities: list[str] | None = None) -> list[list[search.Span]]:
    return [find_all(text, entities) for text in texts]


def test_the_column_finds_what_each_text_alone_finds_on_hostile_variants() -> None:
    texts = [variant for note in notes() for variant in hostile(note)]
    texts += ["", " ", "Mr.Otieno", "Mr. Otieno", "to ID", "x-Bob Smith", "Bw. O'B Kamau"]
    texts += ["dèar Carrie, thanks", "please cÀll Carrie today"]  # cues once folded
    texts += ["Admitted at Nairóbi on 12 March 2024", "Seen at the Thíka branch"]  # places
    assert len(texts) > 600
    assert find_all_cells(texts) == alone(texts)
    assert find_entities_cells(texts) == [find_entities(text) for text in texts]
    # some hostile variant still holds an entity that only Python's reading finds
    arabic = [n.translate(ARABIC_DIGITS) for n in notes()]
    assert any(span.entity == "PHONE" for found in find_all_cells(arabic) for span in found)


@pytest.mark.parametrize(
    "entities",
    [["PHONE"], ["PERSON"], ["LOCATION", "DATE"], ["EMAIL", "PERSON", "DATE"], []],
)
def test_a_limited_search_finds_what_each_text_alone_finds(entities: list[str]) -> None:
    texts = [variant for note in notes() for variant in hostile(note)[:4]]
    assert find_all_cells(texts, entities) == alone(texts, entities)


def test_chunks_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = notes()
    whole = find_all_cells(texts)
    monkeypatch.setattr(search, "CELLS_AT_ONCE", 7)
    assert find_all_cells(texts) == whole


# generated text: words of the labelled notes, numbers, addresses, every kind of space and
# digit, letters with accents, the punctuation that breaks or joins a name
_PIECES = sorted({w for note in notes() for w in re.findall(r"\S+", note)})
_ODD = ["٣٤٥", "\u00a0", "\x0b", "\u2019", "-", ".", "@", "+254", "Ñ", "ß", "é", "\t", "Mr.", "Bi"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.sampled_from(_PIECES), st.sampled_from(_ODD), st.text(max_size=6)),
            max_size=12,
        ).map(lambda parts: " ".join(parts)),
        min_size=1,
        max_size=8,
    )
)
def test_generated_texts_give_the_same_spans(texts: list[str]) -> None:
    assert find_all_cells(texts) == alone(texts)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789٣٤ \u00a0\x0b\t-.()+xe@abAB"), max_size=30))
def test_the_re2_form_of_a_pattern_matches_wherever_python_does(text: str) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    column = pa.array([text], type=pa.string())
    for searcher in search._searchers():
        prefilter = search._standing_alone(searcher.recognizer.text_union)
        assert prefilter is not None  # every searcher's pattern has an RE2 form
        if searcher.regex.search(text):
            assert pc.match_substring_regex(column, prefilter)[0].as_py(), searcher.entity


def test_what_re2_cannot_read_alike_is_searched_everywhere() -> None:
    assert search._for_re2(r"(?<!\d)\d{3}") is None
    assert search._for_re2(r"\bword") is None
    assert search._for_re2(r"(a)\1") is None
    assert search._for_re2(r"[\s.-]\d{1,64}") == r"[\t-\r\x1c-\x1f\x85\p{Z}.-]\p{Nd}{1,}"


def test_a_search_runs_only_where_arrow_says_it_may_find_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[tuple[str, str]] = []
    real = search._searched

    def counted(searcher: search._Searcher, text: str, where: int = 0) -> list[search.Span]:
        searched.append((searcher.entity, text))
        return real(searcher, text, where)

    monkeypatch.setattr(search, "_searched", counted)
    texts = ["Claim closed after the assessor's visit."] * 50 + ["Call 0712 345 678 now"]
    found = find_entities_cells(texts)
    assert [s.entity for s in found[-1]] == ["PHONE"]
    assert all(text == texts[-1] for _, text in searched)  # no digit: no number searched
    assert len(searched) < len(search._searchers())


def _resolved_plainly(spans: list[search.Span]) -> list[search.Span]:
    """Presidio's rule as written: each span, surest and longest first, kept unless it
    overlaps one already kept (quadratic: the oracle, not the search)."""
    kept: list[search.Span] = []
    for span in sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start)):
        if all(span.end <= k.start or span.start >= k.end for k in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 12), st.sampled_from([0.7, 0.75, 0.8, 0.95])),
        max_size=40,
    )
)
def test_overlaps_are_resolved_as_the_plain_rule_resolves_them(
    raw: list[tuple[int, int, float]],
) -> None:
    spans = [search.Span("X", start, start + width, score) for start, width, score in raw]
    assert search._resolve(spans) == _resolved_plainly(spans)


def test_a_cell_of_many_places_has_every_place_found() -> None:
    cell = "Nairobi " * 20_000  # one span a word: resolving them was quadratic
    found = find_all_cells([cell])[0]
    assert len(found) == 20_000
    assert all(cell[s.start : s.end] == "Nairobi" for s in found)


def test_a_column_repeating_its_notes_gets_each_its_own_list() -> None:
    texts = notes()[:40] * 3
    found = find_all_cells(texts)
    assert found == alone(texts)
    assert found[0]
    assert found[0] is not found[40]  # searched once, one list per cell
    found[0].clear()
    assert found[40] == find_all(texts[40])


def test_no_garbage_collection_runs_inside_a_search_and_the_collector_is_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc
    from contextlib import contextmanager

    texts = [f"{note} {i}" for i, note in enumerate(notes() * 30)]
    paused_at_each_run: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            paused_at_each_run.append(search._PAUSES)

    gc.callbacks.append(seen)
    try:
        find_all_cells(texts)
        # the one collection the search postponed may run as it ends, none inside it
        assert not any(paused_at_each_run)
        assert gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        find_all_cells(texts[:50])
        assert not gc.isenabled()
        gc.enable()
        with search._collector_paused():
            with search._collector_paused():  # nested: one pause
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()

        @contextmanager
        def counted_only() -> Iterator[None]:  # the pause's count, the collector left on
            search._PAUSES += 1
            try:
                yield
            finally:
                search._PAUSES -= 1

        monkeypatch.setattr(search, "_collector_paused", counted_only)
        paused_at_each_run.clear()
        find_all_cells(texts)
        assert any(paused_at_each_run)  # without the pause, the same search collects inside
    finally:
        gc.callbacks.remove(seen)
        gc.enable()


def test_concurrent_searches_leave_the_collector_on() -> None:
    import gc
    from concurrent.futures import ThreadPoolExecutor

    texts = notes()
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(find_all_cells, [texts] * 8))
    assert all(result == results[0] for result in results)
    assert gc.isenabled()
