"""How the ``veil`` command's own process allocates memory (never a library user's process).

A release of 10M rows allocates and frees arrays of tens to hundreds of megabytes again and
again (a column's codes, its texts, a permutation). By default Arrow allocates through
mimalloc, which gives freed pages back to the system at once, and the C library serves every
block over 32 MB by a fresh mapping, unmapped when freed: each new array's pages then come back
from the kernel, zeroed one by one. On adult grown to 10M rows that zeroing was 13 of the 29
seconds of ``veil anonymize --in-memory``. So the command's process, and only it:

- lets Arrow allocate through the C library (``ARROW_DEFAULT_MEMORY_POOL=system``);
- has glibc's malloc keep freed memory for the next array (no mapping per large block, no
  trimming of the heap): the process keeps its peak memory until it exits, which a command
  that exits when its job is done can afford;
- has every thread allocate from one heap (one malloc arena): with an arena per thread, the
  memory one thread freed (a batch it worked on) stayed in its arena for it alone, and each
  of a stream's threads kept its own peak. Streaming adult grown to 10M rows, two batches at
  a time, peaked at 1.79 GB with an arena per thread and 1.12 GB with one, in the same time;
  the release in memory took 12.6 s instead of 15.0 s, at 1M rows 1.79 s instead of 1.97 s
  (medians, alternating).

A command that reads one table, counts it and exits (``veil check``) allocates nothing again
and again: it keeps Arrow's own pool, whose pages come from the kernel in fewer faults (16,000
against 50,000 minor faults for a CSV of 1M rows x 8 columns: 0.380 s against 0.404 s,
medians of 12 runs alternately; streamed in batches, 10M rows peak at 1.03-1.11 GB instead of
1.92-2.03 GB in the same time), and only glibc's setting.

``VEIL_MALLOC=default`` keeps both as they are (e.g. to compare). Elsewhere than glibc (macOS,
musl) only Arrow's pool is set.

The process also has XLA compile with LLVM's lowest optimization level
(``--xla_backend_optimization_level=0`` in ``XLA_FLAGS``, unless they set a level already).
MST and AIM (``veil synth --method mst|aim``) are bound by XLA compiling mbi's many small
functions, not by running them: on adult at epsilon 1 MST's whole process took 15.6-15.9 s
instead of 19.6-20.0 s at XLA's default level 3, AIM's 67-70 s instead of 69-101 s (two runs
each; its number of rounds varies). The compiled code computes the same operations; DP
synthesis draws its noise afresh each run, so no release is reproducible row for row.

Before MST or AIM starts JAX (``xla_for_mbi``), the command's process also has XLA emit its
CPU code through its older LLVM IR emitters (``--xla_cpu_use_fusion_emitters=false``), where
jaxlib is a version known to have that flag (XLA aborts the process on a flag it does not
know: another version keeps XLA's default). On adult at epsilon 1, one AIM round fitted with
its 16th round's model took 3.1 s and 0.33 GB above the process's memory, against 5.3 s and
0.60 GB with XLA's new fusion emitters (mirror descent's 50 steps, compiled and run); MST's
whole process 9.1 s and 0.70 GB with both flags, against 16.3 s and 1.04 GB with XLA's
defaults (the same run of ``make bench-synth``).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8

#: glibc's M_TRIM_THRESHOLD value that turns trimming off (freed memory stays in the heap).
_NEVER = -1


#: Whether this process runs one command (``tune_for_one_job``): only then ``xla_for_mbi``
#: sets XLA's flags.
_ONE_JOB = False


#: Seconds the command's process runs without cyclic garbage collection (``hold_collection``).
GC_HELD_SECONDS = 1.0


def hold_collection() -> threading.Timer:
    """Cyclic garbage collection off for the command's first ``GC_HELD_SECONDS``; then what
    exists is frozen (never walked again) and collection resumes. The imports make ~150,000
    objects and no garbage, and Python's collector walked them again and again as they came:
    105 collections and 22 ms of `veil check`'s 1M rows, 218 and 48 ms of `veil anonymize` of
    six rows, 342 and 103 ms of `veil report` (the collections walk each module's
    dictionary). A second of a job makes little cyclic garbage: a stream of 10M rows made
    none (the same peak memory with no collection at all). The timer, cancelled when the
    command ends, is returned."""
    import gc

    gc.disable()
    resume = threading.Timer(GC_HELD_SECONDS, _resume_collection)
    resume.daemon = True
    resume.start()
    return resume


def _resume_collection() -> None:
    """Cyclic garbage collection from now on, over what is made from now on."""
    import gc

    gc.freeze()
    gc.enable()


def tune_for_one_job(*, arrow_pool: bool = False) -> bool:
    """Set the process's allocation as the module says (with ``arrow_pool``, Arrow keeps its
    own pool: a command that reads a table once); True when glibc took the setting."""
    global _ONE_JOB
    _ONE_JOB = True
    _quick_xla()
    if os.environ.get("VEIL_MALLOC", "").strip().lower() == "default":
        return False
    if not arrow_pool:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if "pyarrow" in sys.modules and os.environ.get("ARROW_DEFAULT_MEMORY_POOL") == "system":
        import pyarrow as pa  # already loaded: its pool is set directly

        pa.set_memory_pool(pa.system_memory_pool())
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _NEVER), (_M_ARENA_MAX, 1))
    return all(mallopt(param, value) == 1 for param, value in settings)


#: XLA's flag for its LLVM optimization level (0: the quickest compilation)
_XLA_LEVEL = "--xla_backend_optimization_level"


def _quick_xla() -> None:
    """XLA compiles with LLVM's lowest optimization level, unless ``XLA_FLAGS`` set a level
    (read when JAX starts its backend: a process that started it already keeps its own)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _XLA_LEVEL not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {_XLA_LEVEL}=0".strip()


#: XLA's flag choosing its CPU emitters
_XLA_EMITTERS = "--xla_cpu_use_fusion_emitters"
#: The jaxlib versions (major, minor) known to have it: from the first, up to the last.
_EMITTER_VERSIONS = ((0, 10), (0, 10))


def xla_for_mbi() -> None:
    """In the command's process, before JAX starts: XLA emits its CPU code through its LLVM IR
    emitters (the module says why), unless ``XLA_FLAGS`` choose already or jaxlib is a version
    not known to have the flag (then nothing is set). A process that started JAX's backend
    already keeps its own flags; a library user's process is never changed."""
    flags = os.environ.get("XLA_FLAGS", "")
    if not _ONE_JOB or _XLA_EMITTERS in flags:
        return
    try:
        from jaxlib.version import __version_info__  # what XLA_FLAGS is parsed by
    except ImportError:  # no jaxlib: nothing to tune
        return
    first, last = _EMITTER_VERSIONS
    if first <= tuple(__version_info__[:2]) <= last:
        os.environ["XLA_FLAGS"] = f"{flags} {_XLA_EMITTERS}=false".strip()
