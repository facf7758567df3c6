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
  that exits when its job is done can afford.

``VEIL_MALLOC=default`` keeps both as they are (e.g. to compare). Elsewhere than glibc (macOS,
musl) only Arrow's pool is set.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4

#: glibc's M_TRIM_THRESHOLD value that turns trimming off (freed memory stays in the heap).
_NEVER = -1


def tune_for_one_job() -> bool:
    """Set the process's allocation as the module says; True when glibc took the setting."""
    if os.environ.get("VEIL_MALLOC", "").strip().lower() == "default":
        return False
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if "pyarrow" in sys.modules:  # already loaded: its pool is set directly
        import pyarrow as pa

        if os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system":
            pa.set_memory_pool(pa.system_memory_pool())
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, _NEVER) == 1
