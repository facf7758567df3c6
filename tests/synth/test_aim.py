"""DP synthesis by AIM (OpenDP's, with veil's workload and model): its projection checked
against mbi's own variable elimination, the budget charged exactly, the target's pairs
weighed, numbers kept continuous and whole where they were, on a wage survey it was not built
on, and the command line."""

from __future__ import annotations

import itertools
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.conftest import error_lines
from veil.cli import main
from veil.dp import Accountant, Budget
from veil.dp.budget import dataset_id
from veil.exceptions import ParameterError, PrivacyLeakWarning
from veil.synth import AIM, METHODS, make
from veil.synth._aim import TARGET_WEIGHT, workload
from veil.synth._project import fit_model, projecting, sample_rows

DATA = Path(__file__).resolve().parents[1] / "data"


def test_einsum_projection_equals_mbi_variable_elimination() -> None:
    """Marginals the model does not hold, summed out by numpy, equal mbi's own variable
    elimination (the oracle) on random potentials over a chain and a triangle."""
    from mbi import CliqueVector, Domain, MarkovRandomField
    from mbi.marginal_oracles import message_passing_stable, variable_elimination

    domain = Domain(["a", "b", "c", "d", "e"], [3, 4, 2, 5, 3])
    cliques = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("e",)]
    potentials = CliqueVector.random(domain, cliques) * 3.0
    model = MarkovRandomField(
        potentials=potentials, marginals=message_passing_stable(potentials, 1234.0), total=1234.0
    )
    fast = projecting(model)
    assert type(fast) is not MarkovRandomField  # the projection was replaced
    for attrs in [("a", "d"), ("b", "d", "e"), ("d", "a"), ("e", "b"), ("a", "b")]:
        expected = variable_elimination(potentials, attrs, 1234.0)
        got = fast.project(attrs)
        assert got.domain.attributes == expected.domain.attributes
        np.testing.assert_allclose(
            np.asarray(got.values), np.asarray(expected.values), rtol=1e-5, atol=1e-6
        )
        assert float(np.asarray(got.values).sum()) == pytest.approx(1234.0)


def _cycle_model() -> tuple[Any, Any]:
    """adult's cycle in small: education and its number as one, income hanging on education,
    an occupation on the number and on income: (its potentials, the model)."""
    from mbi import CliqueVector, Domain, Factor, MarkovRandomField
    from mbi.marginal_oracles import message_passing_stable

    domain = Domain(["edu", "edu_num", "occ", "income"], [4, 4, 3, 2])
    logs = {
        ("edu", "income"): np.array([[2.0, -2.0], [1.0, -1.0], [-1.0, 1.0], [-2.0, 2.0]]),
        ("edu", "edu_num"): 6.0 * np.eye(4),
        ("edu_num", "occ"): np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 0, 0]]),
        ("occ", "income"): np.array([[0.5, 0], [0, 0.5], [0.2, 0]]),
    }
    potentials = CliqueVector(
        domain, list(logs), {cl: Factor(domain.project(cl), v) for cl, v in logs.items()}
    )
    model = MarkovRandomField(
        potentials=potentials, marginals=message_passing_stable(potentials, 1.0), total=1.0
    )
    return potentials, model


def _distance(potentials: Any, rows: Any, attrs: tuple[str, str], n: int) -> float:
    """Total variation between the rows' pair and the model's exact one (mbi's variable
    elimination: the oracle)."""
    from mbi.marginal_oracles import variable_elimination

    exact = np.asarray(variable_elimination(potentials, attrs, 1.0).values)
    at = np.ravel_multi_index(tuple(np.asarray(rows[a]) for a in attrs), exact.shape)
    drawn = np.bincount(at, minlength=exact.size).reshape(exact.shape) / n
    return float(0.5 * np.abs(drawn - exact).sum())


def test_rows_are_drawn_from_the_model_where_its_pairs_close_a_cycle() -> None:
    """Every pair of the drawn rows is the model's own (exact marginals by variable
    elimination), where mbi 1.1's draws lose education's tie to income altogether."""
    potentials, model = _cycle_model()
    n = 100_000
    rows = sample_rows(model, n, np.random.default_rng(0))
    columns = ["edu", "edu_num", "occ", "income"]
    for pair in itertools.combinations(columns, 2):
        assert _distance(potentials, rows, pair, n) < 0.01, pair
    state = np.random.get_state()
    try:
        np.random.seed(0)
        theirs = model.synthetic_data(n, "sample").df  # type: ignore[attr-defined]
    finally:
        np.random.set_state(state)
    # when this fails, mbi draws right: veil's sample_rows can go
    assert _distance(potentials, theirs, ("edu", "income"), n) > 0.2


def test_fit_model_is_mbis_mirror_descent_with_its_compiled_code_dropped() -> None:
    """MST's model, fitted with JAX's code dropped between the loss and the fit, equals mbi's
    own ``mirror_descent`` (the oracle) on the same noisy marginals, and leaves nothing
    compiled behind."""
    import jax
    import jax.numpy as jnp
    from mbi import Domain, LinearMeasurement
    from mbi.estimation import mirror_descent

    rng = np.random.default_rng(5)
    domain = Domain(["a", "b", "c"], [3, 4, 2])
    measurements = [
        LinearMeasurement(jnp.asarray(rng.poisson(50, size=size).astype(float)), clique, 2.0)
        for clique, size in [(("a",), 3), (("a", "b"), 12), (("b", "c"), 8)]
    ]
    expected = mirror_descent(domain, measurements, iters=30)
    kept = jax.jit(lambda x: x + 1)
    kept(jnp.ones(2))
    assert kept._cache_size() == 1
    got = fit_model(domain, measurements, iters=30)
    assert kept._cache_size() == 0  # JAX's compiled code was dropped
    assert got.total == pytest.approx(expected.total)
    for clique in [("a", "b"), ("b", "c")]:
        np.testing.assert_allclose(
            np.asarray(got.project(clique).values),
            np.asarray(expected.project(clique).values),
            rtol=1e-6,
            atol=1e-8,
        )


def test_workload_weighs_the_targets_pairs() -> None:
    queries = workload(["age", "sex", "income", "hours"], "income")
    assert len(queries) == 6  # every pair, once
    weights = {q.by: q.weight for q in queries}
    assert weights[("sex", "income")] == TARGET_WEIGHT
    assert weights[("age", "hours")] == 1.0
    assert [q.by for q in workload(["age"], None)] == [("age",)]


def _ledger(tmp_path: Path, frame: pd.DataFrame, total: float = 10.0) -> Accountant:
    return Accountant.create(tmp_path / "ledger.db", Budget(total), dataset=dataset_id(frame))


def test_aim_on_a_wage_survey_keeps_numbers_and_charges_epsilon(tmp_path: Path) -> None:
    """CPS 1985 (534 workers, not a table AIM was developed on): epsilon 2 is charged once and
    exactly; wage (a float) comes back with more distinct values than bins; wage, age and
    education inside their ranges, whole numbers whole; no missing cell and no category
    outside the column's."""
    frame = pd.read_csv(DATA / "surveys" / "CPS1985.csv.gz")
    frame = frame[["wage", "education", "age", "occupation", "union"]]
    accountant = _ledger(tmp_path, frame)
    bounds = {"wage": (0.0, 50.0), "age": (18.0, 64.0), "education": (2.0, 18.0)}
    model = AIM(epsilon=2.0, accountant=accountant, bounds=bounds, bins=8, target="union")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the categories are read from the data: said, not here
        synthetic = model.fit(frame).sample(None, random_state=1)
    assert accountant.spent().epsilon == pytest.approx(2.0)
    assert [e.what for e in accountant.entries()] == ["synthesize AIM (5 columns)"]
    assert model.rounds_ >= 2
    assert not synthetic.isna().any().any()
    for name, (low, high) in bounds.items():
        values = pd.to_numeric(synthetic[name])
        assert values.between(low, high).all(), name
    # wage drawn inside its bins, not one value a bin. (Education and age are whole numbers:
    # with the histogram's share of epsilon 2, 0.07 a column, a rare year of schooling's
    # count can fall to 0, and a run once gave education 7 values in its 8 bins; drawing
    # inside the bins is tested on its own in test_bins.py.)
    assert pd.to_numeric(synthetic["wage"]).nunique() > 8
    for name in ("age", "education"):
        assert (synthetic[name] == synthetic[name].round()).all(), name
    for name in ("occupation", "union"):
        assert set(synthetic[name]) <= set(frame[name]), name
    # the same fit, the same seed: the same rows
    assert model.sample(None, random_state=1).equals(synthetic)


def test_aim_refuses_a_target_it_does_not_synthesize(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": ["x", "y"] * 50, "b": ["u", "v", "w", "u"] * 25})
    accountant = _ledger(tmp_path, frame)
    model = AIM(epsilon=1.0, accountant=accountant, columns=["a", "b"], target="c")
    with (
        pytest.raises(ParameterError, match="target 'c' is not among the columns"),
        pytest.warns(PrivacyLeakWarning),  # the categories were read from the data: said
    ):
        model.fit(frame)
    assert accountant.spent().epsilon == 0.0  # refused before anything was charged
    with pytest.raises(ParameterError, match="iterations"):
        AIM(epsilon=1.0, accountant=accountant, iterations=0)
    assert METHODS["aim"] is AIM
    assert isinstance(make("aim", epsilon=1.0, accountant=accountant), AIM)


def test_aim_ends_its_rounds_on_the_last_sliver_of_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wage survey at epsilon 1 once left AIM's last round 5.6e-18 of budget: OpenDP's scale
    search raised instead of ending the rounds, and the release failed after every round had
    been measured. A selection recorded from a real fit, asked again with a budget no noise
    scale fits: OpenDP raises; inside the release veil runs, the rounds end (None)."""
    from opendp.extras.mbi import _aim
    from opendp.mod import OpenDPException

    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []
    original = _aim._make_aim_select

    def recorded(*args: object, **kwargs: object) -> object:
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(_aim, "_make_aim_select", recorded)
    frame = pd.read_csv(DATA / "surveys" / "CPS1985.csv.gz")[["wage", "gender", "union"]]
    model = AIM(
        epsilon=1.0, accountant=_ledger(tmp_path, frame), bounds={"wage": (0.0, 50.0)}, bins=4
    )
    with pytest.warns(PrivacyLeakWarning):
        model.fit(frame)
    args, kwargs = calls[0]
    sliver = {**kwargs, "d_out": 5.6e-19}  # a tenth of 5.6e-18: the selection's share
    with pytest.raises(OpenDPException, match="scale"):
        original(*args, **sliver)
    with model._releasing():
        assert _aim._make_aim_select(*args, **sliver) is None
    assert model.unspent_ == 5.6e-19
    assert _aim._make_aim_select is recorded  # put back on leaving


def test_cli_aim_with_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "cps.csv"
    frame = pd.read_csv(DATA / "surveys" / "CPS1985.csv.gz").drop(columns="rownames")
    frame[["wage", "age", "union"]].to_csv(data, index=False)
    ledger = tmp_path / "ledger.db"
    assert main(["budget", "init", str(data), "--epsilon", "3", "--ledger", str(ledger)]) == 0
    out = tmp_path / "s.csv"
    flags = "--method aim --epsilon 1 --target union --bounds wage=0:50 --bounds age=18:64"
    code = main(["synth", str(data), "-o", str(out), "--ledger", str(ledger), *flags.split()])
    said = capsys.readouterr()
    assert code == 0, said.err
    assert "epsilon 1 spent" in said.out
    assert re.search(r"AIM: \d+ rounds, .* every pair of columns, union's weighing 16x", said.out)
    # what AIM chose is said (534 rows at epsilon 1: some runs measure no pair at all)
    listed = re.search(r"pairs measured, in AIM's order: (.*)", said.out)
    if listed is None:
        assert "no pair measured: the rows follow the one-way marginals alone" in said.out
    else:
        pairs = [set(pair.split(" x ")) for pair in listed.group(1).split(", ")]
        assert all(len(pair) == 2 and pair <= {"wage", "age", "union"} for pair in pairs)
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["wage", "age", "union"]
    assert Accountant(ledger).spent().epsilon == pytest.approx(1.0)
    # --target with MST, which has no workload, is refused before anything is charged
    refused = ["synth", str(data), "-o", str(tmp_path / "m.csv"), "--ledger", str(ledger)]
    code = main([*refused, "--method", "mst", "--epsilon", "1", "--target", "union"])
    assert code != 0
    assert error_lines(capsys.readouterr().err) == [
        "veil: error: --target applies to --method copula or aim, not mst; drop it, or use one of "
        "them"
    ]
    assert Accountant(ledger).spent().epsilon == pytest.approx(1.0)
    assert not (tmp_path / "m.csv").exists()
