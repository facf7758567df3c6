"""``random_state`` is veil's one name for a seed (scikit-learn's); ``seed=`` still works for one
release, with a ``DeprecationWarning`` that names the new keyword, and gives the same result."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from veil._deprecated import UNSET
from veil.evaluate import evaluate_release
from veil.exceptions import VeilError
from veil.federated.simulation import simulate
from veil.learn.latent import mask_latent
from veil.synth import METHODS, from_schema

SCHEMA = {
    "columns": {
        "age": {"distribution": "norm", "params": {"loc": 40, "scale": 12}, "integer": True},
        "county": {"choice": {"Nairobi": 0.6, "Kisumu": 0.4}},
    },
}


def test_seed_is_random_state_with_a_deprecation_line() -> None:
    with pytest.warns(DeprecationWarning, match=r"from_schema\(seed=...\) is deprecated"):
        old = from_schema(SCHEMA, 50, seed=4)
    pd.testing.assert_frame_equal(old, from_schema(SCHEMA, 50, random_state=4))
    assert not old.equals(from_schema(SCHEMA, 50, random_state=5))


def test_a_synthesizer_takes_seed_as_random_state() -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.5, 4.0, 8.0] * 20, "y": list("abcde") * 20})
    model = METHODS["copula"]()
    with pytest.warns(DeprecationWarning, match="use random_state="):
        model.fit(frame, seed=1)
    with pytest.warns(DeprecationWarning, match="use random_state="):
        old = model.sample(30, seed=2)
    pd.testing.assert_frame_equal(old, model.sample(30, random_state=2))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (
            lambda: evaluate_release(_frame(), _frame(), holdout_fraction=0.3, target="no", seed=1),
            "evaluate_release",
        ),
        (lambda: mask_latent(_frame(), dim=1, method="bogus", seed=1), "mask_latent"),
        (lambda: simulate(_frame(), target="y", encrypt="bogus", seed=1), "simulate"),
    ],
)
def test_the_old_keyword_is_said_before_the_parameters_are_checked(call, name) -> None:
    with (
        pytest.warns(DeprecationWarning, match=rf"{name}\(seed=...\) is deprecated"),
        pytest.raises(VeilError),
    ):
        call()


def test_no_public_function_takes_seed_as_its_own_keyword() -> None:
    """Wherever ``seed`` is still accepted it is the deprecated spelling (default ``UNSET``)
    beside ``random_state``."""
    for function in (evaluate_release, mask_latent, simulate, from_schema):
        parameters = inspect.signature(function).parameters
        assert "random_state" in parameters, function.__name__
        assert parameters["seed"].default is UNSET, function.__name__


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0] * 10, "y": [0, 1] * 20})


def test_the_federated_function_keeps_its_name_once_its_module_is_loaded() -> None:
    """``veil.federated.simulate`` is the function; its module is ``veil.federated.simulation``
    (a module of the same name would take the name over once imported)."""
    import veil.federated
    import veil.federated.simulation

    assert veil.federated.simulate is veil.federated.simulation.simulate
    assert callable(veil.federated.simulate)
