"""``scan``: what in a table is personal, column by column, with evidence.

Each column is sampled (``sample_size`` random non-missing values) and every recognizer looks
at the sample; the winning pattern is then confirmed on all rows with one vectorized regex.
Value evidence and the column's name are combined (noisy-or), so named columns are recognized
surely and opaque ones (``c00``, ``c01``) still from their values.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from veil.risk.assess import RiskSummary, assess
from veil.scan.hints import KEY, NameHint, is_opaque, names_one_of, read_name
from veil.scan.recognizers import (
    ENTITY_INFO,
    RECOGNIZERS,
    TEXT_RECOGNIZERS,
    ColumnSample,
    Evidence,
)
from veil.scan.recognizers.base import InMemory, percent
from veil.scan.recognizers.generic import FREE_TEXT
from veil.scan.recognizers.special import ENTITIES as SPECIAL_ENTITIES
from veil.scan.text import (
    CONFIRMED,
    TextFindings,
    find_entities_cells,
    label,
    search_cells,
)
from veil.schema import ColumnRole, ColumnSpec, Schema

#: The role each entity gives its column, as its recognizer's module declares it.
ROLE_OF: dict[str, ColumnRole] = {name: ColumnRole(e.role) for name, e in ENTITY_INFO.items()}
ENTITIES = tuple(ROLE_OF)
#: The special categories of data (health, beliefs, ethnicity...; ``recognizers.special``).
SPECIAL = frozenset(e.name for e in SPECIAL_ENTITIES)
#: Values sampled per column for the recognizers to decide on.
SAMPLE_SIZE = 1000
MIN_SCORE = 0.5  # below this, evidence is reported but does not make a column personal
NAME_ONLY = 0.85  # a name without supporting values counts for a little less
HEURISTIC_UNDER_OTHER_NAME = 0.8  # distribution evidence under a name that says otherwise


@dataclass(frozen=True)
class ColumnFinding:
    """What the scan found about one column: its role, entity, confidence and evidence."""

    name: str
    role: ColumnRole
    entity: str | None
    confidence: float
    evidence: str
    distinct_ratio: float
    null_ratio: float
    kind: str
    free_text: bool = False  # words rather than codes: searched inside for entities
    in_text: dict[str, float] = field(default_factory=dict)  # entity -> share of cells
    #: a quasi-identifier's or sensitive column's values that hold a direct identifier, found
    #: by a search of every value (``swept``; its evidence says where): redacted in the
    #: suggested policy, refused in a release that leaves them as they are
    held: Held | None = None

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON values."""
        return {
            "name": self.name,
            "role": self.role.value,
            "entity": self.entity,
            "confidence": round(self.confidence, 3),
            "evidence": self.evidence,
            "distinct_ratio": round(self.distinct_ratio, 4),
            "null_ratio": round(self.null_ratio, 4),
            "kind": self.kind,
            "free_text": self.free_text,
            "in_text": self.in_text,
        }


#: A table is of a kind (health data) when this many of its columns are (or this share of them).
KIND_TABLE_COLUMNS = 3
KIND_TABLE_SHARE = 0.25


@dataclass(frozen=True)
class ScanResult:
    """The scan of a table: one finding per column (``column(name)``) and the re-identification
    risk on the quasi-identifiers found."""

    columns: tuple[ColumnFinding, ...]
    rows: int
    sample_size: int
    risk: RiskSummary
    #: a scan in passes (``veil.scan.passes``): the rows of each combination of the
    #: quasi-identifiers (column ``count``), which a suggested policy is fitted on
    counts: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def special_categories(self) -> dict[str, list[str]]:
        """The columns of each special category of data found (``HEALTH``: [...])."""
        found: dict[str, list[str]] = {}
        for c in self.columns:
            if c.entity in SPECIAL:
                found.setdefault(str(c.entity), []).append(c.name)
        return found

    @property
    def health_data(self) -> bool:
        """Whether the table as a whole is health data (GDPR art. 9, Kenya DPA s. 2)."""
        return is_table_of("HEALTH", self.columns)

    def category_lines(self) -> list[str]:
        """What special categories of data the table holds, in sentences."""
        lines = []
        health = self.special_categories.get("HEALTH", [])
        if self.health_data:
            lines.append(
                f"health data: {len(health)} of {len(self.columns)} columns are clinical "
                "(GDPR art. 9, Kenya DPA s. 2 sensitive personal data): the whole table is "
                "special-category data"
            )
        for entity, names in self.special_categories.items():
            if entity != "HEALTH" or not self.health_data:
                lines.append(f"{label(entity)}: {', '.join(names)} (special category)")
        return lines

    @property
    def quasi_identifiers(self) -> list[str]:
        """The columns found to be quasi-identifiers, in table order."""
        return [c.name for c in self.columns if c.role is ColumnRole.QUASI_IDENTIFIER]

    def column(self, name: str) -> ColumnFinding:
        """The finding for the column ``name``; an ``UnknownColumnError`` lists the columns."""
        for finding in self.columns:
            if finding.name == name:
                return finding
        raise KeyError(name)

    def to_schema(self) -> Schema:
        """The roles found, as a ``Schema``."""
        return Schema(tuple(ColumnSpec(c.name, c.role) for c in self.columns))

    def risk_lines(self) -> list[str]:
        """The re-identification risk in sentences, as ``veil scan`` prints it."""
        risk = self.risk
        if not risk.quasi_identifiers:
            return ["no quasi-identifiers found"]
        lines = [
            f"quasi-identifiers: {', '.join(risk.quasi_identifiers)} — {risk.unique_rows:,} of "
            f"{risk.rows:,} rows ({risk.uniqueness:.1%}) are unique on them (k = {risk.k})"
        ]
        for combo in risk.most_identifying[:3]:
            lines.append(
                f"{' + '.join(combo['columns'])} alone singles out {combo['unique_rows']:,} rows "
                f"({combo['uniqueness']:.1%})"
            )
        if risk.population is not None:
            lines += risk.population.lines()
        return lines

    def _repr_html_(self) -> str:
        from veil._html import card

        rows = [
            (
                c.name,
                (c.role.value, c.role.value),
                c.entity or "",
                f"{c.confidence:.2f}",
                c.evidence,
            )
            for c in self.columns
        ]
        return card(
            f"veil scan: {self.rows:,} rows",
            rows=rows,
            lines=self.risk_lines(),
            headers=("column", "role", "entity", "conf.", "evidence"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The scan as JSON values: what ``veil scan --format json`` prints."""
        return {
            "columns": [c.to_dict() for c in self.columns],
            "quasi_identifiers": self.quasi_identifiers,
            "special_categories": self.special_categories,
            "health_data": self.health_data,
            "risk": self.risk.to_dict(),
            "rows": self.rows,
            "sample_size": self.sample_size,
        }

    def to_json(self) -> str:
        """The scan as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


#: The confidence of `insensitive` when nothing personal was found, calibrated: the share of
#: the columns called so that were harmless, over every labelled column of
#: bench/scan_accuracy.py (Faker, real and generated tables: 0.882 when measured).
NO_EVIDENCE = 0.88


def kind_of(dtype: Any) -> str:
    """What recognizers take a column of ``dtype`` for: numeric, datetime, boolean or text
    (categories and words alike)."""
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    return "text"


def priorities(name: str, positions: np.ndarray, seed: int) -> np.ndarray:
    """A random number per row (SplitMix64 of its position, keyed by ``seed`` and the column's
    name): the sample is the rows of the smallest ones, so the same rows are drawn whether the
    table is scanned whole, in batches or on a cluster's partitions."""
    digest = hashlib.sha256(f"veil-scan:{seed}:{name}".encode()).digest()
    key = np.uint64(int.from_bytes(digest[:8], "little"))
    with np.errstate(over="ignore"):
        z = (positions.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15) + key
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def smallest(keys: np.ndarray, size: int) -> np.ndarray:
    """The indices of the ``size`` smallest ``keys``, smallest first."""
    if len(keys) > size:
        chosen = np.argpartition(keys, size - 1)[:size]
        return chosen[np.argsort(keys[chosen], kind="stable")]
    return np.argsort(keys, kind="stable")


def sample_column(name: str, series: pd.Series, *, sample_size: int, seed: int = 0) -> ColumnSample:
    """What recognizers look at: up to ``sample_size`` of the column's present values (the
    rows of the smallest ``priorities``), their text, and the whole column to confirm on."""
    valid_positions = np.flatnonzero(series.notna().to_numpy())
    chosen = smallest(priorities(str(name), valid_positions, seed), sample_size)
    positions = np.sort(valid_positions[chosen])
    kind = kind_of(series.dtype)
    return ColumnSample(
        name=str(name),
        whole=InMemory(series, kind),
        sample=series.iloc[positions],
        n_rows=len(series),
        n_valid=len(valid_positions),
        n_distinct=int(series.nunique(dropna=True)),
        kind=kind,
        positions=positions,
    )


def _embedded(column: ColumnSample) -> tuple[Evidence | None, TextFindings]:
    """Personal data inside text: the share of sampled cells holding each entity (a phone
    number, an e-mail address, a name...), with the first row it was seen in. The column
    carries personal data when a confirmed entity (a checksum, a parse, an e-mail address)
    is in any cell, or any entity is in at least 1% of the cells (and two)."""
    rows = column.positions if column.positions is not None else range(len(column.texts))
    found = search_cells(column.texts, [int(r) for r in rows])
    sure = found.confirmed > 0
    if not found.with_any or not (sure or found.with_any >= max(2, 0.01 * found.cells)):
        return None, found
    scope = "sampled cells" if column.n_valid > found.cells else "cells"
    ranked = sorted(found.counts, key=lambda e: -found.counts[e])
    parts = [
        f"{percent(found.share(e))} {'of ' + scope + ' contain ' if i == 0 else ''}"
        f"{label(e)} (e.g. row {found.first_row[e] + 1:,})"
        for i, e in enumerate(ranked)
    ]
    share = found.with_any / found.cells
    score = min(0.99, 0.7 + 0.3 * min(1.0, 10 * share) + (0.1 if sure else 0.0))
    return Evidence(FREE_TEXT, score, "free text: " + ", ".join(parts), role="identifier"), found


#: the entities text holds by their pattern (every one but a person's name)
_PATTERNED = frozenset(r.entity for r in TEXT_RECOGNIZERS)
#: what a value holding one of them has: an "@" (e-mail), a colon (IPv6), four digits
#: (an IPv4 address's least; phone numbers and IDs have more), or a digit and fifteen
#: characters (an IBAN's least: two digits, the rest may be letters). Each pattern's least
#: is derived from its expression in ``tests/scan/test_may_hold.py``. A digit is
#: ``\d``'s, as the patterns have it: an Arabic-Indic one counts.
_SIGN = re.compile(r"[@:]")
_DIGIT = re.compile(r"\d")
#: four digits: tried only where a digit is, each try to the next digits, so a long text with
#: three digits costs three reads of it, never one per character
_FOUR_DIGITS = re.compile(r"\d(?:\D*+\d){3}")
_IBAN_LEAST = 15


def may_hold(text: str) -> bool:
    """Whether ``text`` may hold a direct identifier text holds by its pattern: it has what
    every one of them has (``_FOUR_DIGITS``...), so a text without it is not searched. Most
    categories' values have no such thing (``<=50K``, ``2nd``, ``Grade 11``)."""
    if _SIGN.search(text) or _FOUR_DIGITS.search(text):
        return True
    return len(text) >= _IBAN_LEAST and _DIGIT.search(text) is not None


class Found(NamedTuple):
    """A text's first confirmed direct identifier, and whether it holds two different ones."""

    entity: str
    several: bool


class Place(NamedTuple):
    """A value holding a direct identifier (``first_rows``): its entity, its first row, and
    whether it holds two different ones."""

    entity: str
    row: int
    several: bool


def _confirmed(texts: Sequence[str]) -> list[Found]:
    """Per text, the first direct identifier in it that a checksum, a parse or its form
    confirms (``""`` for none), of those text holds by their pattern, and whether it holds two
    different ones. Only texts that may hold one are searched (``may_hold``), so a column of
    words or of short numbers compiles no pattern. A date (22.08.1946) holds
    no phone number though its digits parse as one: the text search knows it."""
    held = [Found("", several=False)] * len(texts)
    candidates = [i for i, text in enumerate(texts) if may_hold(text)]
    if not candidates:
        return held
    found = find_entities_cells([texts[i] for i in candidates], _PATTERNED)
    for i, spans in zip(candidates, found, strict=True):
        confirmed = [span for span in spans if span.score >= CONFIRMED]
        if confirmed:
            # one cell listing phone numbers: no chance match makes two different ones
            several = len(confirmed) >= 2 and (
                len({texts[i][span.start : span.end] for span in confirmed}) >= 2
            )
            held[i] = Found(confirmed[0].entity, several)
    return held


def _scattered(column: ColumnSample) -> tuple[str, Evidence] | None:
    """Direct identifiers among a column's values too few for its recognizers, which ask for
    most of the values (an e-mail address in 38% of the rows, ``none`` in the others): the
    column carries personal data when identifiers a checksum, a parse or their form confirm
    are in two of the sampled cells (in free text one is enough). Names are not searched here:
    a word of a category may be one."""
    texts = [str(t) for t in column.texts]
    held = [found.entity for found in _confirmed(texts)]
    cells = [i for i, entity in enumerate(held) if entity]
    if len(cells) < 2:
        return None
    first = cells[0]
    row = int(column.positions[first]) if column.positions is not None else first
    share = len(cells) / len(texts)
    scope = "sampled values" if column.n_valid > len(texts) else "values"
    detail = (
        f"{percent(share)} of {scope} are or hold {label(held[first])} (e.g. row {row + 1:,}), "
        "too few for the column to read as one"
    )
    return held[first], Evidence(FREE_TEXT, min(0.99, 0.8 + 2 * share), detail, role="identifier")


#: what one value of is enough for ``held_identifiers``: an e-mail address's form is
#: unmistakable, where one number may parse as a phone number or pass a check digit by chance
#: (a value holding two different ones is enough too: ``Found.several``)
_SURE_ALONE = frozenset({"EMAIL"})
#: rows a finding of ``held_identifiers`` names at most
_SHOWN = 3


@dataclass(frozen=True)
class Held:
    """Direct identifiers among a column's values (``held_identifiers``): their entities (the
    first value's first), the rows (from 0) of the first values holding one, and how many
    distinct values do."""

    entities: tuple[str, ...]
    rows: tuple[int, ...]
    values: int

    @classmethod
    def of(cls, found: dict[str, Place]) -> Held | None:
        """From each distinct value holding one: its entity and its first row (``held_values``,
        of a whole column or merged over its batches); None when too few to count."""
        ordered = sorted(found.values(), key=lambda held: held.row)
        if not ordered:
            return None
        alone = ordered[0]
        if len(ordered) < 2 and alone.entity not in _SURE_ALONE and not alone.several:
            return None
        entities = tuple(dict.fromkeys(held.entity for held in ordered))
        return cls(entities, tuple(held.row for held in ordered[:_SHOWN]), len(ordered))

    def __str__(self) -> str:
        shown = [f"{r + 1:,}" for r in self.rows]
        rows = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
        more = f" ({self.values:,} distinct values)" if self.values > len(shown) else ""
        one = len(shown) == 1
        held = [label(e) for e in self.entities]
        what = held[0] if len(held) == 1 else ", ".join(held[:-1]) + " or " + held[-1]
        return f"{'row' if one else 'rows'} {rows}{more} {'holds' if one else 'hold'} {what}"


def held_texts(texts: Sequence[str]) -> dict[str, Found]:
    """Of distinct ``texts``, those holding a direct identifier text holds by its pattern
    (e-mail, phone, card, IBAN, IP, national IDs; no names), confirmed by a checksum, a parse
    or its form, with its entity."""
    return {
        text: found for text, found in zip(texts, _confirmed(texts), strict=True) if found.entity
    }


def first_rows(series: pd.Series, held: dict[str, Found], first_row: int = 0) -> dict[str, Place]:
    """Each of the ``held`` texts (``held_texts``) in ``series``: its entity and its first row
    (counted from ``first_row``)."""
    if not held:
        return {}
    values = series.astype(str)
    rows = np.flatnonzero(values.isin(list(held)).to_numpy())
    firsts = np.unique(values.iloc[rows].to_numpy(), return_index=True)
    return {
        str(text): Place(held[str(text)].entity, first_row + int(rows[at]), held[str(text)].several)
        for text, at in zip(*firsts, strict=True)
    }


def held_values(series: pd.Series, first_row: int = 0) -> dict[str, Place]:
    """Each distinct value of a text column that holds a direct identifier (``held_texts``):
    the entity and the value's first row (``first_rows``). Empty for numbers or dates."""
    if kind_of(series.dtype) != "text":
        return {}
    distinct = series.unique()  # Arrow's hash of Arrow-backed text: 9 ms for 1M rows
    distinct = distinct[~pd.isna(distinct)]
    return first_rows(series, held_texts([str(v) for v in distinct]), first_row)


def held_identifiers(series: pd.Series) -> Held | None:
    """Every distinct value of a text column searched for the direct identifiers text holds by
    their pattern (``held_values``): what a release of the column with its values must not
    put out, however rare (the scan decides on a sample of ``SAMPLE_SIZE`` values, and one
    address in 30,000 rows is seldom in it). Held when two distinct values hold one, or one
    value an e-mail address."""
    return Held.of(held_values(series))


def _inside_values(
    column: ColumnSample, values: dict[str, Evidence]
) -> tuple[bool, dict[str, float]]:
    """Where no recognizer is sure of the whole values: prose searched inside (whether it is,
    and the share of cells holding each entity), or the few values that are or hold a direct
    identifier; what either finds is added to ``values`` as ``FREE_TEXT``."""
    in_text: dict[str, float] = {}
    unsure = max((v.score for v in values.values()), default=0) < 0.8
    prose = unsure and column.has_prose
    if prose:
        embedded, found = _embedded(column)
        in_text = {e: round(found.share(e), 4) for e in sorted(found.counts)}
        if embedded is not None:
            values[FREE_TEXT] = embedded
    elif unsure and column.kind == "text" and (scattered := _scattered(column)) is not None:
        held, evidence = scattered
        if held not in values:  # a recognizer's own evidence of it says more
            values[FREE_TEXT] = evidence
    return prose, in_text


def classify(column: ColumnSample) -> ColumnFinding:
    """Combine value evidence and name hints into one role, entity and confidence."""
    values: dict[str, Evidence] = {}
    for recognizer in RECOGNIZERS:
        evidence = recognizer.check(column)
        if evidence is not None:
            key = evidence.entity or KEY
            if key not in values or evidence.score > values[key].score:
                values[key] = evidence
    prose, in_text = _inside_values(column, values)
    names: dict[str, NameHint] = {h.entity: h for h in read_name(column.name)}
    meaningful = not is_opaque(column.name)
    if (
        KEY in names
        and KEY not in values
        and column.distinct_ratio < 0.5
        and (column.n_distinct < max(50, 0.05 * column.n_valid))
    ):  # "id" of a category (few values) is no key to a person; a member number repeated
        del names[KEY]  # over each member's claims still is one

    scored: list[tuple[float, str]] = []
    # in the recognizers' order, then the name's hints: a tie goes the same way in every run
    # (a set's order follows each process's string hashes: "none" in 30,162 rows was a
    # place in some runs and a health state in others)
    for key in dict.fromkeys([*values, *names]):
        v = values[key].score if key in values else 0.0
        if key in values and values[key].heuristic and meaningful and key not in names:
            v *= HEURISTIC_UNDER_OTHER_NAME
        n = names[key].score if key in names else 0.0
        score = 1 - (1 - v) * (1 - n) if v and n else (v or n * NAME_ONLY)
        scored.append((score, key))
    # ties go to a named entity rather than a bare key
    scored.sort(key=lambda item: (item[0], item[1] != KEY), reverse=True)

    null_ratio = 1 - column.n_valid / column.n_rows if column.n_rows else 0.0
    common: dict[str, Any] = {
        "name": column.name,
        "distinct_ratio": column.distinct_ratio,
        "null_ratio": null_ratio,
        "kind": column.kind,
        "free_text": prose,
        "in_text": in_text,
    }
    if not scored or scored[0][0] < MIN_SCORE:
        weak = f"; weak hint of {scored[0][1]}" if scored else ""
        text = (
            f"free text: no name, phone, e-mail, ID or card found in {len(column.texts):,} "
            "sampled cells (a rarer one may still be there)"
            if prose
            else "no personal pattern in the name or values"
        )
        confidence = 0.5 if prose else 1 - (scored[0][0] if scored else 1 - NO_EVIDENCE)
        return ColumnFinding(
            role=ColumnRole.INSENSITIVE,
            entity=None,
            confidence=confidence,
            evidence=text + weak,
            **common,
        )

    score, key = scored[0]
    parts = []
    if key in values:
        parts.append(values[key].detail)
    if key in names:
        parts.append(f"name {column.name!r} reads as {names[key].phrase!r}")
    entity = None if key == KEY else key
    override = values[key].role if key in values else None
    if override is not None:
        role = ColumnRole(override)
    elif entity is None:
        role = ColumnRole.IDENTIFIER
    else:
        role = ROLE_OF[entity]
    return ColumnFinding(
        role=role, entity=entity, confidence=min(score, 0.999), evidence="; ".join(parts), **common
    )


def is_table_of(entity: str, findings: Sequence[ColumnFinding]) -> bool:
    """Whether the table as a whole is of ``entity``'s kind (health data): at least three of
    its columns are, or a quarter of them (and two)."""
    n = sum(f.entity == entity for f in findings)
    return n >= KIND_TABLE_COLUMNS or (n >= 2 and n >= KIND_TABLE_SHARE * len(findings))


def _in_a_table_of_its_kind(findings: list[ColumnFinding]) -> list[ColumnFinding]:
    """In a table of an entity's kind, the columns named by that entity's ``table_hints``
    are of it too: in health data, the terse "slope", "ca", "status", "observation", and the
    column a model predicts ("target", "outcome"), which is the diagnosis."""
    for info in ENTITY_INFO.values():
        if not info.table_hints or not is_table_of(info.name, findings):
            continue
        n = sum(f.entity == info.name for f in findings)
        out = []
        for finding in findings:
            phrase = names_one_of(finding.name, info.table_hints)
            # a name read another way elsewhere ("grade": a school year in a survey) is this
            # kind's in a table of it (a tumour's grade), unless its values said otherwise
            named_only = finding.evidence.startswith("name ")
            if phrase is not None and (finding.role is ColumnRole.INSENSITIVE or named_only):
                evidence = (
                    f"name {finding.name!r} reads as {phrase!r}, {info.label} in a table where "
                    f"{n} of {len(findings)} columns are"
                )
                finding = replace(
                    finding,
                    role=ROLE_OF[info.name],
                    entity=info.name,
                    confidence=0.8,
                    evidence=evidence,
                )
            out.append(finding)
        findings = out
    return findings


def swept(finding: ColumnFinding, held: Held | None, sample_size: int) -> ColumnFinding:
    """``finding`` once a search of every value found direct identifiers among them (``held``):
    a column the sample found harmless becomes an identifier (``FREE_TEXT``: its step
    redacts); a quasi-identifier or a sensitive column keeps its role, with what it holds
    (``ColumnFinding.held``: its suggested step redacts them)."""
    if held is None or finding.role is ColumnRole.IDENTIFIER:
        return finding
    evidence = f"{held}, found by a search of every value (too few for a sample of {sample_size:,})"
    if finding.role is ColumnRole.INSENSITIVE:
        return replace(
            finding, role=ColumnRole.IDENTIFIER, entity=FREE_TEXT, confidence=0.9, evidence=evidence
        )
    return replace(finding, evidence=f"{finding.evidence}; {evidence}", held=held)


def scan(
    data: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    sample_size: int = SAMPLE_SIZE,
    random_state: int = 0,
    progress: Callable[[str], None] | None = None,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
    sweep: bool = True,
) -> ScanResult:
    """Classify every column of ``data`` as identifier, quasi-identifier, sensitive or
    insensitive, with the entity, a confidence and the evidence; then measure how unique
    the rows are on the quasi-identifiers found.

    Parameters
    ----------
    data : DataFrame
        The table (never modified).
    columns : list of str, optional
        Only these columns (default: all).
    sample_size : int
        Values sampled per column for the value recognizers.
    random_state : int
        Seed of the sample.
    progress : callable, optional
        Called with a description of each step.
    population, sampling_fraction, weights : optional
        The table is a sample of ``population`` people, or ``sampling_fraction`` of them, or
        each row stands for ``weights`` (a column) people: the risk adds population-
        uniqueness estimates and the journalist risk (``veil.risk.population``).
    sweep : bool
        Search every distinct value of each text column the sample found no identifier for
        the identifiers text holds by their pattern (``held_identifiers``), as the scan of a
        table in batches does on every batch (False: the sample alone): a column found
        harmless that holds one is an identifier (``FREE_TEXT``, redacted); a
        quasi-identifier or sensitive column keeps its role and says what it holds
        (``ColumnFinding.held``).

    Returns
    -------
    ScanResult
        One finding per column (``result.column(name)``) and the re-identification risk.

    Examples
    --------
    >>> import pandas as pd
    >>> import veil
    >>> df = pd.DataFrame({"phone": ["0712345678", "0722000111", "0733000222"] * 4,
    ...                    "county": ["Nairobi", "Kisumu", "Nakuru"] * 4})
    >>> found = veil.scan(df)
    >>> found.column("phone").role.value, found.column("phone").entity
    ('identifier', 'PHONE')
    """
    from veil.schema import require_columns

    names = list(data.columns) if columns is None else list(columns)
    require_columns(data, names, where="scan columns")
    findings = []
    for name in names:
        if progress is not None:
            progress(f"scanning {name}")
        sample = sample_column(str(name), data[name], sample_size=sample_size, seed=random_state)
        findings.append(classify(sample))
    findings = _in_a_table_of_its_kind(findings)
    if sweep:
        findings = [
            swept(f, held_identifiers(data[f.name]), sample_size)
            if f.role is not ColumnRole.IDENTIFIER
            else f
            for f in findings
        ]
    quasi = [f.name for f in findings if f.role is ColumnRole.QUASI_IDENTIFIER]
    if progress is not None:
        progress("measuring uniqueness on the quasi-identifiers")
    measured = assess(
        data, quasi, population=population, sampling_fraction=sampling_fraction, weights=weights
    )
    return ScanResult(tuple(findings), len(data), sample_size, measured)
