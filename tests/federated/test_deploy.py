"""Real processes on 127.0.0.1, as Flower deploys them: `veil fl certs` enrols the
federation; `veil fl server` (a SuperLink over TLS with node authentication, and veil's
ServerApp), `veil fl keyholder` and three `veil fl client`s (SuperNodes) run from their own
folders. A SuperNode whose key was not enrolled is refused. The model they train equals the
one the same parties train on Flower's simulation engine, and the server's processes never
hold the private key: their memory is searched for the key's primes while the run goes on
(the key holder's process, where they are, is the search's positive control)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.federated import _data
from veil.federated import keyfiles as keys
from veil.federated._flower import Settings
from veil.federated.deploy import free_port
from veil.federated.simulation import run_simulated

ADULT = Path(__file__).resolve().parents[1] / "data" / "arx_adult" / "adult.csv.gz"
VEIL = [sys.executable, "-m", "veil"]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def _tree(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(tree.get(p, []))
    return out


def _patterns(prime: int) -> list[bytes]:
    """How a process could hold the prime: as text (hex, decimal), as gmpy2's 64-bit limbs,
    as CPython's 30-bit digits (first 32 bytes of each)."""
    digits = []
    value = prime
    while value and len(digits) < 8:
        digits.append((value & (2**30 - 1)).to_bytes(4, "little"))
        value >>= 30
    return [
        format(prime, "x")[:32].encode(),
        str(prime)[:32].encode(),
        prime.to_bytes(128, "little")[:32],
        b"".join(digits),
    ]


def _holds(pid: int, patterns: list[bytes]) -> bool | None:
    """Whether any writable memory of the process holds one of the patterns (None: the
    process could not be read, or is gone)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        memory = open(f"/proc/{pid}/mem", "rb", buffering=0)  # noqa: SIM115
    except OSError:
        return None
    with memory:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                memory.seek(start)
                chunk = memory.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            if chunk and any(p in chunk for p in patterns):
                return True
    return False


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.fixture
def party_files(tmp_path: Path) -> list[Path]:
    adult = pd.read_csv(ADULT, sep=";").sample(4_500, random_state=3).reset_index(drop=True)
    paths = []
    for i in range(3):
        path = tmp_path / f"party{i + 1}.csv"
        adult.iloc[i * 1_500 : (i + 1) * 1_500].to_csv(path, index=False)
        paths.append(path)
    return paths


def test_server_keyholder_and_three_clients_over_tls_with_node_authentication(
    tmp_path: Path, party_files: list[Path]
) -> None:
    port = free_port()
    env = {**os.environ, "FLWR_TELEMETRY_ENABLED": "0", "VEIL_QUIET": "1"}
    model_path, secret, public = tmp_path / "model.json", tmp_path / "kh.key", tmp_path / "kh.pub"
    fed = tmp_path / "federation"
    names = [p.stem for p in party_files]
    enrolled = subprocess.run(
        [*VEIL, "fl", "certs", str(fed), "--parties", ",".join(names)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert enrolled.returncode == 0, enrolled.stderr
    # a node from another enrolment, holding this federation's CA: TLS works, its key is unknown
    rogue = tmp_path / "rogue"
    subprocess.run(
        [*VEIL, "fl", "certs", str(rogue), "--parties", "rogue"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (rogue / "parties" / "rogue" / "ca.pem").write_bytes((fed / "ca.pem").read_bytes())
    started: list[subprocess.Popen[str]] = []
    logs: list[Path] = []

    def start(*args: str) -> subprocess.Popen[str]:
        """The server's lines are read as they come; each node's go to a file, read when
        it ends and shown when the run fails."""
        log = None
        if args[0] != "server":
            logs.append(tmp_path / f"node{len(logs)}.log")
            log = logs[-1].open("w")
        process = subprocess.Popen(
            [*VEIL, "fl", *args],
            env=env,
            text=True,
            stdout=log or subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(process)
        return process

    def nodes_said() -> str:
        return "\n".join(f"{log.name}: {log.read_text()}" for log in logs)

    try:
        server = start(
            "server",
            "--target",
            "salary-class",
            "--parties",
            "3",
            "--rounds",
            "2",
            "--port",
            str(port),
            "--output",
            str(model_path),
            "--timeout",
            "120",
            "--certs",
            str(fed / "server"),
        )
        lines: list[str] = []
        assert server.stdout is not None
        for line in server.stdout:  # nodes join once their keys are registered
            lines.append(line.rstrip())
            if "enrolled nodes registered" in line:
                break
        assert "over TLS; 4 enrolled nodes registered" in "\n".join(lines), lines
        holder = start(
            "keyholder",
            "--server",
            f"127.0.0.1:{port}",
            "--secret",
            str(secret),
            "--public-key",
            str(public),
            "--certs",
            str(fed / "keyholder"),
        )
        deadline = time.monotonic() + 60
        while not public.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert public.exists(), "the key holder wrote no public key"
        for path in party_files:
            start(
                "client",
                str(path),
                "--server",
                f"127.0.0.1:{port}",
                "--public-key",
                str(public),
                "--certs",
                str(fed / "parties" / path.stem),
            )
        intruder = start(
            "client",
            str(party_files[0]),
            "--server",
            f"127.0.0.1:{port}",
            "--public-key",
            str(public),
            "--certs",
            str(rogue / "parties" / "rogue"),
        )
        private = keys.read_secret(secret).private  # type: ignore[attr-defined]
        patterns = _patterns(private.p) + _patterns(private.q)

        searched = False
        for line in server.stdout:
            lines.append(line.rstrip())
            if line.startswith("round 1:") and not searched:
                # the ServerApp is alive and has added and had decrypted one round
                server_side = _tree(server.pid)
                found = {pid: _holds(pid, patterns) for pid in server_side}
                commands = {pid: _command(pid) for pid in server_side}
                # veil's server, the SuperLink and the ServerApp process were all read
                read = [commands[pid] for pid, hit in found.items() if hit is not None]
                assert any("flower-superlink" in c for c in read), commands
                assert any("flwr-serverapp" in c for c in read), commands
                assert not any(found.values()), commands
                assert _holds(holder.pid, patterns)  # the search finds them where they are
                searched = True
        assert server.wait(timeout=300) == 0, "\n".join(lines) + "\n" + nodes_said()
        assert searched, "\n".join(lines)
        # the node whose key was not enrolled was refused by the SuperLink, and says so
        assert intruder.wait(timeout=60) == 2
        refused = logs[-1].read_text()
        assert "the Flower SuperNode exited with code 1: " in refused, refused
        assert "Failed to activate SuperNode" in refused, refused  # Flower's own words
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)

    text = "\n".join(lines)
    assert "3 parties" in text
    assert re.search(r"round 2: accuracy 0\.[78]\d", text), text
    deployed = keys.read_model(model_path)
    assert deployed["encrypt"] == "paillier"
    # the same parties (same files, names, keys, splits) on the simulation engine: the same model
    configs: list[dict] = [
        {
            "role": "party",
            "party": p.stem,
            "data": str(p.resolve()),
            "test-fraction": 0.2,
            "seed": 0,
            "public-key": str(public),
            "signing-key": str(fed / "parties" / p.stem / "signing.key"),
        }
        for p in party_files
    ]
    configs.append(
        {
            "role": "keyholder",
            "secret": str(secret),
            "roster": str(fed / "keyholder" / "roster.json"),
        }
    )
    local = run_simulated(configs, Settings(target="salary-class", rounds=2))
    assert np.abs(np.array(deployed["weights"]) - local.weights).max() < 1e-9
    assert _data.Spec.from_dict(deployed["spec"]).width == local.spec.width


def test_deployed_commands_refuse_weak_keys_and_silent_insecurity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No TLS only when asked, with a warning; no key below 2048 bits."""
    from veil.cli import main

    assert (
        main(
            [
                "fl",
                "keyholder",
                "--server",
                "127.0.0.1:1",
                "--secret",
                str(tmp_path / "k"),
                "--key-bits",
                "1024",
                "--insecure",
                "--roster",
                str(tmp_path / "r.json"),
            ]
        )
        == 2
    )
    assert "--key-bits must be one of (2048, 3072)" in capsys.readouterr().err
    assert not (tmp_path / "k").exists()
    assert main(["fl", "server", "--target", "y"]) == 2
    assert "give --certs FOLDER" in capsys.readouterr().err
    assert (
        main(
            ["fl", "server", "--target", "y", "--parties", "2", "--min-parties", "2", "--insecure"]
        )
        == 2
    )
    assert "each reads the other's update" in capsys.readouterr().err
    table = tmp_path / "party.csv"
    table.write_text("age,y\n30,a\n40,b\n")
    assert (
        main(
            [
                "fl",
                "client",
                str(table),
                "--server",
                "127.0.0.1:1",
                "--certs",
                str(tmp_path / "nowhere"),
            ]
        )
        == 2
    )
    assert "ca.pem is missing" in capsys.readouterr().err
