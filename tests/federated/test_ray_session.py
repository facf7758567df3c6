"""The process's one Ray session (``veil.federated._ray``): started once in an owner-only
folder and kept between simulations, gone with its folder and its processes when it has been
idle for ``IDLE_SECONDS`` (never under a run) or when the process exits; a session the caller
started is used and left running. A run that ended well leaves its actors to the next; one
that failed kills them."""

from __future__ import annotations

import json
import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.exceptions import InputError
from veil.federated import _ray
from veil.federated._flower import Settings
from veil.federated.simulation import partition, run_simulated, simulate

from ._sim import nodes

ADULT = Path(__file__).resolve().parents[1] / "data" / "arx_adult" / "adult.csv.gz"

SCRIPT = """
import json, os, shutil, sys, tempfile, time
import pandas as pd
import ray
from veil.federated import _ray
from veil.federated.simulation import simulate

adult = pd.read_csv(sys.argv[1], sep=";").sample(900, random_state=0)
options = dict(target="salary-class", parties=2, min_parties=2, rounds=1, encrypt="none")
own = tempfile.mkdtemp(dir="/tmp")  # the caller's own session (TMPDIR is too long for it)
# with Ray's token authentication (RAY_AUTH_MODE and RAY_AUTH_TOKEN in the environment), the
# user's: veil's own session below takes the same token
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=own)
theirs = ray.get_runtime_context().gcs_address
_ray.IDLE_SECONDS = 0.2  # the caller's session is never retired, however idle
simulate(adult, **options)
time.sleep(1.5)
kept = ray.is_initialized() and ray.get_runtime_context().gcs_address == theirs
_ray.IDLE_SECONDS = 60.0
ray.shutdown()
shutil.rmtree(own)
started = _ray._folder is None
first = simulate(adult, **options).weights
folder = str(_ray._folder)
address = ray.get_runtime_context().gcs_address
actors = sorted(a._actor_id.hex() for a in _ray._idle)
second = simulate(adult, **options).weights
print(json.dumps({
    "kept": kept,
    "started": started,
    "folder": folder,
    "mode": oct(os.stat(folder).st_mode & 0o777),
    "same_session": ray.is_initialized() and ray.get_runtime_context().gcs_address == address,
    "same_model": bool((first == second).all()),
    "same_actors": len(actors) == 2 and actors == sorted(a._actor_id.hex() for a in _ray._idle),
}))
"""


def _python(script: str, argument: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` run by this Python in a process of its own, given ``argument``."""
    command = [sys.executable, "-c", script, argument]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _holding(folder: str) -> list[int]:
    """The processes whose command line names ``folder`` (Ray's own name their session)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if folder.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_one_session_kept_between_simulations_and_gone_at_exit(tmp_path: Path) -> None:
    long = tmp_path / ("a-long-temporary-folder-" * 2)
    long.mkdir()
    env = {**os.environ, "FLWR_TELEMETRY_ENABLED": "0", "TMPDIR": str(long)}
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    # the caller's own session's workers at the process's priority too (Ray's default, 15,
    # starves them beside the suite's other workers)
    env.update(RAY_worker_niceness="0")
    done = _python(SCRIPT, str(ADULT), env)
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["kept"], "the caller's own Ray session was shut down"
    # veil started one session for both runs (none while the caller's ran), in an owner-only
    # folder of its own, out of the too long TMPDIR
    assert said["started"], said
    folder = said["folder"]
    assert Path(folder).name.startswith("veil-ray-"), said
    assert Path(folder).parent == Path("/tmp"), said
    assert said["mode"] == oct(stat.S_IRWXU), said
    assert said["same_session"], said
    # the second run took the first's two actors, and trained exactly the first's model
    assert said["same_actors"], said
    assert said["same_model"], said
    # the process has exited: the folder and every process of the session are gone
    assert not Path(folder).exists(), sorted(p.name for p in Path(folder).iterdir())
    assert _holding(folder) == []


def test_actors_fit_the_nodes_and_cpus() -> None:
    """Each actor asks for the whole CPUs that leave room for one actor a node, at most one
    actor a CPU (Ray refuses a fraction of more than one CPU)."""
    for cpus, count, share in [(2, 4, 1), (2, 2, 1), (8, 3, 2), (8, 8, 1), (8, 2, 4), (1, 3, 1)]:
        got = _ray._share(cpus, count)
        assert got == share, (cpus, count, got)
        assert min(count, cpus) <= cpus // got  # Flower's pool holds cpus // share actors


def _dies(actor: object, within: float = 60) -> bool:
    """Whether the actor is dead, or dies within ``within`` seconds (Ray kills one
    asynchronously: a call queued as it was killed may still be answered)."""
    import time

    import ray

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:  # a call that reached the actor as it was being killed may never be answered
            ray.get(actor.__ray_ready__.remote(), timeout=2)  # type: ignore[attr-defined]
        except ray.exceptions.RayActorError:
            return True
        except ray.exceptions.GetTimeoutError:
            continue
        time.sleep(0.2)
    return False


def test_a_run_that_failed_kills_its_actors_and_one_that_ended_well_keeps_them(
    tmp_path: Path,
) -> None:
    ray = _ray.imported()

    adult = pd.read_csv(ADULT, sep=";").sample(1_500, random_state=4)
    tables = partition(adult, parties=2, split_by="random")
    settings = Settings(target="salary-class", rounds=1, encrypt="none", parties=2, min_parties=2)
    for name in ("good", "bad", "again"):
        (tmp_path / name).mkdir()
    run_simulated(nodes(tmp_path / "good", tables, encrypt="none"), settings)
    kept = list(_ray._idle)
    assert kept, "a run that ended well left no actor"
    assert all(ray.get(a.__ray_ready__.remote(), timeout=30) for a in kept)
    # the parties' actors run at this process's priority (Ray's default, niceness 15, starved
    # them beside any other work of the machine)
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    niceness = [
        ray.get(a.__ray_call__.remote(lambda _: os.getpriority(os.PRIO_PROCESS, 0)), timeout=30)
        for a in kept
    ]
    assert niceness == [ours] * len(kept)
    # the server stops on a party's table: the run fails after its actors answered
    bad = [tables[0], (tables[1][0], tables[1][1].drop(columns="occupation"))]
    with pytest.raises(InputError, match="lacks column 'occupation'"):
        run_simulated(nodes(tmp_path / "bad", bad, encrypt="none"), settings)
    assert _ray._idle == []
    assert all(_dies(actor) for actor in kept)  # the failed run took them, and killed them
    # the next run starts new actors, and ends well
    run_simulated(nodes(tmp_path / "again", tables, encrypt="none"), settings)
    assert _ray._idle
    assert not {a._actor_id.hex() for a in _ray._idle} & {a._actor_id.hex() for a in kept}


def _gone(folder: Path, within: float = 30) -> bool:
    """Whether ``folder`` and every process of its session are gone within ``within`` s."""
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not folder.exists() and not _holding(str(folder)):
            return True
        time.sleep(0.2)
    return False


def test_an_idle_session_of_veils_own_ends_and_never_under_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = _ray.imported()

    monkeypatch.setattr(_ray, "IDLE_SECONDS", 1.0)
    adult = pd.read_csv(ADULT, sep=";").sample(900, random_state=5)
    tables = partition(adult, parties=2, split_by="random")
    settings = Settings(target="salary-class", rounds=1, encrypt="none", parties=2, min_parties=2)
    (tmp_path / "first").mkdir()
    run_simulated(nodes(tmp_path / "first", tables, encrypt="none"), settings)
    folder = _ray._folder
    assert folder is not None, "the run started no session of veil's own"
    assert folder.exists()
    # a run in progress holds the session: its retirement, due meanwhile, leaves it
    with _ray.kept(lambda: True, 2):
        _ray._retire()
        assert ray.is_initialized()
        assert _ray._folder == folder
        assert folder.exists()
    # idle for IDLE_SECONDS after the run: shut down, its folder and processes gone
    assert _gone(folder), sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    assert not ray.is_initialized()
    assert _ray._folder is None
    assert _ray._idle == []
    # the next run starts a session of its own, in a new folder, and ends well
    (tmp_path / "next").mkdir()
    run_simulated(nodes(tmp_path / "next", tables, encrypt="none"), settings)
    assert ray.is_initialized()
    assert _ray._folder is not None
    assert _ray._folder != folder


def test_two_simulations_at_once_each_train_what_a_lone_run_trains() -> None:
    """Two threads each running a simulation in one process (a notebook's, a workbench's two
    requests): both end, each with the model a lone run trains. They share the one session,
    one run after the other (each patches Flower's backend for its run)."""
    import threading

    adult = pd.read_csv(ADULT, sep=";").sample(900, random_state=7)
    options = {"target": "salary-class", "parties": 2, "min_parties": 2, "encrypt": "none"}
    alone = simulate(adult, rounds=1, **options).weights
    trained: dict[int, object] = {}
    failed: list[BaseException] = []

    def run(index: int) -> None:
        try:
            trained[index] = simulate(adult, rounds=1, **options).weights
        except BaseException as err:  # reported below, not lost in the thread
            failed.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failed == []
    assert sorted(trained) == [0, 1]
    for weights in trained.values():
        np.testing.assert_array_equal(weights, alone)


#: a process of another user, or on another machine, given only the session's address
INTRUDER = """
import os, ray, sys
ray.init(address=sys.argv[1], log_to_driver=False)
@ray.remote(num_cpus=0)
def read():
    return os.getcwd()
print("RAN", ray.get(read.remote(), timeout=60))
"""


def test_a_process_without_the_sessions_token_cannot_join_it(tmp_path: Path) -> None:
    """Ray's servers listen on every interface: without veil's token a process that reaches
    them was able to join the session and run code as the user. It is refused now; given the
    token (the control), the same process joins and runs."""
    ray = _ray.imported()
    adult = pd.read_csv(ADULT, sep=";").sample(900, random_state=6)
    tables = partition(adult, parties=2, split_by="random")
    settings = Settings(target="salary-class", rounds=1, encrypt="none", parties=2, min_parties=2)
    run_simulated(nodes(tmp_path, tables, encrypt="none"), settings)
    address = ray.get_runtime_context().gcs_address
    assert _ray._folder is not None
    token = _ray._folder / "token"
    assert token.stat().st_mode & 0o777 == 0o600
    bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}

    refused = _python(INTRUDER, address, bare)
    assert refused.returncode != 0
    assert "RAN" not in refused.stdout
    assert "Failed to connect to Ray cluster" in refused.stderr, refused.stderr[-2000:]
    given = _python(
        INTRUDER, address, {**bare, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    )
    assert given.returncode == 0, given.stderr[-2000:]
    assert "RAN" in given.stdout


def test_ray_imported_without_authentication_starts_no_session(tmp_path: Path) -> None:
    """Ray reads its authentication mode once, at its import: imported before the simulation
    with it off, veil starts no session (one clear line), and leaves no folder behind."""
    script = (
        "import sys, pandas as pd, ray\n"
        "from veil.federated.simulation import simulate\n"
        "adult = pd.read_csv(sys.argv[1], sep=';').sample(300, random_state=0)\n"
        "simulate(adult, target='salary-class', parties=2, min_parties=2, encrypt='none')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(FLWR_TELEMETRY_ENABLED="0", TMPDIR=str(tmp_path))
    done = _python(script, str(ADULT), env)
    assert done.returncode != 0
    assert "Ray was imported with its token authentication off" in done.stderr, done.stderr
    assert "RAY_AUTH_MODE=token" in done.stderr
    assert not list(tmp_path.glob("veil-ray-*"))
