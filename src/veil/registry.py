"""One way to register a family's members: a name for each (what a policy, a command-line
option or a report says), aliases, and a did-you-mean for a name that is not there.

    >>> from veil.registry import Registry
    >>> shapes = Registry("shape")
    >>> @shapes.register("circle", aliases=("round",))
    ... class Circle: ...
    >>> shapes["round"] is Circle
    True
    >>> shapes["circel"]
    Traceback (most recent call last):
    ...
    veil.exceptions.ParameterError: unknown shape 'circel'; did you mean 'circle'? known: circle

Transforms, privacy-search metrics, synthesizers and rights store kinds are registries;
``veil transforms`` and the error messages read them.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar

from veil.exceptions import ParameterError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Names to members (classes, usually), read as a mapping.

    Parameters
    ----------
    what : str
        What a member is, for messages (``"transform"``, ``"metric"``).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._names: dict[str, None] = {}  # every registered name, in order
        self._members: dict[str, T] = {}  # the members loaded
        self._where: dict[str, str] = {}  # a member not loaded yet: its "module:attribute"
        self._aliases: dict[str, str] = {}

    def add(self, name: str, member: T, *, aliases: Iterable[str] = ()) -> T:
        """Register ``member`` as ``name`` (and ``aliases``); a name taken twice is a bug."""
        self._claim(name, aliases)
        self._members[name] = member
        return member

    def add_lazy(self, name: str, where: str, *, aliases: Iterable[str] = ()) -> None:
        """Register as ``name`` the member ``where`` names (``"module:attribute"``), imported
        when first asked for: a package can list every member without importing the libraries
        of the ones a program never uses."""
        if where.count(":") != 1:
            raise ValueError(f"{self.what} {name!r}: where must be 'module:attribute'")
        self._claim(name, aliases)
        self._where[name] = where

    def remove(self, name: str) -> None:
        """Unregister ``name`` and its aliases (a member registered for a while: a plugin
        unloaded, a test's own)."""
        key = self.canonical(name)
        for table in (self._names, self._members, self._where):
            table.pop(key, None)
        self._aliases = {a: n for a, n in self._aliases.items() if n != key}

    def _claim(self, name: str, aliases: Iterable[str]) -> None:
        aliases = tuple(aliases)
        for key in (name, *aliases):
            if key in self._names or key in self._aliases:
                raise ValueError(f"{self.what} {key!r} is registered twice")
        self._names[name] = None
        self._aliases.update(dict.fromkeys(aliases, name))

    def register(self, name: str, *, aliases: Iterable[str] = ()) -> Callable[[T], T]:
        """A decorator that registers the class it decorates as ``name``."""
        return lambda member: self.add(name, member, aliases=aliases)

    def suggest(self, name: str) -> str | None:
        """The registered name (or alias) closest to ``name``, if one is close."""
        close = difflib.get_close_matches(str(name), [*self._names, *self._aliases], n=1)
        return close[0] if close else None

    def canonical(self, name: str) -> str:
        """The registered name ``name`` stands for (itself, or the name it is an alias of)."""
        key = self._aliases.get(name, name)
        if key not in self._names:
            close = self.suggest(name)
            hint = f"; did you mean {close!r}?" if close else ";"
            raise ParameterError(
                f"unknown {self.what} {name!r}{hint} known: {', '.join(self._names)}"
            )
        return key

    def aliases(self) -> dict[str, str]:
        """Each alias and the name it stands for."""
        return dict(self._aliases)

    def __getitem__(self, name: str) -> T:
        key = self.canonical(name)
        if key not in self._members:
            module, attribute = self._where[key].split(":")
            self._members[key] = getattr(importlib.import_module(module), attribute)
        return self._members[key]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._names or name in self._aliases)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)
