"""A package's public names loaded on first use (PEP 562): ``import veil.io`` or
``import veil.rights`` costs nothing until a name is asked for, so a command loads only the
libraries it uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_names(
    package: str, where: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``where`` imported from
    its module when first asked for, then kept in the package."""

    def attribute(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    listed = sorted(names)

    def listing() -> list[str]:
        return listed

    return attribute, listing


def is_frame(data: object) -> bool:
    """Whether ``data`` is a pandas DataFrame, without importing pandas (a program that has
    not imported it holds none)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def is_dask(data: object) -> bool:
    """Whether ``data`` is a Dask DataFrame (``veil[scale]``), without importing Dask when it
    is not."""
    return type(data).__module__.startswith("dask.") and hasattr(data, "npartitions")
