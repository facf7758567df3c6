"""``veil synth`` good without flags: the copula by default, conditioned on ``--target``, split
into the clusters of rows the data support (chosen by BIC, against tables whose number of
groups is known), and the minority class of a real target modelled on its own rows."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.api import synthesize
from veil.cli import main
from veil.evaluate import evaluate_release
from veil.exceptions import UnknownColumnError
from veil.synth import GaussianCopula
from veil.synth import _copula as copula

DATA = Path(__file__).resolve().parents[1] / "data"
#: IBM's HR table narrowed to eight of its 35 columns, for the tests of how a mixture's groups
#: are shared with a second process (threads, kills, scripts): what they compare, a fit there
#: against a fit here, does not depend on the width, and each fit takes a third of the time.
#: The tests of what the copula learns use every column.
NARROW = [
    "Age",
    "Attrition",
    "BusinessTravel",
    "DailyRate",
    "Department",
    "DistanceFromHome",
    "MonthlyIncome",
    "OverTime",
]


def narrow_hr() -> pd.DataFrame:
    return pd.read_csv(DATA / "ibm_hr_attrition_full.csv", usecols=NARROW)


def blobs(groups: int, seed: int) -> pd.DataFrame:
    """600 rows around each of ``groups`` centres 8 standard deviations apart (one group: a
    correlated Gaussian), with a category unrelated to them."""
    rng = np.random.default_rng(seed)
    if groups == 1:
        cov = [[1, 0.5, 0.2], [0.5, 1, 0.3], [0.2, 0.3, 1]]
        points = rng.multivariate_normal([0, 0, 0], cov, 2400)
    else:
        centres = 8 * np.eye(3)[: groups - 1]
        centres = np.vstack([np.zeros(3), centres])
        points = np.vstack([rng.normal(c, 1, (600, 3)) for c in centres])
    frame = pd.DataFrame(points, columns=["a", "b", "c"])
    frame["g"] = rng.choice(["x", "y"], len(frame))
    return frame


@pytest.mark.parametrize("groups", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_auto_clusters_finds_as_many_groups_as_the_data_were_drawn_from(
    groups: int, seed: int
) -> None:
    model = GaussianCopula(clusters="auto", identifiers=[]).fit(
        blobs(groups, seed), random_state=seed
    )
    assert model.clusters_ == groups
    tried = [k for k, _ in model.cluster_bic_]
    assert tried[: groups + 1] == list(copula.CLUSTER_CANDIDATES[: groups + 1])
    assert min(model.cluster_bic_, key=lambda t: t[1])[0] == groups
    said = model.describe()[-1]
    assert ("no split" if groups == 1 else f"{groups} clusters") in said


def test_auto_clusters_on_one_group_is_the_plain_copula_row_for_row() -> None:
    frame = blobs(1, 3)
    auto = GaussianCopula(clusters="auto", identifiers=[]).fit(frame, random_state=3)
    plain = GaussianCopula(identifiers=[]).fit(frame, random_state=3)
    assert auto.clusters_ == 1
    pd.testing.assert_frame_equal(
        auto.sample(500, random_state=5), plain.sample(500, random_state=5)
    )


def test_auto_clusters_never_splits_below_the_rows_a_copula_needs() -> None:
    frame = blobs(4, 0).sample(700, random_state=0)  # four groups of ~175 rows: too few
    model = GaussianCopula(clusters="auto", identifiers=[]).fit(frame, random_state=0)
    assert all(k * copula.MIN_GROUP <= len(frame) for k, _ in model.cluster_bic_ if k > 1)
    assert model.clusters_ <= len(frame) // copula.MIN_GROUP


def test_synth_defaults_from_the_command_line(tmp_path: Path, capsys) -> None:
    source = tmp_path / "hr.csv"
    pd.read_csv(DATA / "ibm_hr_attrition_full.csv").to_csv(source, index=False)
    out = tmp_path / "s.csv"
    code = main(["synth", str(source), "-o", str(out), "--target", "Attrition", "--seed", "1"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "method: copula, the default" in printed
    assert "conditioned on Attrition (--target)" in printed
    assert "one copula per group of Attrition" in printed
    made = pd.read_csv(out)
    assert set(made["Attrition"]) == {"Yes", "No"}
    # --clusters: auto, 1 (one copula) or a number; anything else one line naming it
    code = main(["synth", str(source), "-o", str(tmp_path / "one.csv"), "--clusters", "1"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "k-means" not in printed
    assert "chosen by the BIC" not in printed
    for wrong in ("0", "many", "-2"):
        code = main(["synth", str(source), "-o", str(tmp_path / "x.csv"), "--clusters", wrong])
        err = capsys.readouterr().err
        assert code != 0
        assert f"--clusters takes auto or a whole number of at least 1, got {wrong!r}" in err
    code = main(["synth", str(source), "-o", str(tmp_path / "y.csv"), "--target", "Nope"])
    assert code != 0
    assert "Nope" in capsys.readouterr().err
    marginals = ["--method", "marginals", "--target", "Attrition"]
    code = main(["synth", str(source), "-o", str(tmp_path / "z.csv"), *marginals])
    assert code != 0
    assert "--target applies to --method copula or aim, not marginals" in capsys.readouterr().err
    assert not any((tmp_path / n).exists() for n in ("x.csv", "y.csv", "z.csv"))


def test_target_puts_itself_first_among_the_conditions() -> None:
    frame = pd.read_csv(DATA / "ibm_hr_attrition_full.csv")
    with pytest.raises(UnknownColumnError, match=r"column 'Nope' \(--target\) is not in"):
        synthesize(frame, target="Nope")
    made = synthesize(
        frame,
        target="Attrition",
        options={"condition_on": ["OverTime", "Attrition"], "clusters": None},
        random_state=0,
    )
    assert "one copula per group of Attrition, OverTime" in "\n".join(made.lines)


def test_the_rarer_class_of_a_real_target_gets_a_copula_of_its_own() -> None:
    """IBM's HR table (a real table the copula was not developed on): 16% of employees left.
    Their rows were drawn from the whole table's copula when the class was under 200 rows, so a
    model trained on the synthetic rows could not tell leavers (ROC-AUC 0.55, real rows 0.75);
    from a copula of their own it can."""
    hr = pd.read_csv(DATA / "ibm_hr_attrition_full.csv")
    order = np.random.default_rng(0).permutation(len(hr))
    cut = round(0.25 * len(hr))
    holdout, train = hr.iloc[order[:cut]], hr.iloc[order[cut:]]
    leavers = int((train["Attrition"] == "Yes").sum())
    assert copula.MIN_TARGET_GROUP <= leavers < copula.MIN_GROUP  # the case this is about
    made = synthesize(train, target="Attrition", random_state=1)
    said = "\n".join(made.lines)
    groups = 2 * (1 if "no split" in said else int(said.split(" clusters, chosen")[0].split()[-1]))
    assert f"{groups} of {groups} groups have their own" in said  # the leavers' included
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        measured = evaluate_release(train, made.data, holdout=holdout, target="Attrition", seed=0)
    tstr, trtr = measured.utility["tstr"], measured.utility["trtr"]
    assert tstr["roc_auc"] > 0.65  # 0.55 from the whole table's copula
    assert tstr["roc_auc"] > trtr["roc_auc"] - 0.1
    assert tstr["f1"] > 0.25  # a model that predicts nobody leaves has F1 0


def test_groups_fitted_in_a_second_process_are_the_same_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The groups' copulas fitted partly in a second process (each process taking the
    largest group left when it is free, and each condition's values sent there before the
    clusters are known) give the same rows, value for value, as fitted one after the other
    (IBM's HR table, conditioned on attrition and overtime, with 3 clusters)."""
    hr = narrow_hr()
    model = {"condition_on": ["Attrition", "OverTime"], "clusters": 3}
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)  # one after the other
    alone = GaussianCopula(**model).fit(hr, random_state=4)
    sent: list[object] = []
    started = copula.second_process

    class Counted:
        def __init__(self, pool: object) -> None:
            self.pool = pool

        def submit(self, *args: object) -> object:
            sent.append(args[0])
            return self.pool.submit(*args)  # type: ignore[attr-defined]

    monkeypatch.setattr(copula, "second_process", lambda rows: Counted(started(rows)))
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 0)  # some of them in a second process
    early: list[int] = []
    sending = copula._early_groups

    def counted_early(*args: Any) -> Any:
        futures, rows = sending(*args)
        early.append(len(futures))
        return futures, rows

    monkeypatch.setattr(copula, "_early_groups", counted_early)
    shared = GaussianCopula(**model).fit(hr, random_state=4)
    assert len(shared.parts_) >= 4
    assert sent  # some fitted there
    assert all(fn is copula._fit_group for fn in sent)
    assert early  # the conditions' values were sent before the clusters were known
    assert early[0] >= 2
    assert list(shared.parts_) == list(alone.parts_)
    for key, part in alone.parts_.items():
        np.testing.assert_array_equal(shared.parts_[key].correlation_, part.correlation_)
    pd.testing.assert_frame_equal(
        shared.sample(2_000, random_state=7), alone.sample(2_000, random_state=7)
    )


def test_a_script_without_a_main_guard_fits_once(tmp_path: Path) -> None:
    """A user's script that fits a mixture at its top level, with no ``if __name__ ==
    "__main__"``: the second process must not run the script again (multiprocessing's
    forkserver did, and its pool broke)."""
    import subprocess
    import sys

    script = tmp_path / "plain_script.py"
    script.write_text(
        "import pandas as pd\n"
        "from veil.synth import GaussianCopula, _copula\n"
        "_copula.PARALLEL_ROWS = 0\n"
        "print('the script ran', flush=True)\n"
        f"hr = pd.read_csv({str(DATA / 'ibm_hr_attrition_full.csv')!r}, usecols={NARROW!r})\n"
        "model = GaussianCopula(condition_on='Attrition', clusters=3).fit(hr, random_state=1)\n"
        "print('parts', len(model.parts_), flush=True)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("the script ran") == 1
    assert "parts " in done.stdout


def test_two_mixtures_fitted_at_once_share_the_second_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two threads fitting mixtures at the same time (a workbench serving two requests) share
    the one second process and each gets the rows it gets alone."""
    import threading

    hr = narrow_hr()

    def made(seed: int) -> pd.DataFrame:
        model = GaussianCopula(condition_on="Attrition", clusters=3).fit(hr, random_state=seed)
        return model.sample(500, random_state=9)

    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)
    alone = {seed: made(seed) for seed in (1, 2)}
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 0)
    together: dict[int, pd.DataFrame] = {}
    threads = [
        threading.Thread(target=lambda s=seed: together.__setitem__(s, made(s))) for seed in (1, 2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for seed in (1, 2):
        pd.testing.assert_frame_equal(together[seed], alone[seed])


def _hr_mixture(seed: int) -> pd.DataFrame:
    hr = narrow_hr()
    model = GaussianCopula(condition_on="Attrition", clusters=3).fit(hr, random_state=seed)
    return model.sample(500, random_state=9)


def test_the_callers_own_joblib_work_runs_beside_a_mixture_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user's ``joblib.Parallel`` (loky, two workers) running in another thread while veil
    fits a mixture: both finish with their own answers. (When veil took joblib's shared
    reusable executor and resized it to one worker, the user's work failed with an
    AttributeError inside joblib.)"""
    import threading

    from joblib import Parallel, delayed

    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)
    alone = _hr_mixture(1)
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 0)
    done = threading.Event()
    answers: list[int] = []
    failures: list[BaseException] = []

    def users_work() -> None:
        try:
            while not done.is_set() or len(answers) < 2:
                squares = Parallel(n_jobs=2, backend="loky")(delayed(abs)(-i) for i in range(40))
                answers.append(sum(squares))
        except BaseException as err:  # reported below, not lost in the thread
            failures.append(err)

    thread = threading.Thread(target=users_work)
    thread.start()
    try:
        together = _hr_mixture(1)
    finally:
        done.set()
        thread.join(timeout=300)
    assert failures == []
    assert len(answers) >= 2
    assert set(answers) == {sum(range(40))}
    pd.testing.assert_frame_equal(together, alone)


def test_a_mixture_fit_survives_its_second_process_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second process's worker killed (the kernel's out-of-memory killer, a user's kill):
    the next fit still gives the rows it gives in one process (the pool is replaced, or the
    groups sent there are fitted here)."""
    import os
    import signal

    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)
    alone = _hr_mixture(2)
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 0)
    pool = copula.second_process(1)
    assert pool is not None
    os.kill(pool.submit(os.getpid).result(timeout=120), signal.SIGKILL)
    pd.testing.assert_frame_equal(_hr_mixture(2), alone)


def test_veil_synth_starts_a_mixtures_second_process_before_reading_a_large_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``veil synth`` of a copula mixture on a file that may hold ``PARALLEL_ROWS`` rows starts
    the second process before it reads (its imports overlap this process's); not for
    ``--clusters 1`` (one copula), another method, or a small file."""
    import veil.cli.synth
    import veil.synth

    started: list[str] = []
    monkeypatch.setattr(veil.synth, "start_second_process", lambda: started.append("yes") or True)
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)  # each fit in this process here
    hr = narrow_hr()
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    hr.head(200).to_csv(small, index=False)
    hr.to_csv(large, index=False)
    # the narrow table's file stands for a large one: the threshold is set between the two
    threshold = (small.stat().st_size + large.stat().st_size) // 2
    monkeypatch.setattr(veil.cli.synth, "MIXTURE_BYTES", threshold)
    ways = {
        ("--clusters", "2"): ["yes"],
        ("--target", "Attrition"): ["yes"],
        ("--clusters", "1"): [],
        ("--method", "marginals"): [],
    }
    for flags, expected in ways.items():
        started.clear()
        out = tmp_path / f"out{flags[1]}.csv"
        assert main(["synth", str(large), "-o", str(out), *flags, "--seed", "1"]) == 0
        assert started == expected, flags
    started.clear()
    assert main(["synth", str(small), "-o", str(tmp_path / "s.csv"), "--clusters", "2"]) == 0
    assert started == []


def test_the_second_process_started_early_is_the_one_the_fit_uses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``start_second_process`` starts the executor a mixture's fit then finds running (its
    worker already importing the copula), rather than a second one."""
    import veil.synth
    from veil.synth import _second

    assert veil.synth.start_second_process() is True
    early = _second._EXECUTOR
    assert early is not None
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 10**12)
    alone = _hr_mixture(3)
    monkeypatch.setattr(copula, "PARALLEL_ROWS", 0)
    assert copula.second_process(1) is early
    pd.testing.assert_frame_equal(_hr_mixture(3), alone)
