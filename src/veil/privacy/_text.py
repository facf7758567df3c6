"""Quasi-identifiers repeated inside free text: a county the search generalized must not stay
readable in a note ("Outpatient visit at Nairobi clinic"). Each released text cell that holds
an original value of a generalized quasi-identifier gets its row's released value instead
(``Rift Valley``), or a tag (``<county>``) where the value is another row's or the released
one says nothing (``*``); how many were replaced is counted for the certificate."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.exceptions import CheckFailedError
from veil.privacy.certificate import StepRecord

__all__ = ["leftover_quasi", "scrub_quasi", "scrub_record", "text_columns"]

#: A value shorter than this, or with no letter, is not searched for in text (a code "A", an
#: age "45" would match everywhere); one longer than ``MAX_LENGTH`` is no category a note
#: repeats (a hostile 10 MB cell would make the search's pattern 10 MB).
MIN_LENGTH = 3
MAX_LENGTH = 200


def _is_text(series: pd.Series) -> bool:
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)


#: A column is free text when this share of its cells hold three words or more.
PROSE_SHARE = 0.2


#: How many of a column's first cells (not missing) ``_is_prose`` reads.
PROSE_SAMPLE = 10_000


def _is_prose(series: pd.Series) -> bool:
    # the first cells not missing, found in the first rows when they hold them (a batch of
    # 500,000 rows is not copied whole to read 10,000 of them)
    cells = series.iloc[: 2 * PROSE_SAMPLE].dropna()
    if len(cells) < PROSE_SAMPLE < len(series):
        cells = series.dropna()
    if not len(cells):
        return False
    sample = cells.iloc[:PROSE_SAMPLE].astype(str)
    # each distinct text's words counted once, weighed by its cells: a column of categories
    # (a release's every batch asks of each) in 1.2 ms rather than 4.9, the same share
    held = sample.value_counts(sort=False)
    words = held.index.to_series().str.count(r"\S+").to_numpy()
    return bool(held.to_numpy()[words >= 3].sum() / len(sample) >= PROSE_SHARE)


def text_columns(frame: pd.DataFrame, quasi: Sequence[str]) -> list[str]:
    """The released columns a quasi-identifier's value could be written in: free text (notes,
    comments), not a quasi-identifier itself. Categories ("yes", "south") are not searched:
    a value equal to another column's is no leak."""
    return [
        str(c)
        for c in frame.columns
        if c not in quasi and _is_text(frame[c]) and _is_prose(frame[c])
    ]


def _searchable(values: pd.Series) -> list[str]:
    texts = {str(v).strip() for v in values.dropna().unique()}
    return sorted(
        (t for t in texts if MIN_LENGTH <= len(t) <= MAX_LENGTH and re.search(r"[^\W\d_]", t)),
        key=lambda t: (-len(t), t),
    )


def _pattern(values: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, values)) + r")(?!\w)", re.I)


def _hits(cells: pd.Series, values: list[str], pattern: re.Pattern[str]) -> pd.Series:
    """Which cells hold one of ``values`` as whole words: Arrow's RE2 kernel first (linear in
    the text whatever the number of values: 2,000 town names over 100,000 notes took Python's
    engine 8 s), Python's ``pattern`` where RE2 cannot take the alternation."""
    texts = cells.astype(str).where(cells.notna(), "")
    alternation = "|".join(re.escape(v) for v in values)
    try:
        found = pc.match_substring_regex(
            pa.array(texts.to_numpy(dtype=object), type=pa.string()),
            rf"(?i)(?:^|[^\w])(?:{alternation})(?:[^\w]|$)",
        ).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return texts.str.contains(pattern) & cells.notna()
    # RE2's \w is ASCII: a letter such as é next to a value may be a false hit, which the
    # replacement (Python's \w, Unicode) then leaves alone
    return pd.Series(found, index=cells.index) & cells.notna()


def _generalized(before: pd.Series, after: pd.Series) -> pd.Series:
    """The original values of the rows whose released value differs (aligned by index)."""
    original = before.reindex(after.index)
    return original[original.astype(str) != after.astype(str)]


def scrub_quasi(
    before: pd.DataFrame,
    after: pd.DataFrame,
    quasi: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """``after`` (the released rows, index labels from ``before``) with every original value
    of a generalized text quasi-identifier replaced in the text columns (``columns``:
    ``text_columns(after, quasi)`` when the caller has them), and the count per
    quasi-identifier."""
    counts: dict[str, int] = {}
    if not before.index.is_unique:  # rows cannot be paired: leftover_quasi refuses instead
        return after, counts
    columns = text_columns(after, quasi) if columns is None else list(columns)
    if not columns:  # no text to hold a value
        return after, counts
    out = after
    for name in quasi:
        if name not in before.columns or name not in after.columns or not _is_text(before[name]):
            continue
        changed = _generalized(before[name], after[name])
        values = _searchable(changed)
        if not values or not columns:
            continue
        pattern = _pattern(values)
        own = before[name].reindex(after.index).astype(str).str.strip().str.casefold()
        released = after[name].astype(str)
        replaced = 0
        for column in columns:
            cells = out[column]
            hit = _hits(cells, values, pattern)
            if not hit.any():
                continue
            if out is after:
                out = after.copy()
            fixed = []
            for label, text in cells[hit].items():
                mine, shown = str(own.at[label]), str(released.at[label])
                # a released label that names original values ("Coast / Nairobi", "Teacher /
                # Nurse / …") would put them back in the text: a tag instead
                readable = shown not in {"*", mine} and not pattern.search(shown)

                def swap(
                    match: re.Match[str],
                    mine: str = mine,
                    shown: str = shown,
                    readable: bool = readable,
                    tag: str = f"<{name}>",
                ) -> str:
                    return shown if readable and match.group(0).casefold() == mine else tag

                new, n = pattern.subn(swap, str(text))
                fixed.append(new)
                replaced += n
            out.loc[hit, column] = fixed
        if replaced:
            counts[name] = replaced
    return out, counts


def leftover_quasi(
    before: pd.DataFrame,
    after: pd.DataFrame,
    quasi: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
) -> None:
    """Refuse, in one line, a release whose text columns (``columns``: ``text_columns(after,
    quasi)`` when the caller has them) still hold an original value of a released row's
    quasi-identifier that the release generalized (in no released row kept as it was)."""
    columns = text_columns(after, quasi) if columns is None else list(columns)
    if not columns:  # no text to hold a value
        return
    for name in quasi:
        if name not in before.columns or name not in after.columns or not _is_text(before[name]):
            continue
        kept = {str(v).strip().casefold() for v in after[name].dropna().unique()}
        # the released rows' own values (a county only suppressed records held is no leak when
        # another record's note names it); every row's when rows cannot be paired
        original = before[name].reindex(after.index) if before.index.is_unique else before[name]
        gone = [v for v in _searchable(original) if v.casefold() not in kept]
        if not gone:
            continue
        pattern = _pattern(gone)
        for column in columns:
            cells = after[column].dropna().astype(str)
            found = cells[_hits(cells, gone, pattern)]
            if len(found):
                value = pattern.search(found.iloc[0])
                raise CheckFailedError(
                    f"the release's {column!r} still holds {name} as it was before the search "
                    f"generalized it ({value.group(0) if value else '?'!r} in {len(found):,} "
                    f"cells); redact {column!r} (or drop it) so the text does not undo "
                    f"{name}'s generalization"
                )


def scrub_record(replaced: dict[str, int], rows: int, width: int) -> StepRecord:
    """The certificate's record of what ``scrub_quasi`` replaced, per quasi-identifier."""
    shown = ", ".join(f"{name} {n:,}" for name, n in replaced.items())
    return StepRecord(
        "scrub_text",
        "privacy",
        f"ScrubText(generalized values replaced in free text: {shown})",
        rows,
        width,
        counts=dict(replaced),
    )
