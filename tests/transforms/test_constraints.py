"""The transforms' parameter checks, held to scikit-learn's own: the same verdict and the same
words for every constraint every transform declares, on values that meet and miss each; and
the checks (and a release with steps) load neither scikit-learn nor SciPy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils import _param_validation as sk

from tests.conftest import TEST_KEY
from veil.transforms import TRANSFORMS
from veil.transforms._constraints import Interval, StrOptions, unmet

# scikit-learn's refusal: "The 'k' parameter of Microaggregate must be ... Got 1 instead."
_SAID = re.compile(
    r"The '(?P<name>\w+)' parameter of \w+ must be (?P<rule>.*)\. Got (?P<got>.*) instead\.$",
    re.S,
)


def _theirs(constraint: Any) -> Any:
    if isinstance(constraint, Interval):
        kind, left, right = constraint.type, constraint.left, constraint.right
        return sk.Interval(kind, left, right, closed=constraint.closed)
    if isinstance(constraint, StrOptions):
        return sk.StrOptions(constraint.options)
    return constraint


def _sklearn_verdict(name: str, allowed: list[Any], value: Any) -> str | None:
    try:
        sk.validate_parameter_constraints(
            {name: [_theirs(c) for c in allowed]}, {name: value}, caller_name="Step"
        )
    except sk.InvalidParameterError as err:
        said = _SAID.match(str(err))
        return f"{said['name']} must be {said['rule']}, got {said['got']}" if said else str(err)
    return None


def _declared() -> list[tuple[str, str, list[Any]]]:
    return [
        (step, name, allowed)
        for step, cls in sorted(TRANSFORMS.items())
        for name, allowed in cls._parameter_constraints.items()
        if allowed != "no_validation"
    ]


def _probes(allowed: list[Any]) -> list[Any]:
    """Values on both sides of each constraint: its bounds and just past them, its options
    and a near miss, and one of every other kind."""
    values: list[Any] = [None, True, False, np.bool_(True), "", "x", "name", len, object()]
    values += [0, 1, -1, 2, 7, 8, 64, 65, 100, 101, 2**32, np.int64(3), np.int32(-4)]
    values += [-0.5, 0.0, 0.5, 1.0, 1.5, 100.0, np.float64(0.25)]
    values += [float("nan"), float("inf"), -float("inf")]
    values += [["a"], ("a", "b"), {"a": 1}, np.array([1, 2])]
    values += [np.random.RandomState(0), np.random.default_rng(0)]
    for constraint in allowed:
        if isinstance(constraint, StrOptions):
            values += sorted(constraint.options) + [o.upper() + "_" for o in constraint.options]
        if isinstance(constraint, Interval):
            for bound in (constraint.left, constraint.right):
                if bound is not None:
                    values += [bound, bound - 1, bound + 1, float(bound)]
                    values += [bound - 1e-9, bound + 1e-9]
    return values


@pytest.mark.parametrize(("step", "name", "allowed"), _declared())
def test_every_declared_constraint_judges_as_scikit_learn(
    step: str, name: str, allowed: list[Any]
) -> None:
    for value in _probes(allowed):
        assert unmet({name: allowed}, {name: value}) == _sklearn_verdict(name, allowed, value), (
            step,
            name,
            value,
        )


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.text(max_size=3)),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_declared()), _ANY)
def test_any_value_is_judged_as_scikit_learn(
    declared: tuple[str, str, list[Any]], value: Any
) -> None:
    _, name, allowed = declared
    assert unmet({name: allowed}, {name: value}) == _sklearn_verdict(name, allowed, value)


def test_a_parameter_without_constraints_is_not_checked() -> None:
    assert unmet({"k": "no_validation"}, {"k": object(), "other": -1}) is None


_LOADED = """
import runpy, sys
sys.argv = ["veil", *sys.argv[1:]]
try:
    runpy.run_module("veil", run_name="__main__")
except SystemExit as done:
    code = done.code
heavy = sorted(m for m in ("sklearn", "scipy") if m in sys.modules)
print("LOADED", heavy, code)
"""


def test_a_release_with_steps_loads_neither_scikit_learn_nor_scipy(tmp_path: Path) -> None:
    """Every transform's parameter check, then a release whose policy pseudonymizes, masks,
    drops and generalizes (the scan's usual steps), in a fresh process."""
    checks = (
        "import sys\n"
        "from veil.exceptions import ParameterError\n"
        "from veil.transforms import TRANSFORMS\n"
        "for step, cls in TRANSFORMS.items():\n"
        "    if step == 'resample_continuous':  # names SciPy's distributions: SciPy's list\n"
        "        continue\n"
        "    try:\n"
        "        cls().check_parameters()\n"
        "    except ParameterError:\n"
        "        pass\n"
        "print(sorted(m for m in ('sklearn', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", checks], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr
    (tmp_path / "people.csv").write_text(
        "name,phone,age,county,diagnosis\n"
        + "".join(
            f"Person {i},07{i:08d},{30 + i % 3},{['Nairobi', 'Kisumu'][i % 2]},flu\n"
            for i in range(12)
        )
    )
    (tmp_path / "policy.yaml").write_text(
        "columns:\n"
        "  name: {role: identifier, steps: [pseudonymize: {}]}\n"
        "  phone: {role: identifier, steps: [mask: {keep_last: 2}]}\n"
        "  age: {role: quasi_identifier, steps: [generalize: {bins: [0, 32, 100]}]}\n"
        "  county: {role: quasi_identifier}\n"
        "  diagnosis: {role: insensitive}\n"
    )
    argv = ["anonymize", "people.csv", "-p", "policy.yaml", "-o", "out.csv", "--force"]
    ran = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"VEIL_KEY": TEST_KEY, "PATH": "/usr/bin:/bin"},
    )
    assert "LOADED [] 0" in ran.stdout, ran.stderr[-2000:]
    assert (tmp_path / "out.csv").read_text().count("\n") == 13
