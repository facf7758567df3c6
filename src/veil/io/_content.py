"""Content hashes: a table's fingerprint and the canonical cell hash certificates pin."""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def fingerprint(frame: pd.DataFrame, *, sample: int | None = None) -> str:
    """A content hash of a table (values, column names, order) that names it without revealing
    it: SHA-256 over every row, full length. With ``sample``, only that many evenly spaced rows
    and the row count are hashed (milliseconds for 10M rows): a cheap name for a budget
    ledger's dataset, never a certificate's."""
    digest = hashlib.sha256()
    if sample is not None and len(frame) > sample:
        picked = frame.iloc[np.linspace(0, len(frame) - 1, sample).astype(np.int64)]
        digest.update(pd.util.hash_pandas_object(picked, index=False).to_numpy().tobytes())
        digest.update(f"{len(frame)}\x1f".encode())
        digest.update("\x1f".join(map(str, frame.columns)).encode())
        return digest.hexdigest()[:16]
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    return digest.hexdigest() if sample is None else digest.hexdigest()[:16]


def content_sha256(frame: pd.DataFrame) -> str:
    """SHA-256 of every cell of ``frame`` (one pass, full digest), in a canonical text form
    that survives a CSV or Parquet round trip through ``write`` and ``read``: numbers as their
    shortest decimal (12 and 12.0 alike), dates ISO, empty text as missing. A certificate pins
    its release with it, so ``verify`` notices any changed, added or removed cell."""
    digest = hashlib.sha256(f"veil-content-v1\x1f{len(frame)}\x1f{frame.shape[1]}".encode())
    for name in frame.columns:
        digest.update(f"\x1d{len(str(name))}:{name}".encode())
        cells = _canonical_cells(frame[name])
        # offsets (lengths) + bytes + the missing mask: unambiguous, and no Python loop
        missing = cells.is_null().to_numpy(zero_copy_only=False)
        text = pc.fill_null(cells, "")
        digest.update(np.packbits(missing).tobytes())
        for chunk in text.chunks if isinstance(text, pa.ChunkedArray) else [text]:
            chunk = chunk.cast(pa.large_string())
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64)
            offsets = offsets[chunk.offset : chunk.offset + len(chunk) + 1]
            digest.update(np.diff(offsets).tobytes())
            data = chunk.buffers()[2]
            if data is not None:
                digest.update(memoryview(data)[offsets[0] : offsets[-1]])
    return digest.hexdigest()


def _canonical_cells(series: pd.Series) -> pa.Array:
    """The column as Arrow text, one canonical string (or null) per cell."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    missing = series.isna().to_numpy()
    if pd.api.types.is_bool_dtype(series):
        values = np.where(series.fillna(False).to_numpy(dtype=bool), "True", "False")
    elif pd.api.types.is_integer_dtype(series):  # Arrow's decimal text is str(int)'s
        ints = series.fillna(0).to_numpy(dtype=np.int64)
        return pa.array(ints, mask=missing).cast(pa.string())
    elif pd.api.types.is_float_dtype(series):
        return _float_cells(series.to_numpy(dtype=np.float64, na_value=np.nan), missing)
    elif pd.api.types.is_datetime64_any_dtype(series):
        values = _timestamps(series)
    else:
        try:  # Arrow-backed text passes without a copy
            arrow = pa.array(series, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: canonical cell by cell
            items = series.tolist()
            arrow = pa.array([None if m else _cell(v) for v, m in zip(items, missing, strict=True)],
                             type=pa.string())  # fmt: skip
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        # CSV cannot tell an empty text from a missing one
        return pc.if_else(pc.equal(arrow, ""), pa.scalar(None, pa.string()), arrow)
    return pa.array(np.asarray(values, dtype=object), type=pa.string(), mask=missing)


def _float_cells(values: np.ndarray, missing: np.ndarray) -> pa.Array:
    """``_numbers`` as Arrow text: whole numbers cast in Arrow, the rest by ``repr``."""
    integral = whole_numbers(values)
    whole = pa.array(np.where(integral, values, 0).astype(np.int64)).cast(pa.string())
    if integral.all():
        return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), whole)
    rest = np.full(len(values), None, dtype=object)
    others = ~integral & ~missing
    rest[others] = [repr(float(v)) for v in values[others]]
    cells = pc.if_else(pa.array(integral), whole, pa.array(rest, type=pa.string()))
    return pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), cells)


def whole_numbers(values: np.ndarray) -> np.ndarray:
    """Where a float holds a whole number an int64 can hold (written as that integer)."""
    finite = np.isfinite(values)
    return finite & (values == np.floor(np.where(finite, values, 0))) & (np.abs(values) < 2**63)


def _numbers(values: np.ndarray) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    integral = whole_numbers(values)
    out[integral] = values[integral].astype(np.int64).astype(str)
    rest = ~integral
    out[rest] = [repr(float(v)) for v in values[rest]]
    return out


def _timestamps(series: pd.Series) -> np.ndarray:
    stamps = series.dt.tz_localize(None) if series.dt.tz is not None else series
    midnight = (stamps == stamps.dt.normalize()).to_numpy() & (series.dt.tz is None)
    out = series.astype(str).to_numpy(dtype=object)
    out[midnight] = stamps[midnight].dt.strftime("%Y-%m-%d").to_numpy(dtype=object)
    return out


def _cell(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return str(_numbers(np.array([float(value)]))[0])
    if isinstance(value, pd.Timestamp | np.datetime64) or hasattr(value, "isoformat"):
        with contextlib.suppress(ValueError, TypeError):
            return str(_timestamps(pd.Series(pd.to_datetime([value])))[0])
    return str(value)
