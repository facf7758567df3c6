"""Each transform parameter's allowed values, in scikit-learn's notation, checked without
importing scikit-learn.

A transform declares ``_parameter_constraints`` as scikit-learn's estimators do (types,
``Interval``, ``StrOptions``, ``None``, ``callable`` and the words ``"boolean"``,
``"random_state"``, ``"array-like"``, ``"no_validation"``), and a policy's steps are checked
against them when it loads, before any data is read. Importing scikit-learn takes most of a
second (it loads SciPy), which every ``veil anonymize`` with a step paid for a check that
needs none of it; here the check is scikit-learn's rule for rule, and the refusal says the same
in veil's words (``k must be an int in the range [2, inf), got 1``). The tests hold every
verdict and message to scikit-learn's own ``validate_parameter_constraints`` on the same values.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["Integral", "Interval", "Real", "StrOptions", "unmet"]


def _type_name(kind: type) -> str:
    if kind is Real:
        return "float"
    if kind is Integral:
        return "int"
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


class Interval:
    """Numbers of ``kind`` (``Integral`` or ``Real``) between ``left`` and ``right`` (None: no
    bound), ``closed`` on the "left", "right", "both" or "neither" side."""

    def __init__(self, kind: type, left: float | None, right: float | None, *, closed: str):
        if kind not in (Integral, Real):
            raise ValueError(f"an Interval is over Integral or Real, not {kind}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be left, right, both or neither, not {closed!r}")
        self.type, self.left, self.right, self.closed = kind, left, right, closed

    def __contains__(self, value: Any) -> bool:
        if not isinstance(value, Integral) and math.isnan(value):
            return False
        below = operator.lt if self.closed in ("left", "both") else operator.le
        above = operator.gt if self.closed in ("right", "both") else operator.ge
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        return not (below(value, left) or above(value, right))

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.type) and value in self

    def __str__(self) -> str:
        left: Any = "-inf" if self.left is None else self.left
        right: Any = "inf" if self.right is None else self.right
        if self.type is not Integral:  # bounds given as integers read as floats
            left = float(left) if isinstance(self.left, Real) else left
            right = float(right) if isinstance(self.right, Real) else right
        return (
            f"{'an int' if self.type is Integral else 'a float'} in the range "
            f"{'[' if self.closed in ('left', 'both') else '('}{left}, "
            f"{right}{']' if self.closed in ('right', 'both') else ')'}"
        )


class StrOptions:
    """One of the strings ``options``."""

    def __init__(self, options: set[str]) -> None:
        self.options = options

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return f"a str among {{{', '.join(repr(o) for o in self.options)}}}"


class _Rule:
    """One of the other constraints: a test and how a refusal names it."""

    def __init__(self, test: Any, words: str) -> None:
        self.is_satisfied_by, self.words = test, words

    def __str__(self) -> str:
        return self.words


def _array_like(value: Any) -> bool:
    listed = hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")
    return listed and not np.isscalar(value)


_SEED = Interval(Integral, 0, 2**32 - 1, closed="both")
_WORDS: dict[str, _Rule] = {
    "boolean": _Rule(
        lambda v: isinstance(v, bool | np.bool_),
        "an instance of 'bool' or an instance of 'numpy.bool'",
    ),
    "random_state": _Rule(
        lambda v: v is None or _SEED.is_satisfied_by(v) or isinstance(v, np.random.RandomState),
        f"{_SEED}, an instance of 'numpy.random.mtrand.RandomState' or None",
    ),
    "array-like": _Rule(_array_like, "an array-like"),
}


def _rule(constraint: Any) -> Any:
    if isinstance(constraint, Interval | StrOptions):
        return constraint
    if constraint is None:
        return _Rule(lambda v: v is None, "None")
    if constraint is callable:
        return _Rule(callable, "a callable")
    if isinstance(constraint, type):
        return _Rule(
            lambda v: isinstance(v, constraint), f"an instance of {_type_name(constraint)!r}"
        )
    if isinstance(constraint, str) and constraint in _WORDS:
        return _WORDS[constraint]
    raise ValueError(f"unknown parameter constraint {constraint!r}")


def unmet(constraints: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
    """The first parameter of ``params`` none of whose ``constraints`` it meets, said as
    ``"k must be an int in the range [2, inf), got 1"``; None when all are met. A parameter
    without constraints, or with ``"no_validation"``, is not checked."""
    for name, value in params.items():
        allowed = constraints.get(name, "no_validation")
        if allowed == "no_validation":
            continue
        rules = [_rule(c) for c in allowed]
        if any(rule.is_satisfied_by(value) for rule in rules):
            continue
        said = [str(rule) for rule in rules]
        expected = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} or {said[-1]}"
        return f"{name} must be {expected}, got {value!r}"
    return None
