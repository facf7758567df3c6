"""Client-level DP in federated averaging: noise of the promised scale from OpenDP, updates
clipped, the run's (epsilon, delta) charged once to the ledger before training, refused when
the budget cannot pay."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.dp import Accountant
from veil.dp.budget import Budget, dataset_id
from veil.exceptions import BudgetExceededError, InputError, ParameterError
from veil.federated._dp import ClientDP, charged, privatize
from veil.federated.simulate import simulate

ADULT = Path(__file__).resolve().parents[1] / "data" / "arx_adult" / "adult.csv.gz"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, sep=";").sample(3_000, random_state=4).reset_index(drop=True)


def test_noise_has_the_planned_scale_and_updates_are_clipped() -> None:
    privacy = ClientDP(epsilon=2.0, delta=1e-6, rounds=5, clip=0.5)
    # the plan: rho from (epsilon, delta), and back
    rho = privacy.rho
    assert rho + 2 * math.sqrt(rho * math.log(1e6)) == pytest.approx(2.0)
    epsilon, opendp_rho = charged(privacy)  # OpenDP's own privacy map
    assert opendp_rho == pytest.approx(rho, rel=1e-9)
    assert epsilon >= 2.0 - 1e-12
    noise = privatize(np.zeros(20_000), privacy, bound=1e9)
    assert np.std(noise) == pytest.approx(privacy.sigma, rel=0.03)
    assert abs(np.mean(noise)) < 4 * privacy.sigma / math.sqrt(20_000)
    # with almost no noise, a long update comes back at the clip norm
    loose = ClientDP(epsilon=1e7, delta=1e-6, rounds=1, clip=0.5)
    clipped = privatize(np.full(100, 10.0), loose, bound=1e9)
    assert np.linalg.norm(clipped) == pytest.approx(0.5, rel=1e-2)
    assert np.abs(privatize(np.zeros(10), privacy, bound=0.1)).max() <= 0.1


def test_a_dp_run_charges_the_ledger_once_and_a_small_budget_stops_it(
    adult: pd.DataFrame, tmp_path: Path
) -> None:
    ledger = Accountant.create(tmp_path / "ledger.db", Budget(8.0, 1e-5),
                               dataset=dataset_id(adult))  # fmt: skip
    result = simulate(adult, target="salary-class", rounds=3, encrypt="paillier", key_bits=1024,
                      dp_epsilon=5.0, accountant=ledger)  # fmt: skip
    entries = ledger.entries()
    assert len(entries) == 1
    assert entries[0].epsilon == pytest.approx(5.0)
    assert "client-level DP" in entries[0].what
    assert result.privacy is not None
    assert result.to_dict()["dp"]["sigma"] == pytest.approx(ClientDP(5.0, 1e-6, 3, 1.0).sigma)
    plain = simulate(adult, target="salary-class", rounds=3, encrypt="none")
    assert not np.allclose(result.weights, plain.weights, atol=1e-3)  # the noise is there
    with pytest.raises(BudgetExceededError, match="only epsilon 3"):
        simulate(adult, target="salary-class", rounds=3, dp_epsilon=5.0, accountant=ledger)
    assert len(ledger.entries()) == 1  # refused before anything was spent
    for bad in ({"encrypt": "rsa"}, {"rounds": 0}, {"model": "forest"}, {"parties": 1}):
        with pytest.raises(ParameterError):
            simulate(adult, target="salary-class", dp_epsilon=0.1, accountant=ledger, **bad)
    assert len(ledger.entries()) == 1  # a bad parameter never costs budget
    with pytest.raises(ParameterError, match="needs a privacy budget"):
        simulate(adult, target="salary-class", rounds=3, dp_epsilon=1.0)
    with pytest.raises(ParameterError, match="--dp-clip must be positive"):
        simulate(adult, target="salary-class", rounds=3, dp_epsilon=1.0, dp_clip=0.0,
                 accountant=ledger)  # fmt: skip


def test_a_party_without_a_budget_refuses_a_dp_round() -> None:
    from flwr.app import Context, RecordDict

    from veil.federated._flower import _charge

    context = Context(run_id=1, node_id=1, node_config={"party": "a"}, state=RecordDict(),
                      run_config={})  # fmt: skip
    with pytest.raises(InputError, match="no privacy budget to charge"):
        _charge(context, ClientDP(1.0, 1e-6, 3, 1.0), 1)
