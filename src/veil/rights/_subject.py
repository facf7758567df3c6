"""A data subject as a request names them (each key's value or values) and the tokens that
replace an identifying value: what every kind of store reads, with no table library."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping

#: What every replacement token starts with (a value anonymized already is told by it).
TOKEN = "erased-"

Subject = Mapping[str, "str | Collection[str]"]


def token() -> str:
    """A random value that replaces an identifying one (drawn, never derived: irreversible)."""
    return f"{TOKEN}{secrets.token_hex(8)}"


def values_of(value: str | Collection[str]) -> list[str]:
    """A subject key's value, or its values (a person may have several e-mails)."""
    return [value] if isinstance(value, str) else sorted(value)
