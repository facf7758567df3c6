"""Keyed pseudonyms at the speed the hardware allows: FF3-1 format-preserving tokens and
HMAC-SHA256 hex tokens over whole columns, with their floors measured in the same run.

    make bench-pseudonyms     (or: python bench/bench_pseudonyms.py [--rows 1000000])

For each column (national ID as an integer, KRA PIN, phone) and format, veil's
``Pseudonymize`` over the whole column (distinct values found, tokens made, the column rebuilt:
what a release spends), in wall and CPU seconds and values per CPU second, beside:

- FF3-1: the ``ff3`` package value by value (the reference veil's tokens equal), and AES-128
  ECB over 8 blocks a value in one call (the hardware floor: FF3-1 is eight AES rounds);
- hex: ``hmac.digest`` value by value (the standard library's one-shot HMAC, the usual way),
  and SHA-256 over the same bytes in one call (the floor: two hash blocks a value).

The targets (issue: throughput at the limit) are >= 300,000 values per CPU second for FF3-1
and >= 1,000,000 for hex.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

KEY_ENV = "VEIL_BENCH_KEY"


def columns(rows: int) -> dict[str, pd.Series]:
    rng = np.random.default_rng(0)
    return {
        "national ID (integer)": pd.Series(rng.integers(10_000_000, 40_000_000, rows)),
        "KRA PIN": pd.Series([f"A{v:09d}Z" for v in rng.integers(0, 10**9, rows)]),
        "phone": pd.Series([f"07{v:08d}" for v in rng.integers(0, 10**8, rows)]),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def line(what: str, values: int, wall: float, cpu: float) -> None:
    print(f"  {what:<46}{wall:>8.2f}s{cpu:>8.2f}s{values / cpu:>14,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reference-rows", type=int, default=20_000)
    args = parser.parse_args()
    os.environ[KEY_ENV] = "bench-" + "k" * 40
    key = os.environ[KEY_ENV].encode()
    print(f"{args.rows:,} values a column; {os.cpu_count()} cores")
    print(f"  {'':<46}{'wall':>9}{'CPU':>9}{'values/CPU s':>14}")
    for name, series in columns(args.rows).items():
        measure(name, series, key, args.reference_rows)


def measure(name: str, series: pd.Series, key: bytes, reference_rows: int) -> None:
    """One column: veil's two formats, and the peer and the floor of each."""
    from Crypto.Cipher import AES
    from ff3 import FF3Cipher

    from veil.transforms import Pseudonymize

    frame = pd.DataFrame({"c": series})
    print(f"{name} ({series.nunique():,} distinct)")
    for fmt in ("preserve", "hex"):
        step = Pseudonymize(["c"], key_env=KEY_ENV, format=fmt).fit(frame)
        line(f"veil {fmt}", len(frame), *timed(lambda: step.transform(frame.copy())))  # noqa: B023
    texts = series.astype(str).tolist()
    few = len(texts[:reference_rows])
    bits = 40  # the KRA PIN's 26 * 10^9 * 26 values; the others are smaller
    cipher = FF3Cipher(hashlib.sha256(key).hexdigest(), "00" * 7, radix=2)
    reference = timed(lambda: [cipher.encrypt(format(i, f"0{bits}b")) for i in range(few)])
    line(f"ff3 package, value by value ({few:,})", few, *reference)
    aes = AES.new(hashlib.sha256(key).digest(), AES.MODE_ECB)
    blocks = bytes(len(texts) * 8 * 16)
    line(
        "floor: AES-ECB, 8 blocks a value, one call",
        len(texts),
        *timed(lambda: aes.encrypt(blocks)),
    )
    messages = [t.encode() for t in texts]
    one_by_one = timed(lambda: [hmac.digest(key, m, "sha256") for m in messages])
    line("hmac.digest, value by value", len(texts), *one_by_one)
    padded = b"".join(m.ljust(64, b"\0") for m in messages) * 2
    line(
        "floor: SHA-256, 2 blocks a value, one call",
        len(texts),
        *timed(lambda: hashlib.sha256(padded).digest()),
    )


if __name__ == "__main__":
    main()
