"""What parties agree on before training, without sharing a row: the columns, their kinds, the
categories (the union, unless a party codes a column differently), the target's classes, and
the scaling of numbers (means and spreads summed under encryption).

A party's :class:`Description` carries its row count, each column's kind and the set of its
categories (with which of them are common, 5% of its rows or more): never a row, never a count
per category. Direct identifiers and free text (veil's scan), and categories near-unique to
rows, are left out before anything is described: their values would leave the party in the
category list, and a model one-hot on them would memorize people. A column one party leaves
out, every party leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.exceptions import InputError
from veil.schema import ColumnRole, as_numbers, is_continuous

#: a party's common categories (this share of its rows or more): when none of them is held
#: by another party, the parties code the column differently
COMMON_SHARE = 0.05


@dataclass(frozen=True)
class Description:
    """One party's table, described."""

    party: str
    rows: int
    kinds: dict[str, str]  # column -> "number" or "category"
    categories: dict[str, list[str]] = field(default_factory=dict)
    common: dict[str, list[str]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)  # column -> why

    def to_dict(self) -> dict[str, Any]:
        """For the wire (JSON)."""
        return {
            "party": self.party,
            "rows": self.rows,
            "kinds": self.kinds,
            "categories": self.categories,
            "common": self.common,
            "left_out": self.left_out,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Description:
        """Back from :meth:`to_dict`."""
        return cls(
            str(data["party"]),
            int(data["rows"]),
            dict(data["kinds"]),
            dict(data["categories"]),
            dict(data["common"]),
            dict(data.get("left_out", {})),
        )


def describe(frame: pd.DataFrame, *, party: str, target: str) -> Description:
    """Describe a party's table (``target`` must be one of its columns)."""
    if target not in frame.columns:
        raise InputError(f"party {party!r} has no target column {target!r}")
    left_out = personal_columns(frame)
    if target in left_out:
        raise InputError(
            f"target {target!r} cannot be learnt at party {party!r}: {left_out[target]}"
        )
    kinds, categories, common = {}, {}, {}
    for name in frame.columns:
        if name in left_out:
            continue
        series = frame[name]
        if name != target and is_continuous(series.dropna()):  # dates too
            kinds[str(name)] = "number"
            continue
        present = series.dropna().astype(str)
        shares = present.value_counts(normalize=True)
        if name != target and len(present) >= 20 and len(shares) > 0.5 * len(present):
            left_out[str(name)] = "near-unique categories: a model would memorize rows"
            continue
        kinds[str(name)] = "category"
        categories[str(name)] = sorted(shares.index)
        common[str(name)] = sorted(shares.index[shares >= COMMON_SHARE])
    return Description(party, len(frame), kinds, categories, common, left_out)


def personal_columns(frame: pd.DataFrame) -> dict[str, str]:
    """Columns veil's scan reads as direct identifiers or free text, with why."""
    from veil.scan import scan

    out = {}
    for found in scan(frame).columns:
        if found.free_text:
            out[found.name] = "free text"
        elif found.role is ColumnRole.IDENTIFIER:
            out[found.name] = f"a direct identifier ({found.entity or 'unique key'})"
    return out


@dataclass(frozen=True)
class Spec:
    """The features every party encodes the same way."""

    target: str
    numbers: list[str]
    categories: dict[str, list[str]]
    classes: list[str]
    center: list[float] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def width(self) -> int:
        """Columns of the design matrix."""
        return len(self.numbers) + sum(len(v) for v in self.categories.values())

    def to_dict(self) -> dict[str, Any]:
        """For the wire (JSON) and the saved model."""
        return {
            "target": self.target,
            "numbers": self.numbers,
            "categories": self.categories,
            "classes": self.classes,
            "center": self.center,
            "scale": self.scale,
            "left_out": self.left_out,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Spec:
        """Back from :meth:`to_dict`."""
        return cls(
            data["target"],
            list(data["numbers"]),
            dict(data["categories"]),
            list(data["classes"]),
            list(data["center"]),
            list(data["scale"]),
            dict(data.get("left_out", {})),
        )


def agree(descriptions: list[Description], *, target: str) -> Spec:
    """The common spec, or one line naming the party and column that do not fit."""
    if not descriptions:
        raise InputError("no party answered: nothing to train on")
    for d in descriptions:
        if d.rows == 0:
            raise InputError(f"party {d.party!r} has 0 rows: give it data or leave it out")
    dropped = {c: why for d in descriptions for c, why in d.left_out.items()}
    if target in dropped:
        raise InputError(f"target {target!r} cannot be learnt: {dropped[target]}")
    descriptions = [_without(d, set(dropped)) for d in descriptions]
    first = descriptions[0]
    for d in descriptions[1:]:
        missing = [c for c in first.kinds if c not in d.kinds]
        extra = [c for c in d.kinds if c not in first.kinds]
        if missing or extra:
            what = (
                f"lacks column {missing[0]!r}"
                if missing
                else f"has column {extra[0]!r} that party {first.party!r} lacks"
            )
            raise InputError(f"party {d.party!r} {what}: every party needs the same columns")
        for name, kind in d.kinds.items():
            if kind != first.kinds[name] and name != target:
                raise InputError(
                    f"column {name!r} is {_kind(kind)} at party {d.party!r} but "
                    f"{_kind(first.kinds[name])} at party {first.party!r}: code it the same way "
                    "at every party"
                )
    categories: dict[str, list[str]] = {}
    for name in first.kinds:
        if first.kinds[name] != "category":
            continue
        for d in descriptions:
            others = set().union(*(o.categories.get(name, []) for o in descriptions if o is not d))
            common = d.common.get(name, [])
            # a party split off by region holds values the others lack (China, in a party
            # of Asian countries): that is data, not coding; none of its common values
            # held anywhere else ('M'/'F' against 'Male'/'Female') is coding
            if common and len(descriptions) > 1 and not set(common) & others:
                held = ", ".join(map(repr, sorted(others)[:6]))
                raise InputError(
                    f"party {d.party!r}'s column {name!r} holds {common[0]!r} in 5% or more of "
                    f"its rows, and none of its common values is held by another party (they "
                    f"hold {held}): the parties code {name!r} differently; recode it the same "
                    "way everywhere"
                )
        categories[name] = sorted(set().union(*(d.categories.get(name, []) for d in descriptions)))
    classes = categories.pop(target)
    if len(classes) < 2:
        raise InputError(f"target {target!r} holds one class across all parties: nothing to learn")
    numbers = [n for n, k in first.kinds.items() if k == "number" and n != target]
    return Spec(target, numbers, categories, classes, left_out=dropped)


def _without(d: Description, columns: set[str]) -> Description:
    keep = {c: k for c, k in d.kinds.items() if c not in columns}
    return Description(
        d.party,
        d.rows,
        keep,
        {c: v for c, v in d.categories.items() if c in keep},
        {c: v for c, v in d.common.items() if c in keep},
        d.left_out,
    )


def _kind(kind: str) -> str:
    return "numbers" if kind == "number" else "categories"


def moments(frame: pd.DataFrame, spec: Spec) -> np.ndarray:
    """Each number column's mean and mean square over this party's rows (NaN as 0), to be
    summed (weighted by rows) across parties into the common scaling."""
    values = np.nan_to_num(_numbers(frame, spec.numbers))
    return np.concatenate([values.mean(axis=0), (values**2).mean(axis=0)])


def with_scaling(spec: Spec, summed: np.ndarray) -> Spec:
    """The spec with centers and scales from the parties' weighted moments."""
    k = len(spec.numbers)
    mean, square = summed[:k], summed[k:]
    scale = np.sqrt(np.maximum(square - mean**2, 0.0))
    scale = np.where(scale > 0, scale, 1.0)
    return Spec(
        spec.target,
        spec.numbers,
        spec.categories,
        spec.classes,
        [float(v) for v in mean],
        [float(v) for v in scale],
        spec.left_out,
    )


def encode(frame: pd.DataFrame, spec: Spec) -> tuple[np.ndarray, np.ndarray]:
    """The design matrix (scaled numbers, one-hot categories) and the target's class codes
    (-1 where the target is missing or a class the spec lacks)."""
    parts = []
    if spec.numbers:
        values = _numbers(frame, spec.numbers)
        center = np.asarray(spec.center or np.zeros(len(spec.numbers)))
        scale = np.asarray(spec.scale or np.ones(len(spec.numbers)))
        parts.append(np.nan_to_num((values - center) / scale))
    for name, levels in spec.categories.items():
        codes = _codes(frame[name], levels)
        onehot = np.zeros((len(frame), len(levels)))
        known = codes >= 0
        onehot[np.flatnonzero(known), codes[known]] = 1.0
        parts.append(onehot)
    x = np.hstack(parts) if parts else np.zeros((len(frame), 0))
    return x, _codes(frame[spec.target], spec.classes)


def _codes(series: pd.Series, values: list[str]) -> np.ndarray:
    """Each row's position in ``values`` (-1: missing, or a value not there)."""
    text = series.astype(str).to_numpy(dtype=object)
    codes = pd.Index(values).get_indexer(pd.Index(text))
    codes[series.isna().to_numpy()] = -1
    return codes.astype(int)


def _numbers(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Number columns as floats (dates as days since 1970), NaN where missing or not a number."""
    return np.column_stack([as_numbers(frame[c]) for c in columns])


def split(frame: pd.DataFrame, fraction: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A party's rows into training and test rows (its own evaluation set)."""
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = round(len(frame) * fraction)
    return frame.iloc[order[cut:]], frame.iloc[order[:cut]]


@dataclass(frozen=True)
class Domain:
    """The public domain a DP run is built from, given by the user, never learnt from rows:
    each number column's bounds ``[low, high]`` and each category column's values (the
    target's among them). JSON: ``{"age": [17, 90], "sex": ["Female", "Male"], ...}``.
    Numbers are scaled by their bounds (to ``[-1, 1]`` inside them), categories one-hot over
    the listed values (any other value is all zeros): nothing about a party's table is sent."""

    numbers: dict[str, tuple[float, float]]
    categories: dict[str, list[str]]

    @classmethod
    def from_json(cls, text: str) -> Domain:
        """Read and check a domain; a malformed entry is named."""
        import json
        import math

        try:
            data = json.loads(text)
        except ValueError as err:
            raise InputError(f"the domain is not JSON: {err}") from err
        if not isinstance(data, dict) or not data:
            raise InputError(
                "the domain must be a JSON object of column -> [low, high] or "
                "column -> [category, ...]"
            )
        numbers, categories = {}, {}
        for column, value in data.items():
            if (
                isinstance(value, list)
                and len(value) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            ):
                low, high = float(value[0]), float(value[1])
                if not (math.isfinite(low) and math.isfinite(high) and low < high):
                    raise InputError(
                        f"domain column {column!r}: bounds must be finite with "
                        f"low < high, got {value!r}"
                    )
                numbers[str(column)] = (low, high)
            elif (
                isinstance(value, list)
                and value
                and all(isinstance(v, str | int) and not isinstance(v, bool) for v in value)
            ):
                categories[str(column)] = sorted({str(v) for v in value})
            else:
                raise InputError(
                    f"domain column {column!r} must be [low, high] (numbers) or a "
                    f"list of categories, got {value!r}"
                )
        return cls(numbers, categories)

    def check_target(self, target: str) -> None:
        """The target must be a category column of the domain with at least two classes."""
        if len(self.categories.get(target, [])) < 2:
            raise InputError(f"the domain must list the target {target!r}'s classes (at least two)")

    def check(self, frame: pd.DataFrame, *, party: str, target: str) -> None:
        """A party holds every column of the domain (the schema is public)."""
        self.check_target(target)
        for column in [*self.numbers, *self.categories]:
            if column not in frame.columns:
                raise InputError(f"party {party!r} lacks domain column {column!r}")

    def spec(self, target: str) -> Spec:
        """The features: numbers scaled by their public bounds, categories as listed."""
        self.check_target(target)
        numbers = list(self.numbers)
        categories = {c: v for c, v in self.categories.items() if c != target}
        return Spec(
            target,
            numbers,
            categories,
            list(self.categories[target]),
            [(lo + hi) / 2 for lo, hi in self.numbers.values()],
            [(hi - lo) / 2 for lo, hi in self.numbers.values()],
        )
