"""One Ray session for every simulation a process runs.

Flower's Ray backend starts Ray when a simulation begins (4 to 5 s on two cores: its control
store, its scheduler, its workers) and shuts it down when the simulation ends (1.5 s more),
so a process comparing three encryptions paid that three times. veil starts the session
once, in an owner-only folder of its own (Ray's sockets, logs and object spill), and keeps it
for the next run; ``IDLE_SECONDS`` after the last run ended, or when the process exits, it
shuts Ray down and removes the folder (under the system's temporary folder, or ``/tmp`` where
that is too long for the sockets Ray makes in it). An idle session is not free: its scheduler
and its idle workers used 3.5 CPU seconds a minute on two cores, and their memory.

The actors (each a process that has imported Flower and veil's ClientApp: 2 to 3 s) are kept
too: a run that ended well leaves them for the next, which kills them instead where it
asks for other resources or one no longer answers. A run that failed kills its own.

A session the caller started (``ray.init`` before the simulation) is used as it is and left
running: Flower's backend would have shut it down.

Ray's servers listen on every network interface, and without authentication any process
that reaches their ports joins the session and runs code as this user, beside the parties'
rows and keys (one given only the address did). veil's sessions use Ray's token
authentication: Ray is imported with ``RAY_AUTH_MODE=token`` (Ray reads the mode once, at
its import), and each session veil starts reads one random token of the process from an
owner-only file in its folder. Where the user set ``RAY_AUTH_MODE``, the setting and its
token are theirs; where Ray was imported with authentication off, veil starts no session.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def backend_config(nodes: int) -> dict[str, Any]:
    """Flower's backend settings for ``nodes`` virtual SuperNodes on the process's session
    (started here if there is none): each actor asks for the whole CPUs that leave room for
    as many actors as there are nodes, at most one per CPU."""
    ray = imported()
    if not ray.is_initialized():
        _start()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return {"client_resources": {"num_cpus": _share(cpus, nodes), "num_gpus": 0.0}}


def _share(cpus: int, nodes: int) -> int:
    """The CPUs each actor asks for: Flower's pool then holds ``cpus // share`` actors, one
    a node up to one a CPU (Ray takes a fraction of one CPU, or whole CPUs)."""
    return cpus // max(1, min(nodes, cpus))


#: the process's session folder, while veil's session runs
_folder: Path | None = None

#: how long veil's own session outlives the last simulation (back-to-back runs share it)
IDLE_SECONDS = 60.0

#: held while a simulation runs: the session is never retired under a run
_running = threading.Lock()

#: the retirement of an idle session of veil's own, armed when a run ends
_timer: threading.Timer | None = None

#: the longest temporary folder Ray's session fits under: its sockets' paths
#: (``<tmp>/veil-ray-XXXXXXXX/r/session_<date>_<time>_<pid>/sockets/plasma_store``, up to
#: 84 bytes below ``<tmp>``) must stay within the 107 bytes a Unix socket's path may hold
_LONGEST = 23


#: the token of every session veil starts in this process (Ray keeps the first it read)
_secret: list[str] = []


def imported() -> Any:
    """Ray, imported with its token authentication on unless the user set ``RAY_AUTH_MODE``
    (or imported Ray before)."""
    if "ray" not in sys.modules:
        with _environment({} if "RAY_AUTH_MODE" in os.environ else {"RAY_AUTH_MODE": "token"}):
            import ray
    import ray

    return ray


@contextlib.contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """``values`` set in the environment within (None: unset), the caller's own restored
    after."""
    before = {name: os.environ.get(name) for name in values}
    _put(values)
    try:
        yield
    finally:
        _put(before)


def _put(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _token(folder: Path) -> dict[str, str | None]:
    """The environment that gives a session started in ``folder`` the process's token (in an
    owner-only file there); none where the user set ``RAY_AUTH_MODE`` (theirs to give)."""
    import secrets

    from ray._raylet import (  # type: ignore[attr-defined]
        AuthenticationMode,
        get_authentication_mode,
    )

    from veil.exceptions import ParameterError

    if get_authentication_mode() != AuthenticationMode.TOKEN:
        if "RAY_AUTH_MODE" in os.environ:
            return {}  # the user's choice
        raise ParameterError(
            "Ray was imported with its token authentication off, and a Ray session veil "
            "starts would let any process that reaches its ports join it: set "
            "RAY_AUTH_MODE=token before Python imports Ray, or start Ray yourself (ray.init()) "
            "before the simulation"
        )
    if "RAY_AUTH_MODE" in os.environ:
        return {}  # the user's token, as Ray finds it
    if not _secret:
        _secret.append(secrets.token_hex(32))
    path = folder / "token"
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write(_secret[0])
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(path), "RAY_AUTH_TOKEN": None}


def _start() -> None:
    ray = imported()

    global _folder
    base = tempfile.gettempdir()
    if len(base) > _LONGEST and os.access("/tmp", os.W_OK):
        base = "/tmp"  # a long TMPDIR: Ray would fail to make its sockets
    folder = Path(tempfile.mkdtemp(prefix="veil-ray-", dir=base))  # owner-only
    # the workers import what the driver can (the ClientApp may live in the caller's modules)
    path = os.pathsep.join(p for p in sys.path if p)
    try:
        token = _token(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    # Ray starts its workers at niceness 15, under every process of the machine at 0: a
    # simulation beside other work (a notebook's, a test suite's) starved (1,500 rows, one
    # round, Ray's start included: 12 s alone, 102 s beside three busy processes on two cores,
    # 27 s at the process's priority). The parties' actors work for this process, at its
    # priority, as Ray's own job runner sets them.
    niceness = {} if "RAY_worker_niceness" in os.environ else {"RAY_worker_niceness": "0"}
    with _environment({**token, **niceness}):
        ray.init(
            num_cpus=os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            _temp_dir=str(folder / "r"),  # Ray opens its own folder to all: this one is in ours
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )
    _folder = folder
    atexit.register(_end, folder)  # runs before Ray's own exit hook, registered earlier


def _end(folder: Path) -> None:
    """Shut down the session started in ``folder``, if it still runs, and remove the folder
    (a session started since, or the caller's, is left alone)."""
    import ray

    global _folder
    _disarm()
    if _folder == folder:
        with contextlib.suppress(Exception):
            ray.shutdown()
        _folder = None
        _idle.clear()  # gone with the session
        _idle_where.clear()
    shutil.rmtree(folder, ignore_errors=True)


def _retire() -> None:
    """End veil's own session, idle since its last run (a run begun meanwhile keeps it)."""
    if not _running.acquire(blocking=False):
        return
    try:
        if _folder is not None:
            _end(_folder)
    finally:
        _running.release()


def _arm() -> None:
    global _timer
    _disarm()
    if _folder is not None:  # never the caller's session
        _timer = threading.Timer(IDLE_SECONDS, _retire)
        _timer.daemon = True
        _timer.start()


def _disarm() -> None:
    global _timer
    if _timer is not None:
        _timer.cancel()
        _timer = None


#: the last run's actors, idle, kept for the next run, and where they run: the CPUs each
#: was given and the Ray node (its id is new each time a session starts)
_idle: list[Any] = []
_idle_where: list[tuple[int, str]] = []


@contextlib.contextmanager
def kept(ended_well: Callable[[], bool], nodes: int) -> Iterator[dict[str, Any]]:
    """While a simulation runs, Flower's backend takes the actors the last run left (when
    they asked for the same CPUs and still answer) before it starts new ones; when the run
    ends, its actors are kept for the next one if ``ended_well()`` and each came back to the
    pool, else killed. Ray's session is not shut down at the run's end (Flower's own
    ``terminate`` would): one of veil's own is, ``IDLE_SECONDS`` later, unless a run began.
    A run's ClientApps share their process with later runs' as they share it with other
    nodes' within one run: what veil's ClientApp keeps between messages is the node's
    context, and public keys read or built once per key file's version. Gives Flower's
    backend settings for ``nodes`` nodes (``backend_config``)."""
    from unittest import mock

    pools: list[Any] = []

    def build(self: Any, app_fn: Callable[[], Any]) -> None:
        from flwr.simulation.ray_transport.ray_actor import BasicActorPool, ClientAppActor

        self.pool = BasicActorPool(
            actor_type=ClientAppActor,
            client_resources=self.client_resources,
            actor_kwargs=self.actor_kwargs,
        )
        taken = _take(int(self.client_resources["num_cpus"]), self.pool.actors_capacity)
        self.pool.pool.extend(taken)
        self.pool.num_actors += len(taken)
        self.pool.add_actors_to_pool(self.pool.actors_capacity - len(taken))
        self.app_fn = app_fn
        pools.append(self.pool)

    def terminate(self: Any) -> None:
        pass  # the actors are settled below, once the run's outcome is known

    with _running:
        _disarm()
        try:
            config = backend_config(nodes)  # Ray imported first, as its sessions need it
        except BaseException:
            _arm()
            raise
        from flwr.server.superlink.fleet.vce.backend.raybackend import RayBackend

        with (
            mock.patch.object(RayBackend, "build", build),
            mock.patch.object(RayBackend, "terminate", terminate),
        ):
            well = False
            try:
                yield config
                well = ended_well()
            finally:
                _settle(pools, well)
                _arm()


def _take(share: int, most: int) -> list[Any]:
    """The kept actors, if they were given ``share`` CPUs on this session's node, that
    still answer (at most ``most``); every other kept actor is killed."""
    import ray

    idle, _idle[:] = list(_idle), []
    where, _idle_where[:] = list(_idle_where), []
    if where != [(share, _node())]:  # other CPUs, or a session shut down since (and them)
        _kill(idle)
        return []
    asked = {}
    for i, actor in enumerate(idle):
        with contextlib.suppress(Exception):  # an actor Ray no longer knows
            asked[actor.__ray_ready__.remote()] = i
    answered = ray.wait(list(asked), num_returns=len(asked), timeout=10)[0] if asked else []
    alive = []
    for ref in answered:
        with contextlib.suppress(Exception):  # a dead actor's answer is its error
            ray.get(ref)
            alive.append(asked[ref])
    alive.sort()
    _kill([actor for i, actor in enumerate(idle) if i not in alive[:most]])
    return [idle[i] for i in alive[:most]]


def _settle(pools: list[Any], well: bool) -> None:
    """The run's actors kept (it ended well and every actor is idle in its pool) or killed."""
    for pool in pools:
        whole = len(pool.pool) == pool.num_actors and not pool._future_to_actor
        if well and whole and not _idle:
            _idle.extend(pool.pool)
            _idle_where[:] = [(int(pool.client_resources["num_cpus"]), _node())]
        else:
            _kill([*pool.pool, *pool._future_to_actor.values()])


def _node() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def _kill(actors: list[Any]) -> None:
    import ray

    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor)
