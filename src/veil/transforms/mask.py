"""Masking: hide characters of a value, optionally keeping its first or last few."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.exceptions import ParameterError
from veil.io._content import arrow_text
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    apply_to_uniques,
    rebuild,
    value_text,
)


class Mask(ColumnTransform):
    """Replace characters with ``char``, keeping ``keep_first``/``keep_last`` characters.

    ``Mask(columns="phone", keep_last=3)`` turns ``0712345678`` into ``*******678``.

    >>> import pandas as pd
    >>> from veil.transforms import Mask
    >>> Mask(columns="phone", keep_last=3).fit_transform(
    ...     pd.DataFrame({"phone": ["0712345678"]}))["phone"].tolist()
    ['*******678']

    Characters in ``preserve`` (e.g. ``"@.-"``) stay visible so the shape survives;
    ``length`` fixes the output length so value lengths do not leak. Missing values stay missing.

    A value no longer than ``keep_first + keep_last`` is masked whole: keeping its ends would
    show all of it. ``describe`` counts the values that were changed.
    """

    _needs_every_row = None
    _tallies = ("changed_", "present_")

    treats_identifiers = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "keep_first": [Interval(Integral, 0, None, closed="left")],
        "keep_last": [Interval(Integral, 0, None, closed="left")],
        "char": [str],
        "preserve": [str],
        "length": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        keep_first: int = 0,
        keep_last: int = 0,
        char: str = "*",
        preserve: str = "",
        length: int | None = None,
    ) -> None:
        self.columns = columns
        self.keep_first = keep_first
        self.keep_last = keep_last
        self.char = char
        self.preserve = preserve
        self.length = length

    def _validate(self) -> None:
        if len(self.char) != 1:
            raise ParameterError(f"char must be a single character, got {self.char!r}")

    def _mask_value(self, value: str) -> str:
        n = len(value)
        short = n <= self.keep_first + self.keep_last  # its ends are all of it
        head = 0 if short else self.keep_first
        tail = 0 if short else self.keep_last
        middle = value[head : n - tail]
        if self.preserve:
            hidden = "".join(c if c in self.preserve else self.char for c in middle)
        else:
            hidden = self.char * len(middle)
        masked = value[:head] + hidden + value[n - tail :]
        if self.length is not None:
            masked = (masked + self.char * self.length)[: self.length]
        return masked

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        self.changed_, self.present_ = 0, 0
        for name in self.columns_:
            series = frame[name]
            if self.preserve or self.length is not None or not _is_text(series):
                codes, texts = apply_to_uniques(series, value_text)  # once per distinct value
                hidden = np.array([self._mask_value(t) for t in texts], dtype=object)
                masked = rebuild(series, codes, hidden)
                same = np.append(hidden == texts, True)[codes]  # code -1 (missing): not counted
            else:
                masked, same = self._mask_vectorized(series)
            present = series.notna().to_numpy()
            self.present_ += int(present.sum())
            self.changed_ += int((present & ~same).sum())
            frame[name] = masked
        return frame

    def values_left_unchanged(self) -> int | None:
        """Present values the mask left as they were (made only of preserved characters)."""
        return int(self.present_ - self.changed_)

    def describe(self) -> str:
        """The columns masked and how many values changed."""
        counted = ""
        if hasattr(self, "changed_"):
            counted = f"; {self.changed_:,} of {self.present_:,} values changed"
        return f"Mask({', '.join(self.columns_)}{counted})"

    def _mask_vectorized(self, series: pd.Series) -> tuple[pd.Series, np.ndarray]:
        """The common case in Arrow kernels: same result as ``_mask_value``, 20x faster; and
        per row whether the mask is the value itself (missing values count as unchanged)."""
        held = arrow_text(series)  # Arrow's own strings, read where they are
        text = (
            pa.array(series.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
            if held is None
            else held.cast(pa.string()).combine_chunks()  # the array the objects made
        )
        n = pc.utf8_length(text)
        kept = self.keep_first + self.keep_last
        hidden = pc.binary_repeat(self.char, pc.max_element_wise(pc.subtract(n, kept), 0))
        head = pc.utf8_slice_codeunits(text, 0, self.keep_first)
        tail = pc.utf8_slice_codeunits(text, -self.keep_last) if self.keep_last else ""
        masked = pc.binary_join_element_wise(head, hidden, tail, "")
        # a value no longer than what is kept is masked whole (its ends are all of it)
        result = pc.if_else(pc.less_equal(n, kept), pc.binary_repeat(self.char, n), masked)
        same = pc.fill_null(pc.equal(result, text), True).to_numpy(zero_copy_only=False)
        return result.to_pandas().set_axis(series.index).rename(series.name), same


def _is_text(series: pd.Series) -> bool:
    """Whether every present value is a text, and one is (Arrow's text columns are told by
    their type: inferring it looked at every value as a Python object)."""
    held = arrow_text(series)
    if held is not None:
        return held.null_count < len(held)
    return bool(pd.api.types.infer_dtype(series, skipna=True) == "string")
