"""Client-level DP in federated averaging: noise of the promised scale from OpenDP, updates
clipped, the run's (epsilon, delta) charged once to the ledger before training, refused when
the budget cannot pay."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.dp import Accountant
from veil.dp.budget import Budget, dataset_id
from veil.exceptions import BudgetExceededError, InputError, ParameterError
from veil.federated import _data
from veil.federated._dp import ClientDP, charged, privatize
from veil.federated.simulation import simulate

ADULT = Path(__file__).resolve().parents[1] / "data" / "arx_adult" / "adult.csv.gz"
DOMAIN = ADULT.with_name("domain.json").read_text()


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
    ledger = Accountant.create(tmp_path / "ledger.db", Budget(8.0, 1e-5), dataset=dataset_id(adult))
    result = simulate(
        adult,
        target="salary-class",
        rounds=3,
        encrypt="paillier",
        dp_epsilon=5.0,
        accountant=ledger,
        domain=DOMAIN,
    )
    entries = ledger.entries()
    assert len(entries) == 1
    assert entries[0].epsilon == pytest.approx(5.0)
    assert "3 noisy model updates" in entries[0].what
    assert "nothing else left the party" in entries[0].what
    assert len(result.privacy["releases"]) == 3
    assert result.privacy is not None
    assert result.to_dict()["dp"]["sigma"] == pytest.approx(ClientDP(5.0, 1e-6, 3, 1.0).sigma)
    # no party reported an accuracy: the table's owner scored each round on its test rows
    assert all(0 <= r["accuracy"] <= 1 for r in result.rounds)
    assert result.disclosed == [
        "that the party holds the public domain's columns (the run stops otherwise)"
    ]
    with pytest.raises(BudgetExceededError, match="only epsilon 3"):
        simulate(
            adult, target="salary-class", rounds=3, dp_epsilon=5.0, accountant=ledger, domain=DOMAIN
        )
    assert len(ledger.entries()) == 1  # refused before anything was spent
    for bad in ({"encrypt": "rsa"}, {"rounds": 0}, {"model": "forest"}, {"parties": 1}):
        with pytest.raises(ParameterError):
            simulate(
                adult,
                target="salary-class",
                dp_epsilon=0.1,
                accountant=ledger,
                domain=DOMAIN,
                **bad,
            )
    assert len(ledger.entries()) == 1  # a bad parameter never costs budget
    with pytest.raises(ParameterError, match="needs a privacy budget"):
        simulate(adult, target="salary-class", rounds=3, dp_epsilon=1.0, domain=DOMAIN)
    with pytest.raises(ParameterError, match="needs --domain FILE"):
        simulate(adult, target="salary-class", rounds=3, dp_epsilon=1.0, accountant=ledger)
    with pytest.raises(ParameterError, match="--clip must be positive"):
        simulate(
            adult,
            target="salary-class",
            rounds=3,
            dp_epsilon=1.0,
            dp_clip=0.0,
            accountant=ledger,
            domain=DOMAIN,
        )
    assert len(ledger.entries()) == 1


def test_a_party_without_a_budget_refuses_a_dp_round() -> None:
    from flwr.app import Context, RecordDict

    from veil.federated._flower import _charge

    context = Context(
        run_id=1, node_id=1, node_config={"party": "a"}, state=RecordDict(), run_config={}
    )
    with pytest.raises(InputError, match="no privacy budget to charge"):
        _charge(context, ClientDP(1.0, 1e-6, 3, 1.0), 1)


def _values(record: Any) -> list[Any]:
    """Every value a config or metric record holds (lists flattened)."""
    out: list[Any] = []
    for value in record.values():
        out.extend(value if isinstance(value, list) else [value])
    return out


def test_a_dp_run_sends_nothing_about_a_party_outside_the_charged_releases(
    adult: pd.DataFrame, tmp_path: Path
) -> None:
    """Every message the server received in a DP run, inspected: no row count (exact or as a
    weight), no category outside the public domain, no moment, no accuracy; only the noisy
    updates, encrypted and signed, and the key holder's sums of them."""
    from veil.federated._flower import Settings
    from veil.federated.simulation import partition, run_simulated

    from ._sim import Watched, nodes

    tables = partition(adult, parties=3, split_by="random")
    enrolled = nodes(tmp_path, tables)
    for node in enrolled:
        node["dp-charged"] = "owner"  # this test inspects messages; the ledger test is above
    watched: list[Watched] = []

    def watch(real: Any) -> Watched:
        watched.append(Watched(real))
        return watched[0]

    settings = Settings(target="salary-class", rounds=2, dp_epsilon=4.0, domain=DOMAIN)
    outcome = run_simulated(enrolled, settings, grid=watch)
    grid = watched[0]
    assert [r.accuracy for r in outcome.rounds] == [None, None]
    kinds = [m.metadata.message_type for m in grid.sent]
    assert "query.moments" not in kinds
    assert "evaluate" not in kinds
    counts = set()
    for i, (_, table) in enumerate(tables):
        train, test = _data.split(table, 0.2, i)
        counts |= {len(table), len(train), len(test)}
    domain = json.loads(DOMAIN)
    listed = {str(v) for values in domain.values() for v in values}
    held = {
        str(v)
        for c in adult.columns
        if not pd.api.types.is_numeric_dtype(adult[c])
        for v in adult[c].unique()
    }
    private = held - listed  # every native-country, however rare
    assert set(adult["native-country"]) <= private
    assert len(private) > 20
    seen_arrays = set()
    for reply in grid.replies:
        assert not reply.has_error(), reply.error.reason
        for name, record in reply.content.items():
            if name in ("update", "arrays"):
                seen_arrays |= set(record.keys())
                continue
            for value in _values(record):
                if isinstance(value, int | float) and not isinstance(value, bool):
                    assert value not in counts, (reply.metadata.message_type, name, value)
                text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
                leaked = [v for v in private if len(v) > 3 and v in text]
                assert not leaked, (reply.metadata.message_type, name, leaked[:3])
            assert name in ("answer", "signed"), name
    assert seen_arrays == {"update", "sum"}  # encrypted noisy updates; their decrypted sum
    # the updates went out with weight 1 (the key holder's sum reads the parties, not rows)
    sums = [r for r in grid.replies if r.metadata.message_type == "query.decrypt"]
    assert [float(np.asarray(r.content["arrays"]["sum"].numpy())[0]) for r in sums] == [
        pytest.approx(3.0, abs=1e-6)
    ] * 2
