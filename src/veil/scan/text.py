"""Personal data inside free text: the entities of a note, with where they are.

``find_entities("Call Carrie on +1-875-988-3835")`` finds a person's name and a phone number,
with their character offsets, as Presidio's analyzer does. Two kinds of search, each declared
where its entity is (``Entity.in_text``, ``Entity.context``, ``Entity.label``):

- value patterns (e-mail addresses, phones, cards, IBANs, IP addresses, KRA PINs, SSNs...)
  searched inside the text, each hit confirmed by the same checksum or parse that confirms a
  whole value; a shape too common to search alone (a Kenyan ID's 6-8 digits) counts only
  shortly after one of its context words ("ID no 12345678");
- people's names: capitalized words after a title ("Mr Otieno", "Bi Wanjiru"), known given or
  family names after a cue ("Call Carrie", "Dear John", "spoke to Amina"), and pairs of a
  known given name and a known family name ("Grace Wanjiru"). The gazetteer is Faker's name
  lists in every locale; common words that are also names somewhere ("Will", "May", "Grace
  period") count only after a title or cue.

Overlapping hits are resolved as Presidio does: the surer, then the longer, wins. No model is
downloaded: the search is regular expressions, checksums and word lists.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from veil.scan.recognizers import ENTITY_INFO, TEXT_RECOGNIZERS, PatternRecognizer
from veil.scan.recognizers import vocabulary as words
from veil.scan.recognizers.base import LONGEST_WORD
from veil.scan.recognizers.normalize import normalize, normalize_place

#: A hit whose pattern is only a shape (no checksum, no parse) must score this much.
MIN_TEXT_SCORE = 0.75
#: A hit this sure is confirmed (a checksum, a phone-number parse, an e-mail address's form).
CONFIRMED = 0.95
#: How many words before a match its context word may be ("ID no. 12345678").
CONTEXT_WORDS = 3

PERSON = "PERSON"


@dataclass(frozen=True)
class Span:
    """One entity found in a text: ``text[start:end]`` is it."""

    entity: str
    start: int
    end: int
    score: float


def label(entity: str) -> str:
    """The entity in a sentence: ``PHONE`` -> ``a phone number``."""
    info = ENTITY_INFO.get(entity)
    return info.label if info is not None and info.label else entity.lower().replace("_", " ")


@dataclass(frozen=True)
class _Searcher:
    entity: str
    regex: re.Pattern[str]
    recognizer: PatternRecognizer
    context: re.Pattern[str]  # the entity's words shortly before a hit
    needs_context: bool  # a shape too common to count without them


def _words_before(phrases: Collection[str]) -> re.Pattern[str]:
    """One of ``phrases``, then at most ``CONTEXT_WORDS - 1`` words, at the end of a text."""
    cue = "|".join(re.escape(c).replace(r"\ ", r"[\s._-]*") for c in sorted(phrases))
    tail = rf"(?:\W+\w+){{0,{CONTEXT_WORDS - 1}}}\W*$"
    return re.compile(rf"(?i)\b(?:{cue})\b{tail}")


@cache
def _searchers() -> tuple[_Searcher, ...]:
    found = []
    for recognizer in TEXT_RECOGNIZERS:
        info = ENTITY_INFO[recognizer.entity]
        # a hit stands alone: no letter or digit glued to either end
        regex = re.compile(rf"(?<![A-Za-z0-9])(?:{recognizer.text_union})(?![A-Za-z0-9])")
        # as Presidio's context words: the entity's own words ("tel", "simu") make a
        # possible hit count; for a common shape they are required
        context = _words_before({*info.context, *info.hints})
        found.append(
            _Searcher(recognizer.entity, regex, recognizer, context, info.context_required)
        )
    return tuple(found)


_DATE = re.compile(
    r"(?:(?:19|20)\d\d[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:19|20)?\d\d)"
)


def _patterns(text: str, wanted: Collection[str] | None) -> list[Span]:
    spans = []
    for searcher in _searchers():
        if wanted is not None and searcher.entity not in wanted:
            continue
        for match in searcher.regex.finditer(text):
            value = match.group(0)
            if _DATE.fullmatch(value):  # 04-04-2021 is a date, whatever a phone plan allows
                continue
            score = searcher.recognizer.score_value(value, in_text=True)
            if score == 0.0:  # a checksum or parse said no
                continue
            if score < MIN_TEXT_SCORE or searcher.needs_context:
                before = text[max(0, match.start() - 40) : match.start()]
                if not searcher.context.search(before):
                    continue
                score = max(score, MIN_TEXT_SCORE)
            spans.append(Span(searcher.entity, match.start(), match.end(), score))
    return spans


_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'\u2019-]*\.?")


def _is_capitalized(token: str) -> bool:
    return (token[0].isupper() and not token.isupper()) or (len(token) <= 3 and token.istitle())


@lru_cache(maxsize=1 << 16)
def _word_key(word: str) -> str:
    """A word of a text as the word lists hold it (notes repeat their words: each is
    normalized once)."""
    return normalize(word)


def _names(text: str) -> list[Span]:
    first, last = words.first_names(), words.last_names()
    titles, cues, common = words.NAME_TITLES_IN_TEXT, words.NAME_CUES, words.NOT_NAMES_IN_TEXT
    # (start, end, word): a title's full stop is read ("Mr." is a title) but never in a span
    tokens = [
        (m.start(), m.start() + len(word), word)
        for m in _WORD.finditer(text)
        for word in (m.group(0).rstrip("."),)
    ]
    # each word as the word lists hold it, normalized once per distinct word across texts; a
    # word longer than any list's entry is none of them (a cell of megabytes of letters is one)
    keys = [_word_key(word) if len(word) <= LONGEST_WORD else "" for _, _, word in tokens]
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        start, _, token = tokens[i]
        key = keys[i]
        is_title = key in titles and (
            text[tokens[i][1] : tokens[i][1] + 1] == "."
            or key not in common
            or _is_capitalized(token)
        )
        cue = key in cues
        # the capitalized words that follow (at most three: "Mary Wanjiru Kamau")
        j = i + 1
        while j < len(tokens) and j - i <= 3 and _is_capitalized(tokens[j][2]):
            gap = text[tokens[j - 1][1] : tokens[j][0]].strip(" ")
            if gap and not (j == i + 1 and is_title and gap == "."):  # "Dr. Njoroge" is one
                break  # other punctuation breaks a name
            j += 1
        run = tokens[i + 1 : j]
        run_keys = keys[i + 1 : j]
        if j < len(tokens) and keys[j] in words.NAMED_AFTER:
            run, run_keys = [], []  # "Kenyatta Hospital", "Moi Avenue": places named after people
        # after a title any capitalized word is a name, unless it is a common word no locale
        # has as a name ("Mrs. Call back on...": a sentence that ended with the title)
        known = bool(run) and (run_keys[0] in first or run_keys[0] in last)
        named = bool(run) and (run_keys[0] not in common or known)
        if is_title and named and _is_capitalized(token) and run_keys[0] not in titles:
            spans.append(Span(PERSON, run[0][0], run[-1][1], 0.85))
            i = j
            continue
        surname = len(run_keys) > 1 and run_keys[-1] in last
        if cue and known and (run_keys[0] not in common or surname):
            spans.append(Span(PERSON, run[0][0], run[-1][1], 0.8))
            i = j
            continue
        # a known given name followed by a known family name, neither a common word
        if (
            _is_capitalized(token)
            and key in first
            and key not in common
            and key not in titles
            and key not in cues
            and i + 1 < len(tokens)
            and _is_capitalized(tokens[i + 1][2])
            and not text[tokens[i][1] : tokens[i + 1][0]].strip(" ")
        ):
            following = keys[i + 1]
            if following in last and following not in common:
                end = tokens[i + 1][1]
                if i + 2 < len(tokens) and _is_capitalized(tokens[i + 2][2]):
                    third = keys[i + 2]
                    if third in last and third not in common:
                        end = tokens[i + 2][1]
                spans.append(Span(PERSON, start, end, 0.75))
                i += 2
                continue
        i += 1
    return spans


def _resolve(spans: list[Span]) -> list[Span]:
    """Overlaps resolved: the surer hit wins, then the longer one (Presidio's rule)."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start)):
        if all(span.end <= k.start or span.start >= k.end for k in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def find_entities(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """Every entity found in ``text`` (of ``entities`` only, if given), in order.

    >>> [(s.entity, "Call Carrie on +1-875-988-3835"[s.start:s.end])
    ...  for s in find_entities("Call Carrie on +1-875-988-3835")]
    [('PERSON', 'Carrie'), ('PHONE', '+1-875-988-3835')]
    """
    if not text:
        return []
    spans = _patterns(text, entities)
    if entities is None or PERSON in entities:
        spans += _names(text)
    return _resolve(spans)


def text_entities() -> tuple[str, ...]:
    """The direct identifiers searched for inside text, in declaration order (``redact``
    replaces the quasi-identifiers of ``QUASI_IN_TEXT`` too)."""
    return tuple(dict.fromkeys([*(s.entity for s in _searchers()), PERSON]))


#: Quasi-identifiers searched for inside text by ``find_quasi``: places from the gazetteers
#: (Kenya's counties and towns, countries, cities) and dates. They do not make a column
#: personal free text (a note naming a branch's town is not a direct identifier), but
#: ``redact`` replaces them: a county generalized in its column must not stay in a note.
LOCATION, DATE = "LOCATION", "DATE"
QUASI_IN_TEXT = (LOCATION, DATE)

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE_IN_TEXT = re.compile(
    rf"(?<![\w/.-])(?:{_DATE.pattern}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+(?:19|20)\d\d"
    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d\d)(?![\w/-])"
)
#: A run of one to three capitalized words (a place may be "Homa Bay", "Dar es Salaam").
_PLACE_RUN = re.compile(r"\b[A-Z][\w'\u2019-]*(?:\s+(?:es\s+|de\s+|la\s+)?[A-Z][\w'\u2019-]*){0,2}")


def find_quasi(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """Places and dates in ``text`` (of ``entities`` only, if given), in order: the longest
    run of capitalized words the gazetteers know as a place ("Homa Bay", "Nairobi"), and
    dates written with digits or a month's name.

    >>> text = "Admitted at Homa Bay hospital on 12 March 2024"
    >>> [(s.entity, text[s.start:s.end]) for s in find_quasi(text)]
    [('LOCATION', 'Homa Bay'), ('DATE', '12 March 2024')]
    """
    if not text:
        return []
    spans = []
    if entities is None or DATE in entities:
        spans += [Span(DATE, m.start(), m.end(), 0.9) for m in _DATE_IN_TEXT.finditer(text)]
    if entities is None or LOCATION in entities:
        places = words.text_places()
        for match in _PLACE_RUN.finditer(text):
            run = list(re.finditer(r"\S+", match.group(0)))
            # the longest known place at each word of the run
            i = 0
            while i < len(run):
                for j in range(len(run), i, -1):
                    start, end = match.start() + run[i].start(), match.start() + run[j - 1].end()
                    phrase = text[start:end]
                    if normalize_place(phrase) in places and normalize(phrase) not in _NOT_PLACES:
                        spans.append(Span(LOCATION, start, end, 0.7))
                        i = j
                        break
                else:
                    i += 1
    return _resolve(spans)


def find_all(text: str, entities: Collection[str] | None = None) -> list[Span]:
    """``find_entities`` and ``find_quasi`` together, overlaps resolved: what ``redact``
    replaces."""
    return _resolve([*find_entities(text, entities), *find_quasi(text, entities)])


#: Capitalized words that some gazetteer lists as a place but a note means otherwise.
_NOT_PLACES = frozenset(
    {
        "reading",
        "mobile",
        "orange",
        "split",
        "nice",
        "bath",
        "deal",
        "hope",
        "march",
        "may",
        "victoria",
        "florence",
        "george",
        "charlotte",
        "grace",
        "union",
        "independence",
        "liberty",
        "university",
        "college",
        "central",
        "north",
        "south",
        "east",
        "west",
        "claim",
        "clinic",
        "hospital",
        "pharmacy",
        "lab",
        "member",
        "client",
        "follow",
    }
)


@dataclass(frozen=True)
class TextFindings:
    """What a column's sampled cells hold: per entity, how many cells contain it and the first
    row (a position in the table, 0 for the first row) where it was seen."""

    cells: int
    counts: dict[str, int]
    first_row: dict[str, int]
    with_any: int  # cells with at least one entity
    confirmed: int  # cells with an entity a checksum, a parse or its form confirms

    def share(self, entity: str) -> float:
        """The share of cells that contain ``entity``."""
        return self.counts.get(entity, 0) / self.cells if self.cells else 0.0


def search_cells(texts: Sequence[str], rows: Sequence[int]) -> TextFindings:
    """Count, per entity, the cells of ``texts`` that contain it; ``rows`` are their positions."""
    counts: dict[str, int] = {}
    first_row: dict[str, int] = {}
    with_any = confirmed = 0
    for text, row in zip(texts, rows, strict=True):
        spans = find_entities(text)
        with_any += bool(spans)
        confirmed += any(span.score >= CONFIRMED for span in spans)
        for entity in {span.entity for span in spans}:
            counts[entity] = counts.get(entity, 0) + 1
            first_row.setdefault(entity, row)
    return TextFindings(len(texts), counts, first_row, with_any, confirmed)
