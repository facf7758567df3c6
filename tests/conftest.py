"""Small seeded frames shared by the tests."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.demo import DemoResult, run_demo

#: Run in pycanon's own environment, never imported here (doctest collection imports modules).
collect_ignore = [
    "privacy/pycanon_runner.py", "federated/phe_runner.py", "evaluate/anonymeter_runner.py"
]  # fmt: skip

TEST_KEY = "test-key-0123456789abcdef-not-a-real-secret"
#: What the CLI prints per finished step when stderr is not a terminal (a test's never is).
PROGRESS_LINE = re.compile(r"^veil: .*: done in \d+\.\d s( \(.*\))?$")


def error_lines(stderr: str) -> list[str]:
    """stderr without the progress lines: the error (one line) and any warnings."""
    return [line for line in stderr.strip().splitlines() if not PROGRESS_LINE.match(line)]


#: Policy columns that release the ``people`` fixture's direct identifiers as they are, on
#: purpose: for tests that compare a policy's release with its transforms run alone.
KEEP_PEOPLE_IDS = {
    name: {"role": "identifier", "keep": True, "reason": "test: compare with the transform alone"}
    for name in ("name", "phone", "kra_pin")
}


@pytest.fixture(autouse=True)
def _user_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default ledger lives in the user's data directory: never the real one in tests."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    monkeypatch.delenv("VEIL_LEDGER", raising=False)


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("VEIL_KEY", TEST_KEY)
    return TEST_KEY


@pytest.fixture
def people() -> pd.DataFrame:
    """60 people with identifiers, quasi-identifiers, a sensitive column, gaps and an odd index."""
    rng = np.random.default_rng(7)
    n = 60
    frame = pd.DataFrame(
        {
            "name": [f"Person {i}" for i in range(n)],
            "gender": rng.choice(["Female", "Male"], n),
            "age": rng.integers(18, 90, n),
            "county": rng.choice(["Nairobi", "Mombasa", "Kisumu", "Nakuru"], n),
            "phone": [f"07{rng.integers(10_000_000, 99_999_999)}" for _ in range(n)],
            "kra_pin": [f"A{rng.integers(100_000_000, 999_999_999)}Z" for _ in range(n)],
            "salary": rng.lognormal(11, 0.5, n).round(0),
            "score": rng.normal(50, 10, n),
            "joined": pd.to_datetime("2010-01-01") + pd.to_timedelta(rng.integers(0, 4000, n), "D"),
            "diagnosis": rng.choice(["Chronic", "Acute", "Congenital"], n),
        }
    )
    frame.loc[[3, 17], "score"] = np.nan
    frame.loc[5, "county"] = None
    # a non-default, non-monotonic index: transforms must keep it
    frame.index = pd.Index(rng.permutation(np.arange(1000, 1000 + n)), name="row")
    return frame


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    """The demo, run once for the tests that look at its files and report."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VEIL_KEY", TEST_KEY)  # a fixed key: pseudonyms, hence the release, repeat
        return run_demo(tmp_path_factory.mktemp("demo"))


def _postgres_bin(name: str) -> str:
    """A PostgreSQL server program: on the PATH, else Debian's versioned folder."""
    import glob
    import shutil

    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise RuntimeError(f"PostgreSQL's {name} is not installed: `make test` needs it")
    return found


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server of the tests' own, in a temporary folder on a free port
    (pg8000 driver). PostgreSQL refuses to run as root: as root, it runs as nobody."""
    with start_postgres() as url:
        yield url


@contextlib.contextmanager
def start_postgres() -> Iterator[str]:
    """A PostgreSQL server in a temporary folder on a free port, stopped on the way out (the
    tests' fixture, and bench/bench_rights.py)."""
    import shutil
    import socket
    import subprocess
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="veil-pg-"))
    base.chmod(0o755)
    as_user: list[str] = []
    if os.geteuid() == 0:
        os.chown(base, 65534, 65534)
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    data = base / "data"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    subprocess.run(
        [*as_user, _postgres_bin("initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
         "--no-locale", "-E", "UTF8", "--no-sync"],
        check=True, capture_output=True, cwd=base,
    )  # fmt: skip
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = _postgres_bin("pg_ctl")
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w",
         "start"],
        check=True, capture_output=True, cwd=base,
    )  # fmt: skip
    try:
        yield f"postgresql+pg8000://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, cwd=base)  # fmt: skip
        shutil.rmtree(base, ignore_errors=True)
