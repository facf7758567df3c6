"""The contract every transform keeps: scikit-learn's, plus never mutating the input."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from tests.conftest import TEST_KEY
from veil.transforms import (
    PRAM,
    TRANSFORMS,
    ColumnTransform,
    Drop,
    Fake,
    Generalize,
    LocalSuppression,
    Mask,
    Microaggregate,
    Noise,
    PCAMask,
    Pseudonymize,
    RankSwap,
    Redact,
    RenameColumns,
    Resample,
    ResampleContinuous,
    Shuffle,
    SuppressRows,
    TopBottomCode,
)

# One representative configuration per transform; every policy name must appear here.
CASES: dict[str, Callable[[], ColumnTransform]] = {
    "drop": lambda: Drop(["name", "phone"]),
    "suppress_rows": lambda: SuppressRows(rare=3, columns=["gender", "county"]),
    "mask": lambda: Mask("phone", keep_last=3),
    "pseudonymize": lambda: Pseudonymize(["kra_pin", "name"], format="preserve"),
    "fake": lambda: Fake("name", kind="name", gender_column="gender", random_state=1),
    "redact": lambda: Redact(["county", "diagnosis"], replace="pseudonym"),
    "generalize": lambda: Generalize("age", bins=[0, 30, 50, 70, np.inf]),
    "top_bottom_code": lambda: TopBottomCode("salary", top_quantile=0.9, bottom_quantile=0.1),
    "microaggregate": lambda: Microaggregate(["age", "salary"], k=4),
    "resample": lambda: Resample("county", random_state=2),
    "resample_continuous": lambda: ResampleContinuous("salary", random_state=3),
    "noise": lambda: Noise("score", scale=0.2, random_state=4),
    "rank_swap": lambda: RankSwap("salary", p=10, random_state=5),
    "shuffle": lambda: Shuffle(["diagnosis"], random_state=6),
    "rename_columns": lambda: RenameColumns(),
    "pca_mask": lambda: PCAMask(["age", "salary"], random_state=0),
    "pram": lambda: PRAM(["county", "gender"], random_state=7),
    "local_suppression": lambda: LocalSuppression(["gender", "county"], k=3),
}


def test_every_transform_is_covered() -> None:
    assert set(CASES) == set(TRANSFORMS)
    for name, factory in CASES.items():
        assert isinstance(factory(), TRANSFORMS[name])


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, key_env: str) -> tuple[str, ColumnTransform]:
    return request.param, CASES[request.param]()


def test_input_is_never_mutated(case: tuple[str, ColumnTransform], people: pd.DataFrame) -> None:
    _, transform = case
    before = people.copy(deep=True)
    transform.fit_transform(people)
    transform.transform(people)
    pd.testing.assert_frame_equal(people, before)


def test_index_is_kept(case: tuple[str, ColumnTransform], people: pd.DataFrame) -> None:
    name, transform = case
    out = transform.fit_transform(people)
    if name in ("suppress_rows", "local_suppression"):  # may remove rows, keeps the others'
        assert out.index.isin(people.index).all()  # labels in order
        assert list(out.index) == [i for i in people.index if i in set(out.index)]
        assert len(out) < len(people) or name == "local_suppression"
    else:
        assert out.index.equals(people.index)


def test_feature_names_match_output(
    case: tuple[str, ColumnTransform], people: pd.DataFrame
) -> None:
    _, transform = case
    out = transform.fit_transform(people)
    assert list(out.columns) == list(transform.get_feature_names_out())


def test_clone_round_trip(case: tuple[str, ColumnTransform], people: pd.DataFrame) -> None:
    _, transform = case
    twin = clone(transform)
    assert twin.get_params() == transform.get_params()
    assert twin is not transform
    # seeded transforms give the same release from a clone
    pd.testing.assert_frame_equal(twin.fit_transform(people), transform.fit_transform(people))


def test_set_output_pandas_in_pipeline(
    case: tuple[str, ColumnTransform], people: pd.DataFrame
) -> None:
    _, transform = case
    pipe = Pipeline([("step", transform)]).set_output(transform="pandas")
    out = pipe.fit_transform(people)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(pipe.get_feature_names_out())


def test_transform_before_fit_fails(
    case: tuple[str, ColumnTransform], people: pd.DataFrame
) -> None:
    from sklearn.exceptions import NotFittedError

    _, transform = case
    with pytest.raises(NotFittedError):
        transform.transform(people)


def test_pickle_round_trip_holds_no_key(
    case: tuple[str, ColumnTransform], people: pd.DataFrame
) -> None:
    _, transform = case
    transform.fit(people)
    blob = pickle.dumps(transform)
    assert TEST_KEY.encode() not in blob
    restored = pickle.loads(blob)
    pd.testing.assert_frame_equal(restored.transform(people), transform.transform(people))


def test_pipeline_of_several_steps(key_env: str, people: pd.DataFrame) -> None:
    pipe = Pipeline(
        [
            ("ids", Pseudonymize("kra_pin")),
            ("drop", Drop(["name", "phone"])),
            ("age", Generalize("age", bins=4, strategy="quantile")),
            ("names", RenameColumns()),
        ]
    ).set_output(transform="pandas")
    out = pipe.fit_transform(people)
    assert list(out.columns) == [f"c{i:02d}" for i in range(8)]
    assert out.index.equals(people.index)


def test_inside_column_transformer(people: pd.DataFrame) -> None:
    ct = ColumnTransformer(
        [("mask", Mask(keep_first=2), ["phone"])],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    out = ct.fit_transform(people)
    assert out["phone"].str.match(r"^07\*{8}$").all()
    assert out.index.equals(people.index)


def test_numpy_input_gets_sklearn_names() -> None:
    out = TopBottomCode(top=1.0).fit_transform(np.array([[0.5, 3.0], [2.0, -1.0]]))
    assert list(out.columns) == ["x0", "x1"]
    assert out.to_numpy().max() == 1.0


def test_every_parameter_declares_its_constraints() -> None:
    """Each parameter's allowed values are declared once, on the transform (scikit-learn's
    ``_parameter_constraints``): the policy checks them from there."""
    for name, cls in TRANSFORMS.items():
        params = set(cls().get_params(deep=False))
        assert set(cls._parameter_constraints) == params, name


def test_representative_configurations_pass_their_own_checks(
    case: tuple[str, ColumnTransform],
) -> None:
    _, transform = case
    transform.check_parameters()  # raises if the declared constraints refuse a good value


# a value each constraint refuses, and the words the refusal must contain
BAD_STEPS = [
    ("microaggregate", {"k": 1}, "k must be an int in the range [2, inf), got 1"),
    ("microaggregate", {"method": "kmeans"}, "method must be a str among"),
    ("mask", {"keep_last": True}, "keep_last must not be true or false"),
    ("mask", {"keep_first": -1}, "keep_first must be an int in the range [0, inf)"),
    ("mask", {"char": "**"}, "char must be a single character"),
    ("pseudonymize", {"length": 100}, "length must be an int in the range [8, 64], got 100"),
    ("pseudonymize", {"format": "fpe"}, "format must be a str among"),
    ("noise", {"scale": -1}, "scale must be a float in the range [0.0, inf), got -1"),
    ("rank_swap", {"p": 0}, "p must be a float in the range (0.0, 100.0]"),
    ("generalize", {"bins": 1}, "bins must be an int in the range [2, inf)"),
    ("generalize", {"date": "fortnight"}, "date must be a str among"),
    ("generalize", {}, "Generalize needs exactly one of bins, mapping, date or round_to"),
    ("top_bottom_code", {"top_quantile": 1.5}, "top_quantile must be a float in the range"),
    ("suppress_rows", {"rare": 1}, "rare must be an int in the range [2, inf)"),
    ("fake", {"kind": "date"}, "kind='date' needs start and end"),
    ("resample_continuous", {"criterion": "bic"}, "criterion must be a str among"),
    ("pca_mask", {"n_components": 0}, "n_components must be an int in the range [1, inf)"),
    ("shuffle", {"together": "yes"}, "together must be an instance of 'bool'"),
    ("pram", {"pd": 1.5}, "pd must be a float in the range [0.0, 1.0], got 1.5"),
    ("local_suppression", {"k": 1}, "k must be an int in the range [2, inf), got 1"),
]


@pytest.mark.parametrize(("name", "params", "said"), BAD_STEPS)
def test_a_bad_parameter_is_refused_when_the_policy_loads(
    name: str, params: dict, said: str
) -> None:
    from veil.exceptions import PolicyError
    from veil.policy import Policy

    with pytest.raises(PolicyError) as info:
        Policy.from_dict({"columns": {"x": {"steps": [{name: params}]}}}, source="p.yaml")
    assert f"p.yaml: columns.x.steps[0] ({name}): {said}" in str(info.value)


def test_the_command_line_refuses_a_bad_policy_before_reading_data(tmp_path, capsys) -> None:
    from veil.cli import main

    policy = tmp_path / "p.yaml"
    policy.write_text("columns:\n  Age:\n    steps: [{microaggregate: {k: 1}}]\n")
    # the data file does not exist: the policy's error must come first, alone
    code = main(
        [
            "anonymize",
            str(tmp_path / "absent.csv"),
            "-p",
            str(policy),
            "-o",
            str(tmp_path / "r.csv"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "columns.Age.steps[0] (microaggregate): k must be an int" in err
    assert "absent.csv" not in err
