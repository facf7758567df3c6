"""Redaction: personal data inside free text replaced, the rest of each sentence kept."""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.keys import DEFAULT_KEY_ENV, load_key
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    StrOptions,
    rebuild,
    rng_from,
)

if TYPE_CHECKING:
    from faker import Faker  # loads its providers: imported only by a step that fakes

    from veil.scan.text import Span

#: A fake of each entity's kind (``replace="fake"``); another entity gets its placeholder.
_FAKES: dict[str, Callable[[Faker], str]] = {
    "PERSON": lambda f: f.first_name(),
    "EMAIL": lambda f: f.email(),
    "PHONE": lambda f: f.phone_number(),
    "CREDIT_CARD": lambda f: f.credit_card_number(),
    "IBAN": lambda f: f.iban(),
    "IP_ADDRESS": lambda f: f.ipv4(),
    "KE_KRA_PIN": lambda f: f.bothify("A#########?").upper(),
    "KE_NATIONAL_ID": lambda f: f.numerify("########"),
    "US_SSN": lambda f: f.numerify("9##-##-####"),  # 9xx: never issued
    "LOCATION": lambda f: f.city(),
    "DATE": lambda f: f.date(),
}


#: What ``Redact`` writes in place of an entity: ``<PHONE>`` or, keyed, ``<PHONE_3f9a2c71>``.
PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*?(?:_[0-9a-f]{8})?>")


def _placeholder(entity: str, token: str = "") -> str:
    return f"<{entity}_{token}>" if token else f"<{entity}>"


class Redact(ColumnTransform):
    """Find personal data inside each text (``veil.scan.text.find_entities``: phones, e-mail
    addresses, IDs, cards, IBANs, IP addresses, people's names; ``find_quasi``: places and
    dates, the quasi-identifiers a note repeats) and replace each entity, keeping the rest of
    the sentence.

    ``replace="placeholder"`` writes ``<PHONE>``; ``"pseudonym"`` a keyed token of the entity
    (``<PERSON_3f9a2c71>``: HMAC-SHA256 with the key from ``key_env`` or ``key_file``, so the
    same person or number gets the same token in every row and run, and nobody without the key
    can recompute it from a guess); ``"fake"`` a Faker value of the same kind (the same
    original always gets the same fake within a run). ``entities`` limits the search (default:
    every entity veil finds in text).

    >>> import pandas as pd
    >>> from veil.transforms import Redact
    >>> notes = pd.DataFrame({"notes": ["Call Carrie on +1-875-988-3835 about the claim"]})
    >>> Redact(columns="notes").fit_transform(notes)["notes"].tolist()
    ['Call <PERSON> on <PHONE> about the claim']

    ``counts_`` holds, after a transform, how many entities of each kind were replaced (the
    certificate records it); ``cells_changed_`` how many cells changed.
    """

    _needs_every_row = None
    _tallies = ("cells_changed_",)

    treats_identifiers = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "entities": [list, tuple, None],
        "replace": [StrOptions({"placeholder", "pseudonym", "fake"})],
        "key_env": [str],
        "key_file": [str, os.PathLike, None],
        "locale": [str, list, tuple],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        entities: Sequence[str] | None = None,
        replace: str = "placeholder",
        key_env: str = DEFAULT_KEY_ENV,
        key_file: str | os.PathLike[str] | None = None,
        locale: str | Sequence[str] = "en_KE",
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.entities = entities
        self.replace = replace
        self.key_env = key_env
        self.key_file = key_file
        self.locale = locale
        self.random_state = random_state

    def _validate(self) -> None:
        from veil.scan.text import QUASI_IN_TEXT, text_entities

        known = (*text_entities(), *QUASI_IN_TEXT)
        unknown = [e for e in self.entities or () if e not in known]
        if unknown:
            raise ParameterError(
                f"entities must be among {list(known)}, got {unknown}; leave entities out to "
                "search for all of them"
            )

    def _fit(self, frame: pd.DataFrame) -> None:
        from veil.scan import scan
        from veil.scan.recognizers.generic import FREE_TEXT
        from veil.scan.text import label
        from veil.schema import ColumnRole

        if self.replace == "pseudonym":  # fail at fit, not mid-release
            load_key(key_env=self.key_env, key_file=self.key_file)
        # fail closed: a column whose every cell is an identifier (names, phones, keys) is not
        # free text; redaction keeps what it does not recognize, so one unusual name would leak
        for finding in scan(frame, columns=self.columns_).columns:
            if finding.role is ColumnRole.IDENTIFIER and finding.entity != FREE_TEXT:
                what = label(finding.entity) if finding.entity else "a unique key"
                raise ParameterError(
                    f"column {finding.name!r} holds {what} in its cells, not free text: redact "
                    "keeps what it does not recognize; use drop, pseudonymize, mask or fake"
                )

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        from veil.scan.text import find_all_cells

        key = (
            load_key(key_env=self.key_env, key_file=self.key_file)
            if self.replace == "pseudonym"
            else b""
        )
        from faker import Faker

        faker = Faker(self.locale)
        faker.seed_instance(int(rng_from(self.random_state).integers(0, 2**31 - 1)))
        fakes: dict[tuple[str, str], str] = {}
        wanted = None if self.entities is None else set(self.entities)
        counts: dict[str, int] = {}
        changed = 0

        def substitute(entity: str, found: str) -> str:
            if self.replace == "pseudonym":
                message = f"{entity}\x1f{found.strip().casefold()}".encode()
                return _placeholder(entity, hmac.digest(key, message, "sha256")[:4].hex())
            if self.replace == "fake" and entity in _FAKES:
                if (entity, found) not in fakes:
                    fakes[entity, found] = _FAKES[entity](faker)
                return fakes[entity, found]
            return _placeholder(entity)

        def redact(value: str, spans: list[Span]) -> tuple[object, dict[str, int]]:
            kinds: dict[str, int] = {}
            out, last = [], 0
            for span in spans:
                found = value[span.start : span.end]
                out += [value[last : span.start], substitute(span.entity, found)]
                last = span.end
                kinds[span.entity] = kinds.get(span.entity, 0) + 1
            return ("".join(out) + value[last:] if spans else value), kinds

        for name in self.columns_:
            series = frame[name]
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
            values = np.asarray(uniques, dtype=object)  # each text searched once
            texts = {i: v for i, v in enumerate(values) if isinstance(v, str)}
            found = dict(zip(texts, find_all_cells(list(texts.values()), wanted), strict=True))
            results = [redact(v, found[i]) if i in found else (v, {}) for i, v in enumerate(values)]
            rows_per_code = np.bincount(codes[codes >= 0], minlength=len(results))
            for (_, kinds), n in zip(results, rows_per_code, strict=True):
                for entity, k in kinds.items():
                    counts[entity] = counts.get(entity, 0) + k * int(n)
                changed += int(n) if kinds else 0
            redacted = np.empty(len(results), dtype=object)
            redacted[:] = [text for text, _ in results]
            frame[name] = rebuild(series, codes, redacted)
        self.counts_ = dict(sorted(counts.items()))
        self.cells_changed_ = changed
        return frame

    def describe(self) -> str:
        """The columns and how many values of each entity were redacted."""
        counted = ""
        if hasattr(self, "counts_"):
            found = self.counts_ or {}
            kinds = ", ".join(f"{entity} {n:,}" for entity, n in found.items())
            total = sum(found.values())
            counted = f"; {total:,} entities replaced in {self.cells_changed_:,} cells"
            counted += f" ({kinds})" if kinds else ""
        return f"Redact({', '.join(self.columns_)}; {self.replace}{counted})"
