"""Combinations of integer-coded columns as one code per row, without pandas: the arithmetic
under ``veil.frequency`` (which re-codes with pandas' hash table) and under ``veil.check`` of a
CSV file counted by Arrow alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: Re-code an int64 key: (codes 0..n-1, n).
Recode = Callable[[np.ndarray], tuple[np.ndarray, int]]


def unique_recode(key: np.ndarray) -> tuple[np.ndarray, int]:
    """``key`` as codes 0..n-1 of its n distinct values (in their sorted order)."""
    uniques, inverse = np.unique(key, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(uniques)


def mixed_radix(
    codes: Sequence[np.ndarray],
    radix: Sequence[int],
    recode: Recode = unique_recode,
    dense: int | None = None,
) -> tuple[np.ndarray, int]:
    """One int64 per row for the combination of its codes (``codes[j]`` of column j, in
    ``0..radix[j]-1``), and the size of the key space; re-coded (``recode``) whenever the space
    would pass 2**62, so it never overflows.

    With ``dense``, the space stays at most ``dense`` where it can: before a column would take
    it past ``dense``, the key is compacted to the combinations present (a ``bincount`` and a
    lookup, no sort); only where the combinations present times a column's values pass
    ``dense`` does the space grow past it."""
    n = len(codes[0]) if len(codes) else 0
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for column, r in zip(codes, radix, strict=True):
        r = max(int(r), 1)
        if dense is not None and space * r > dense and space <= dense:
            present = np.bincount(key, minlength=space) > 0
            # in place, as below (an element is read before it is written: no buffer needed)
            np.take(np.cumsum(present) - 1, key, out=key, mode="clip")
            space = int(present.sum())
        if space * r >= 2**62:  # re-code to keep the radix small
            key, space = recode(key)
        space = max(space, 1)
        # in place: the key is this function's own array (a new one per column would take
        # fresh pages from the system every time, a page fault per 4 KB: 1M rows x 8 columns
        # spent 0.06 s there, against 0.01 s in place)
        np.multiply(key, r, out=key)
        np.add(key, column, out=key, casting="unsafe")
        space *= r
    return key, space


#: The largest key space counted with a bincount; beyond it, the keys are sorted.
MAX_DENSE = 50_000_000
#: A key space this small is counted with a bincount whatever the rows' number ...
_SMALL_SPACE = 1 << 16
#: ... and one of up to this many slots a row (a bincount then costs less than a sort).
_DENSE_PER_ROW = 16


def class_key(
    codes: Sequence[np.ndarray], radix: Sequence[int], recode: Recode = unique_recode
) -> tuple[np.ndarray, int, bool]:
    """``mixed_radix`` of ``codes`` for counting their combinations: the key, its space, and
    whether a ``bincount`` over the space counts it (else sort the keys). A bincount costs the
    space's size whatever the rows, so the key is compacted while its space is near the rows'
    number (each compaction a bincount, a cumulative sum and a lookup of about the rows' size:
    adult's 8 columns, 1M rows, 0.02 s), and counted densely only up to 16 slots a row. Three
    columns of 300 values over 300 rows made a space of 27M: 216 MB and 0.13 s a count, when
    any space up to 50M was counted densely (a 300-row scan, which counts hundreds of
    combinations, took 5.5 s)."""
    rows = len(codes[0]) if len(codes) else 0
    key, space = mixed_radix(codes, radix, recode, dense=min(MAX_DENSE, max(rows, _SMALL_SPACE)))
    return key, space, space <= min(MAX_DENSE, max(_DENSE_PER_ROW * rows, _SMALL_SPACE))
