"""Redaction of free text at the speed Arrow allows: veil's search over a whole column of notes,
beside the same search note by note (the path before), Arrow's RE2 kernel alone and the
confirmations alone (the floors), measured in the same run.

    make bench-redact     (or: python bench/bench_redact.py [--notes 50000])

The notes are the scan benchmark's held-out notes (bench/heldout_notes.py: insurance and clinic
notes, entities labelled). For each way, wall and CPU seconds and notes per CPU second:

- veil, note by note: ``find_entities`` / ``find_all`` on each note (the search before);
- veil, as a column: ``find_entities_cells`` (what the scan's free-text search runs) and
  ``find_all_cells`` (what ``Redact`` replaces: names, numbers, places, dates); each must give
  the same spans as note by note, and the recall and false hits are printed to show it;
- ``Redact`` over the notes in a DataFrame (the user's path: each distinct note searched once);
- the floors: one RE2 kernel (the phone pattern) over the column, and the confirmations
  alone: the phone numbers, IBANs and cards' checks on exactly the values the search
  confirms. A search that confirms its hits as veil does cannot take less than these. The
  phone numbers among them are also confirmed by phonenumbers' own ``parse`` and
  ``is_valid_number`` (the confirmation before: veil now decides a number written with ASCII
  digits on its digits, with phonenumbers' metadata), and both answers are compared.

The target (issue: throughput at the limit) is >= 100,000 notes per CPU second.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from heldout_notes import ENTITY_OF, make_notes, recall  # bench/

from veil.scan import text as search
from veil.scan.recognizers import TEXT_RECOGNIZERS
from veil.scan.recognizers.generic import parsed_phone, phone_regions, valid_phone
from veil.transforms import Redact

TARGET = 100_000


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall, CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def line(what: str, n: int, wall: float, cpu: float, note: str = "") -> None:
    print(f"  {what:<52}{wall:>8.2f}s{cpu:>8.2f}s{n / cpu:>12,.0f}  {note}")


def cold() -> None:
    """Forget what earlier searches remembered of the values they met (phone numbers parsed,
    places looked up, words' keys): each way is timed as a new process runs it, with only its
    word lists and patterns loaded. (Timed after another way, the phone parses alone, ~0.35 s
    of 50,000 notes, were free.)"""
    valid_phone.cache_clear()
    search._is_known_place.cache_clear()
    search._WORDS.clear()


def confirmations(texts: list[str]) -> list[tuple[Callable[[str], Any], str]]:
    """The (check, value) pairs the column search confirms, recorded while it runs."""
    calls: list[tuple[Callable[[str], Any], str]] = []
    saved = {r: r.validate for r in TEXT_RECOGNIZERS if r.validate is not None}
    for recognizer, check in saved.items():

        def spy(value: str, check: Callable[[str], Any] = check) -> Any:
            calls.append((check, value))
            return check(value)

        recognizer.validate = spy
    try:
        search.find_all_cells(texts)
    finally:
        for recognizer, check in saved.items():
            recognizer.validate = check
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=50_000)
    args = parser.parse_args()
    labelled = make_notes(args.notes)
    texts = [text for text, _ in labelled]
    n = len(texts)
    distinct = list(dict.fromkeys(texts))
    search.find_all(texts[0])  # word lists and patterns load before any timing
    search.find_all_cells(texts[:100])
    print(
        f"Redaction: {n:,} held-out notes ({len(distinct):,} distinct, "
        f"{sum(map(len, texts)) / n:.0f} characters each); target >= {TARGET:,} notes per CPU s"
    )
    print(f"  {'':<52}{'wall':>9}{'CPU':>9}{'notes/CPU s':>13}")
    frame = pd.DataFrame({"notes": texts})
    ways: list[tuple[str, int, Callable[[], Any], str]] = [
        (
            "veil find_entities, note by note (before)",
            n,
            lambda: [search.find_entities(t) for t in texts],
            "",
        ),
        ("veil find_entities_cells, the column", n, lambda: search.find_entities_cells(texts), ""),
        (
            "veil find_all, note by note (before)",
            n,
            lambda: [search.find_all(t) for t in texts],
            "",
        ),
        (
            "veil find_all_cells, the column (redaction)",
            n,
            lambda: search.find_all_cells(texts),
            "",
        ),
        (
            "veil find_all_cells, the distinct notes only",
            len(distinct),
            lambda: search.find_all_cells(distinct),
            "",
        ),
        (
            "veil Redact over a DataFrame column",
            n,
            lambda: Redact("notes").fit_transform(frame),
            "(its scan of the column included)",
        ),
    ]
    for what, count, way, note in ways:  # each from the same heap: no other way's results kept
        gc.collect()
        cold()
        _, wall, cpu = timed(way)
        line(what, count, wall, cpu, note)

    arrow = pa.array(texts, type=pa.string())
    phone = next(s for s in search._searchers() if s.entity == "PHONE")
    kernel = search._standing_alone(phone.recognizer.text_union)
    _, wall, cpu = timed(lambda: pc.find_substring_regex(arrow, kernel))
    line("floor: one RE2 kernel (phones) over the column", n, wall, cpu)
    checks = confirmations(texts)
    cold()  # each distinct value confirmed once, as one search confirms it
    _, wall, cpu = timed(lambda: [check(value) for check, value in checks])
    line(f"floor: the {len(checks):,} confirmations alone", n, wall, cpu, "veil's checks")
    numbers = [value for check, value in checks if check is valid_phone]
    ways_of_phones: list[tuple[str, Callable[[str], Any]]] = [
        ("veil, on the digits", valid_phone),
        ("phonenumbers' parse", lambda v: parsed_phone(v, phone_regions(v))),
    ]
    answers = []
    for what, way in ways_of_phones:
        cold()
        got, wall, cpu = timed(lambda way=way: [way(v) for v in numbers])
        answers.append(got)
        line(f"  of which the {len(numbers):,} phones, {what}", n, wall, cpu)
    print(f"  the phone numbers' answers are the same both ways: {answers[0] == answers[1]}")

    cells = search.find_entities_cells(texts)  # the findings, checked after the timings
    same = cells == [search.find_entities(t) for t in texts]
    same_all = search.find_all_cells(texts) == [search.find_all(t) for t in texts]
    spans = [[(s.entity, s.start, s.end) for s in found] for found in cells]
    found, false_hits = recall(labelled, spans, {e: e for e in ENTITY_OF.values()})
    embedded = sum(total for total, _ in found.values())
    hit = sum(hits for _, hits in found.values())
    print(
        f"  the column gives the same spans as note by note: find_entities {same}, find_all "
        f"{same_all}; recall {hit / embedded:.1%}, false hits {false_hits}"
    )


if __name__ == "__main__":
    main()
