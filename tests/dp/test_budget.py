"""The ledger: persists, never overspends (not even with racing processes), and a release that
failed once it had read the data is charged (a bad request, refused before, costs nothing)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp import Accountant, Budget
from veil.dp.budget import compose
from veil.exceptions import BudgetExceededError, InputError, ParameterError


def test_ledger_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "budget.db"
    acc = Accountant.create(path, Budget(1.0, 1e-6))
    with acc.spend(0.3, what="mean(Age)"):
        pass
    again = Accountant(path)  # a new process would do just this
    assert again.remaining().epsilon == pytest.approx(0.7)
    assert [(e.what, e.status) for e in again.entries()] == [("mean(Age)", "spent")]
    with pytest.raises(InputError, match="already exists"):
        Accountant.create(path, Budget(5.0))


def test_a_failure_after_the_data_was_read_is_charged(tmp_path: Path) -> None:
    # the block reads the data: its failure tells something about it, so it is never free
    acc = Accountant.create(tmp_path / "b.db", Budget(1.0))
    with pytest.raises(RuntimeError, match="boom"), acc.spend(0.5, what="model fit"):
        raise RuntimeError("boom")
    assert [(e.what, e.status) for e in acc.entries()] == [
        ("model fit (failed: RuntimeError)", "spent")
    ]
    assert acc.remaining().epsilon == 0.5


def test_overspend_names_what_and_what_remains(tmp_path: Path) -> None:
    acc = Accountant.create(tmp_path / "b.db", Budget(1.0))
    with acc.spend(0.8, what="count()"):
        pass
    ran = []
    with (
        pytest.raises(
            BudgetExceededError, match=r"'mean\(Age\)' asks for epsilon 0.5.*only epsilon 0.2"
        ),
        acc.spend(0.5, what="mean(Age)"),
    ):
        ran.append(True)
    assert ran == []  # nothing was computed: check before compute
    assert len(acc.entries()) == 1


def test_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="epsilon must be a finite non-negative number"):
        Budget(-1.0)
    with pytest.raises(ParameterError, match="composition must be one of"):
        Accountant.create(tmp_path / "b.db", Budget(1.0), composition="magic")
    with pytest.raises(InputError, match="veil budget init"):
        Accountant(tmp_path / "missing.db")


def _try_spend(args: tuple[str, float, int]) -> int:
    path, epsilon, attempts = args
    acc = Accountant(path)
    won = 0
    for _ in range(attempts):
        try:
            with acc.spend(epsilon, what="race"):
                won += 1
        except BudgetExceededError:
            pass
    return won


def test_racing_processes_never_overspend(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    Accountant.create(path, Budget(2.0))
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        wins = pool.map(_try_spend, [(str(path), 0.1, 15)] * 4)  # 60 attempts for 20 slots
    acc = Accountant(path)
    assert sum(wins) == 20
    assert acc.spent().epsilon == pytest.approx(2.0)
    assert acc.remaining().epsilon == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.01, 1.0), min_size=1, max_size=30),
    st.sampled_from(["sequential", "advanced"]),
)
def test_no_sequence_of_spends_exceeds_the_budget(tmp_path_factory, spends, composition) -> None:
    path = tmp_path_factory.mktemp("b") / "b.db"
    acc = Accountant.create(path, Budget(2.0, 1e-5), composition=composition)
    for epsilon in spends:
        try:
            with acc.spend(epsilon, 1e-7, what="x"):
                pass
        except BudgetExceededError:
            pass
        spent = acc.spent()
        assert spent.epsilon <= 2.0 + 1e-9
        assert spent.delta <= 1e-5 + 1e-12


def test_advanced_composition_is_never_worse_than_sequential() -> None:
    many_small = [(0.01, 0.0)] * 400
    advanced = compose(many_small, "advanced", slack=1e-6)
    sequential = compose(many_small, "sequential", slack=0.0)
    assert advanced.epsilon < sequential.epsilon  # sqrt(k) growth beats k
    assert advanced.delta == pytest.approx(1e-6)
