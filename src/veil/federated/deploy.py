"""Real processes, as Flower deploys them: the server is a SuperLink with veil's ServerApp
submitted to it (``flwr run``), each party and the key holder a SuperNode running veil's
ClientApp with its own node settings. One process per party (and per machine in production).

``veil fl server`` starts the SuperLink, writes the Flower App (a ``pyproject.toml`` naming
veil's apps and the run's settings) and runs it, streaming its lines; ``veil fl client`` and
``veil fl keyholder`` start SuperNodes. The key holder's secret stays in its own file, read
only by its own ClientApp processes: the server is never given its path.

Transport is TLS with every SuperNode authenticated, on Flower's own options: the SuperLink
serves the certificate ``veil fl certs`` made and registers each enrolled node's public key
(``--enable-supernode-auth``), so a SuperNode whose key was not enrolled is refused; nodes
verify the server against the federation's CA. Flower's insecure mode (no TLS, any node may
join) is only an explicit opt-in (``--insecure``), which warns.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.exceptions import InputError, ParameterError

#: what veil's ServerApp prints when the run ends well, and before a one-line error
DONE, FAILED = "veil: federated run finished", "veil: error: "


def flower_environment(home: Path) -> dict[str, str]:
    """Flower's processes find each other (``flower-superexec``) on PATH, keep their state
    in ``home``, and send no telemetry."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "FLWR_HOME": str(home),
        "FLWR_TELEMETRY_ENABLED": "0",
    }


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.exists():
        from veil.exceptions import MissingExtraError

        raise MissingExtraError(f"{name} is missing: pip install 'veil[federated]'")
    return str(path)


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(
    host: str, port: int, timeout: float, process: subprocess.Popen[Any] | None = None
) -> None:
    """Until something listens on ``host:port`` (or the process died, or the time is up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise InputError(
                f"the Flower process exited (code {process.returncode}) before "
                f"listening on {host}:{port}"
            )
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise InputError(f"nothing listens on {host}:{port} after {timeout:.0f} s")


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT``, checked."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ParameterError(f"--server must be HOST:PORT, got {address!r}")
    return host, int(port)


def _node_config(settings: dict[str, Any]) -> str:
    parts = []
    for key, value in settings.items():
        if isinstance(value, str):
            if "'" in value or "\n" in value:
                raise ParameterError(f"{key} must not contain quotes or newlines, got {value!r}")
            parts.append(f"{key}='{value}'")
        else:
            parts.append(f"{key}={value}")
    return " ".join(parts)


@dataclass(frozen=True)
class NodeTls:
    """What a SuperNode needs to reach the SuperLink over TLS and be let in: the federation's
    CA certificate and its own node-authentication key (both from ``veil fl certs``)."""

    ca: Path
    node_key: Path

    @classmethod
    def of(cls, folder: str | Path) -> NodeTls:
        """A node's enrolment folder (``ca.pem``, ``node.key``), checked."""
        from veil.federated.certs import check_folder

        where = check_folder(folder, "node.key")
        return cls(where / "ca.pem", where / "node.key")


def supernode(
    server: str,
    settings: dict[str, Any],
    *,
    tls: NodeTls | None,
    home: Path | None = None,
    log: Any = None,
) -> subprocess.Popen[Any]:
    """A SuperNode connected to the SuperLink at ``server``, running veil's ClientApp with
    ``settings`` as its node config (``role``, ``party``, ``data``, ``secret``...); over TLS
    and authenticated unless ``tls`` is None (insecure, the caller's explicit choice)."""
    parse_address(server)
    home = home or Path(tempfile.mkdtemp(prefix="veil-flower-node-"))
    transport = (
        ["--insecure"]
        if tls is None
        else ["--root-certificates", str(tls.ca), "--auth-supernode-private-key", str(tls.node_key)]
    )
    command = [
        _tool("flower-supernode"),
        *transport,
        "--superlink",
        server,
        "--port",
        str(free_port()),
        "--node-config",
        _node_config(settings),
    ]
    return subprocess.Popen(
        command,
        env=flower_environment(home),
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


#: how often a SuperNode is started again when the port it was given was taken meanwhile
NODE_ATTEMPTS = 3


def run_node(
    server: str,
    settings: dict[str, Any],
    *,
    tls: NodeTls | None,
    started: Callable[[], None] = lambda: None,
) -> None:
    """Run a SuperNode (see :func:`supernode`) until it ends or the caller is interrupted.

    Its log is kept in its own owner-only folder (removed on the way out) so that a node that
    fails says why in one line. The port it serves its ClientApps on is free when chosen but
    may be taken before the SuperNode binds it (by another program, or an outgoing
    connection's ephemeral port): then it starts again on another, at most
    :data:`NODE_ATTEMPTS` times."""
    import shutil

    home = Path(tempfile.mkdtemp(prefix="veil-flower-node-"))
    try:
        for attempt in range(1, NODE_ATTEMPTS + 1):
            log_path = home / "supernode.log"
            with open(log_path, "wb") as log:
                process = supernode(server, settings, tls=tls, home=home, log=log)
                if attempt == 1:
                    started()
                try:
                    code = process.wait()
                finally:
                    if process.poll() is None:
                        process.terminate()
                        process.wait(timeout=10)
            if code in (0, -15):
                return
            text = log_path.read_text(errors="replace")
            if "address already in use" in text and attempt < NODE_ATTEMPTS:
                continue
            raise InputError(f"the Flower SuperNode exited with code {code}: {_reason(text)}")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _reason(log: str) -> str:
    """What a Flower process's log says about why it ended: its last error with the lines
    that go with it (Flower's exit message: code, cause, help), else its last line."""
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip() for line in log.splitlines()]
    errors = [i for i, line in enumerate(lines) if line.startswith(("ERROR", "CRITICAL"))]
    if not errors:
        said = [line.strip() for line in lines if line.strip()]
        return said[-1] if said else "it wrote nothing"
    first = errors[-1]
    told = [re.sub(r"^(ERROR|CRITICAL)\s*:\s*", "", lines[first]).strip()]
    for line in lines[first + 1 :]:
        if not line.strip() or line.startswith(("For more information", "INFO", "WARNING")):
            break
        told.append(line.strip())
    return " ".join(told)


APP = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "veil-federated"
version = "1.0.0"
description = "veil's federated averaging with protected updates"
license = "Apache-2.0"
dependencies = []

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "veil"

[tool.flwr.app.components]
serverapp = "veil.federated._flower:server_app"
clientapp = "veil.federated._flower:client_app"

[tool.flwr.app.config]
{config}
"""


def _register(certs: Any, home: Path) -> int:
    """Register each enrolled node's public key with the SuperLink (``flwr supernode
    register``): with authentication on, only these nodes may join."""
    from veil.federated.certs import node_keys

    keys = node_keys(certs)
    if not keys:
        raise InputError(
            f"{certs / 'nodes'} holds no node keys: make the federation with `veil fl certs`"
        )
    for key in keys:
        done = subprocess.run(
            [_tool("flwr"), "supernode", "register", str(key), "veil"],
            env=flower_environment(home),
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0 or "registered successfully" not in done.stdout:
            last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise InputError(f"the SuperLink did not register node key {key.name}: {last[0]}")
    return len(keys)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


@contextmanager
def superlink(
    port: int, *, home: Path, certs: Any = None, log: Any = None, timeout: float = 60.0
) -> Iterator[subprocess.Popen[Any]]:
    """A SuperLink on ``port`` (all its APIs on it, as Flower 1.41 serves them), stopped on
    the way out: over TLS with SuperNode authentication when ``certs`` (the server's folder
    from ``veil fl certs``) is given, else insecure."""
    transport = (
        ["--insecure"]
        if certs is None
        else [
            "--ssl-ca-certfile",
            str(certs / "ca.pem"),
            "--ssl-certfile",
            str(certs / "server.pem"),
            "--ssl-keyfile",
            str(certs / "server.key"),
            "--enable-supernode-auth",
        ]
    )
    process = subprocess.Popen(
        [_tool("flower-superlink"), *transport, "--port", str(port)],
        env=flower_environment(home),
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port("127.0.0.1", port, timeout, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def serve(
    run_config: dict[str, Any],
    *,
    port: int,
    certs: Any,
    say: Callable[[str], None] = print,
    home: Path | None = None,
    timeout: float = 3600.0,
) -> None:
    """Start a SuperLink (TLS and node authentication with ``certs``, the server's folder from
    ``veil fl certs``; insecure when None), register every enrolled
    node's key, submit veil's ServerApp with ``run_config`` and stream its lines until the run
    ends; a failed run raises with the ServerApp's one line."""
    home = home or Path(tempfile.mkdtemp(prefix="veil-flower-server-"))
    app = home / "app"
    app.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"{key} = {_toml_value(value)}" for key, value in run_config.items())
    (app / "pyproject.toml").write_text(APP.format(config=body))
    transport = (
        "insecure = true\n"
        if certs is None
        else f"root-certificates = {_toml_value(str(certs / 'ca.pem'))}\n"
    )
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "veil"\n\n[superlink.veil]\naddress = "127.0.0.1:{port}"\n'
        + transport
    )
    with (
        (home / "superlink.log").open("w") as log,
        superlink(port, home=home, certs=certs, log=log),
    ):
        if certs is not None:
            registered = _register(certs, home)
            say(
                f"SuperLink listening on port {port} over TLS; {registered} enrolled nodes "
                "registered, any other is refused"
            )
        say(
            f"SuperLink listening on port {port}; waiting for {run_config.get('parties')} "
            "parties and the key holder"
        )
        command = [_tool("flwr"), "run", str(app), "veil", "--stream"]
        process = subprocess.Popen(
            command,
            env=flower_environment(home),
            cwd=app,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        failure, done = None, False
        deadline = time.monotonic() + timeout
        assert process.stdout is not None
        for line in process.stdout:
            text = line.rstrip()
            if text.startswith(FAILED):
                failure = text[len(FAILED) :]
            elif text.startswith(DONE):
                done = True
            if text.startswith(("veil:", "round ")) or "parties" in text:
                say(text.removeprefix("veil: "))
            if time.monotonic() > deadline:
                process.kill()
                raise InputError(f"the federated run took longer than {timeout:.0f} s")
        process.wait()
    if failure:
        raise InputError(failure)
    if not done:
        raise InputError(
            f"the federated run did not finish (flwr run exited with "
            f"{process.returncode}); see {home / 'superlink.log'}"
        )
