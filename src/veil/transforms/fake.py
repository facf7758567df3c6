"""Replacement by realistic fakes (Faker), locale-aware, gender-consistent, optionally unique."""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.schema import require_columns
from veil.transforms._base import COLUMNS, Columns, ColumnTransform, rng_from

if TYPE_CHECKING:  # Faker loads its providers: only a step that fakes imports it
    from faker import Faker

_FEMALE = {"f", "female", "woman", "women", "girl", "w", "kike", "mwanamke", "mke"}
_MALE = {"m", "male", "man", "men", "boy", "kiume", "mwanaume", "mume"}
_GENDERED = {"name", "first_name", "prefix"}
_BUILTIN_KINDS = ("name", "first_name", "last_name", "email", "date", "choice", "pattern")


def gender_of(value: object) -> str | None:
    """``"female"``, ``"male"`` or None from a gender label (English and Swahili)."""
    if not isinstance(value, str):
        return None
    label = value.strip().casefold()
    if label in _FEMALE:
        return "female"
    if label in _MALE:
        return "male"
    return None


class Fake(ColumnTransform):
    """Replace values by fakes from Faker.

    ``kind`` is ``name``/``first_name``/``last_name`` (consistent with ``gender_column`` when
    given), ``email`` (built from the fake name in ``name_column`` when given), ``date``
    (uniform between ``start`` and ``end``), ``choice`` (``choices`` drawn with
    ``probabilities``), ``pattern`` (``#`` a digit, ``?`` an upper-case letter: ``"07########"``
    for a Kenyan mobile, ``"?#########?"`` for a KRA-PIN-shaped value), or any Faker provider
    that takes no argument (``city``, ``job``, ``company``...).

    ``consistent=True`` maps equal originals to equal fakes (joins and counts survive);
    ``unique=True`` never gives two originals the same fake. Missing values stay missing.
    """

    _needs_every_row = (
        "its draws are made for the whole table at once (batch by batch they would repeat); "
        "pseudonymize or drop instead"
    )

    treats_identifiers = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "kind": [str],
        "locale": [str, list, tuple],
        "unique": ["boolean"],
        "consistent": ["boolean"],
        "gender_column": [str, None],
        "name_column": [str, None],
        "pattern": [str, None],
        "start": [str, datetime.date, None],  # YAML reads 1950-01-01 as a date
        "end": [str, datetime.date, None],
        "choices": [list, tuple, None],
        "probabilities": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        kind: str = "name",
        locale: str | Sequence[str] = "en_KE",
        unique: bool = False,
        consistent: bool = True,
        gender_column: str | None = None,
        name_column: str | None = None,
        pattern: str | None = None,
        start: str | None = None,
        end: str | None = None,
        choices: Sequence[Any] | None = None,
        probabilities: Sequence[float] | None = None,
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.kind = kind
        self.locale = locale
        self.unique = unique
        self.consistent = consistent
        self.gender_column = gender_column
        self.name_column = name_column
        self.pattern = pattern
        self.start = start
        self.end = end
        self.choices = choices
        self.probabilities = probabilities
        self.random_state = random_state

    def _validate(self) -> None:
        faker = self._faker(0)
        if self.kind not in _BUILTIN_KINDS and not callable(getattr(faker, self.kind, None)):
            raise ParameterError(
                f"kind must be one of {list(_BUILTIN_KINDS)} or a Faker provider such as "
                f"'city', 'job', 'company', got {self.kind!r}"
            )
        if self.kind == "pattern" and not self.pattern:
            raise ParameterError("kind='pattern' needs pattern, e.g. pattern='07########'")
        if self.kind == "date":
            if self.start is None or self.end is None:
                raise ParameterError(
                    "kind='date' needs start and end, e.g. start='1950-01-01', end='2005-12-31'"
                )
            if self._bounds()[0] > self._bounds()[1]:
                raise ParameterError(
                    f"start must be before end, got start={self.start!r}, end={self.end!r}"
                )
        if self.kind == "choice":
            self._choice_probabilities()

    def _bounds(self) -> tuple[pd.Timestamp, pd.Timestamp]:
        try:
            return pd.Timestamp(str(self.start)), pd.Timestamp(str(self.end))
        except ValueError as err:
            raise ParameterError(
                f"start and end must be dates like '1990-01-31', got {self.start!r}, {self.end!r}"
            ) from err

    def _choice_probabilities(self) -> np.ndarray | None:
        if not self.choices:
            raise ParameterError("kind='choice' needs choices, e.g. choices=['Nairobi', 'Mombasa']")
        if self.probabilities is None:
            return None
        p = np.asarray(self.probabilities, dtype=float)
        if len(p) != len(self.choices) or (p < 0).any() or not np.isclose(p.sum(), 1.0):
            raise ParameterError(
                f"probabilities must be {len(self.choices)} non-negative numbers summing to 1 "
                f"(one per choice), got {list(self.probabilities)!r}"
            )
        return p / p.sum()

    def _faker(self, seed: int) -> Faker:
        try:
            from faker import Faker

            faker = Faker(self.locale)
        except AttributeError as err:
            raise ParameterError(
                f"locale must be a Faker locale such as 'en_KE', 'sw', 'en_US', got {self.locale!r}"
            ) from err
        faker.seed_instance(seed)
        return faker

    def _fit(self, frame: pd.DataFrame) -> None:
        extra = [c for c in (self.gender_column, self.name_column) if c is not None]
        require_columns(frame, extra, where="Fake")

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        for name in self.columns_:
            series = frame[name]
            if self.consistent:
                codes, uniques = pd.factorize(series, use_na_sentinel=True)
                first_rows = _first_positions(codes, len(uniques))
            else:
                codes = np.where(series.isna().to_numpy(), -1, np.arange(len(series)))
                first_rows = np.flatnonzero(codes >= 0)
                codes = np.where(codes >= 0, np.cumsum(codes >= 0) - 1, -1)
            fakes = self._generate(frame, first_rows, rng)
            values = np.array([*fakes, np.nan], dtype=object)[codes]
            frame[name] = pd.Series(values.tolist(), index=frame.index, name=name)
        return frame

    def _generate(
        self, frame: pd.DataFrame, rows: np.ndarray, rng: np.random.Generator
    ) -> list[Any]:
        n = len(rows)
        if self.kind == "choice":
            p = self._choice_probabilities()
            picks = rng.choice(len(self.choices or []), size=n, p=p)
            return [list(self.choices or [])[i] for i in picks]
        if self.kind == "date":
            lo, hi = self._bounds()
            days = rng.integers(0, (hi - lo).days + 1, size=n)
            return list(lo + pd.to_timedelta(days, unit="D"))
        faker = self._faker(int(rng.integers(0, 2**31 - 1)))
        source = faker.unique if self.unique else faker
        genders = (
            [gender_of(v) for v in frame[self.gender_column].to_numpy()[rows]]
            if self.gender_column is not None
            else [None] * n
        )
        names = frame[self.name_column].to_numpy()[rows] if self.name_column is not None else None
        from faker.exceptions import UniquenessException

        out: list[Any] = []
        seen: dict[str, int] = {}
        try:
            for i in range(n):
                if self.kind == "email" and names is not None:
                    out.append(_email_from(names[i], source, faker, seen))
                else:
                    out.append(self._one(source, genders[i]))
        except UniquenessException as err:
            raise ParameterError(
                f"unique=True: Faker ran out of distinct {self.kind!r} values after {len(out)} "
                f"of {n}; use unique=False or a kind with more values (e.g. 'name')"
            ) from err
        finally:
            faker.unique.clear()
        return out

    def _one(self, source: Any, gender: str | None) -> Any:
        if self.kind == "pattern":
            return source.bothify(self.pattern, letters="ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        method: Callable[[], Any]
        if self.kind in _GENDERED and gender is not None:
            method = getattr(source, f"{self.kind}_{gender}")
        else:
            method = getattr(source, self.kind)
        return method()

    def describe(self) -> str:
        """The columns replaced, the kind of fake values and the locale."""
        return f"Fake({', '.join(self.columns_)}; kind={self.kind}, locale={self.locale})"


def _first_positions(codes: np.ndarray, n: int) -> np.ndarray:
    """Row position of the first occurrence of each code 0..n-1."""
    valid = np.flatnonzero(codes >= 0)
    _, first = np.unique(codes[valid], return_index=True)
    return valid[first][:n]


def _email_from(name: object, source: Any, faker: Faker, seen: dict[str, int]) -> str:
    if not isinstance(name, str) or not name.strip():
        return str(source.email())
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    ascii_name = re.sub(r"['\u2019]", "", ascii_name)  # Ng'ang'a -> nganga, O'Neil -> oneil
    # the scan's word lists load with the first e-mail made, not with every policy
    from veil.scan.recognizers.vocabulary import name_titles

    titles = name_titles()  # "Fr Stephen Nganga": stephen.nganga, not fr.nganga
    parts = [p for p in re.split(r"[^a-z0-9]+", ascii_name) if p and p not in titles]
    local = ".".join(parts[:1] + parts[-1:]) if len(parts) > 1 else (parts[0] if parts else "user")
    # a number tells same-name people apart, as mail providers do
    count = seen.get(local, 0)
    seen[local] = count + 1
    suffix = str(count) if count else ""
    return f"{local}{suffix}@{faker.free_email_domain()}"
