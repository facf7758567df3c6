"""The veil command's process keeps freed memory for its next arrays (veil.memory): Arrow
allocates through the C library and glibc neither maps each large block afresh nor trims its
heap; VEIL_MALLOC=default leaves both alone; a library user's process is never changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = (
    "import sys; {before}from veil.memory import tune_for_one_job; tuned = tune_for_one_job(); "
    "import pyarrow as pa; print(tuned, pa.default_memory_pool().backend_name)"
)


def _untuned() -> dict[str, str]:
    """This process's environment without the allocation settings a user may have made."""
    return {
        k: v for k, v in os.environ.items() if k not in {"ARROW_DEFAULT_MEMORY_POOL", "VEIL_MALLOC"}
    }


def probe(before: str = "", **env: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before)],
        capture_output=True,
        text=True,
        check=True,
        env={**_untuned(), **env},
    )
    return out.stdout.split()


def test_the_command_s_process_is_tuned() -> None:
    glibc = str(sys.platform.startswith("linux"))  # elsewhere only Arrow's pool is set
    assert probe() == [glibc, "system"]
    # pyarrow already loaded when the command starts: its pool is set all the same
    assert probe(before="import pyarrow; ") == [glibc, "system"]


def _command_pool(tmp_path: Path, *argv: str) -> str:
    """Arrow's pool in the process of ``veil ARGV`` as the command runs it."""
    program = (
        "import sys; from veil.cli import run; "
        f"sys.argv = ['veil', *{list(argv)!r}]; code = run(); "
        "import pyarrow as pa; print(code, pa.default_memory_pool().backend_name)"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env=_untuned(),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def test_veil_check_keeps_arrow_s_own_pool(tmp_path: Path) -> None:
    """``veil check`` reads a table once and exits: Arrow's own pool takes its pages in fewer
    faults. Every other command allocates through the C library."""
    (tmp_path / "t.csv").write_text("age,county\n34,Nairobi\n34,Nairobi\n")
    assert _command_pool(tmp_path, "check", "t.csv", "-q", "age,county", "-k", "2") != "system"
    assert _command_pool(tmp_path, "hierarchy", "t.csv", "age") == "system"


def test_veil_malloc_default_leaves_the_process_alone() -> None:
    tuned, pool = probe(VEIL_MALLOC="default")
    assert tuned == "False"
    assert pool != "system"  # Arrow's own default (mimalloc or jemalloc)


def test_importing_veil_changes_nothing() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import veil, veil.cli, pyarrow as pa; print(pa.default_memory_pool().backend_name)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"},
    )
    assert out.stdout.strip() != "system"


def test_the_workers_of_the_cluster_veil_starts_are_tuned() -> None:
    """A LocalCluster's workers are processes of one job too: Arrow allocates through the C
    library there (they held 14 of the 37 CPU seconds of a 10M-row release in the kernel
    otherwise), and they do not sample their stacks for a dashboard nobody sees (a worker
    sampled every 10 ms, busy or idle)."""
    import time

    from veil.io import cluster

    def busy() -> int:  # a task long enough for the sampler to see, were it on
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            pass
        return 1

    with cluster(workers=1) as client:
        pools = client.run(lambda: __import__("pyarrow").default_memory_pool().backend_name)
        again = client.run(__import__("veil.memory", fromlist=["x"]).tune_for_one_job)
        assert client.submit(busy, pure=False).result() == 1
        samples = client.run(lambda dask_worker: dask_worker.profile_recent["count"])
    assert list(pools.values()) == ["system"]
    assert list(again.values()) == [sys.platform.startswith("linux")]
    assert list(samples.values()) == [0]


def test_xla_compiles_quickly_in_the_command_s_process_unless_told_otherwise() -> None:
    """The command's process has XLA compile at LLVM's lowest level (MST and AIM are bound by
    compiling): JAX accepts the flag (an unknown one aborts its backend) and computes as
    before; a level the user set in XLA_FLAGS is kept, with their other flags."""
    program = (
        "import os; from veil.memory import tune_for_one_job; tune_for_one_job(); "
        "import jax, jax.numpy as jnp; "
        "print(os.environ['XLA_FLAGS'], int(jax.jit(lambda x: (x * 2).sum())(jnp.arange(4))))"
    )
    clean = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}

    def flags(**env: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, env={**clean, **env}
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert flags() == "--xla_backend_optimization_level=0 12"
    mine = "--xla_cpu_enable_fast_math=false --xla_backend_optimization_level=2"
    assert flags(XLA_FLAGS=mine) == f"{mine} 12"
    other = "--xla_cpu_enable_fast_math=false"
    assert flags(XLA_FLAGS=other) == f"{other} --xla_backend_optimization_level=0 12"


def _emitters(program: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env={**clean, **env}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_mbi_s_functions_are_emitted_by_xla_s_llvm_emitters_in_the_command_s_process() -> None:
    """Before MST or AIM starts JAX, the command's process has XLA emit its CPU code through
    its LLVM IR emitters, where jaxlib is a version known to have the flag: JAX accepts it (an
    unknown flag aborts the process) and computes as before. Another jaxlib version, a user's
    own choice, or a library user's process: nothing is set."""
    from jaxlib.version import __version_info__

    from veil.memory import _EMITTER_VERSIONS

    run = (
        "import os, veil.memory as m; {setup}m.xla_for_mbi(); "
        "import jax, jax.numpy as jnp; flags = os.environ.get('XLA_FLAGS', ''); "
        "print(flags, int(jax.jit(lambda x: (x * 2).sum())(jnp.arange(4))))"
    )
    tuned = "m.tune_for_one_job(); "
    known = _EMITTER_VERSIONS[0] <= tuple(__version_info__[:2]) <= _EMITTER_VERSIONS[1]
    level = "--xla_backend_optimization_level=0"
    set_ = f"{level} --xla_cpu_use_fusion_emitters=false" if known else level
    assert _emitters(run.format(setup=tuned)) == f"{set_} 12"
    assert known  # the jaxlib `make test` installs is one the flag was measured on
    # a version not known to have the flag: nothing set, nothing aborted
    elsewhere = tuned + "m._EMITTER_VERSIONS = ((9, 0), (9, 9)); "
    assert _emitters(run.format(setup=elsewhere)) == f"{level} 12"
    mine = "--xla_cpu_use_fusion_emitters=true"
    assert _emitters(run.format(setup=tuned), XLA_FLAGS=mine) == f"{mine} {level} 12"
    assert _emitters(run.format(setup="")) == "12"  # a library user's process


ARENAS = """
import threading, numpy as np
from veil.memory import tune_for_one_job
tune_for_one_job()

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

freed, done = threading.Event(), threading.Event()

def batch():  # 256 MB in arrays of 4 MB (a column's codes), every page touched
    return [np.ones(2**19) for _ in range(64)]

def first():  # a batch worked on and dropped; the thread lives on (a worker between batches)
    arrays = batch()
    del arrays
    freed.set()
    done.wait()

worker = threading.Thread(target=first)
worker.start()
freed.wait()
before = resident()
second = threading.Thread(target=batch)  # the next batch, on another thread
second.start()
second.join()
done.set()
worker.join()
print(round(resident() - before))
"""


def test_a_thread_reuses_what_another_thread_freed() -> None:
    """One malloc arena for every thread: the 256 MB one thread freed serve the next thread's
    arrays, where an arena of its own kept them for the first thread alone (the stream's peak
    grew by a batch per thread)."""
    if not sys.platform.startswith("linux"):
        return
    done = subprocess.run(
        [sys.executable, "-c", ARENAS], capture_output=True, text=True, env=_untuned()
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 64  # MB more resident: the freed block reused
