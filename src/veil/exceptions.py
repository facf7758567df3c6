"""Every error veil raises, under one root, so callers can catch ``VeilError`` alone.

    VeilError
     ├── InputError            bad data or source: missing/empty file, ragged rows (exit 2)
     │    └── UnknownColumnError   a column named by the user is not in the table
     ├── ParameterError        a parameter is out of its domain; also a ValueError (exit 2)
     ├── PolicyError           the policy is invalid; names key and allowed values (exit 2)
     ├── SecretError           a pseudonymization key is missing or too weak (exit 2)
     ├── OutputError           the output would overwrite the input, or an existing file (exit 2)
     ├── MissingExtraError     an optional dependency is missing; names the pip install (exit 2)
     ├── BudgetExceededError   a DP release would spend more than the budget left (exit 1)
     └── CheckFailedError      the data does not meet the privacy check that was asked for (exit 1)

Messages read ``"{what} must be {constraint}, got {value!r}; {how to fix}"`` wherever that fits.
"""

from __future__ import annotations

__all__ = [
    "AccuracyWarning",
    "BudgetExceededError",
    "CheckFailedError",
    "CleanupNotice",
    "InputError",
    "MissingExtraError",
    "OutputError",
    "ParameterError",
    "PolicyError",
    "PrivacyLeakWarning",
    "SecretError",
    "UnknownColumnError",
    "VeilError",
    "one_line",
    "shown",
]

#: The most of a value any message quotes: a value can be a megabyte (or a key).
SHOWN_CHARS = 200


class VeilError(Exception):
    """Root of every error veil raises on purpose."""

    exit_code = 2


class InputError(VeilError):
    """The data source cannot be read as a table."""


class UnknownColumnError(InputError, KeyError):
    """A column named by the user is not in the table."""

    def __init__(self, column: object, available: list[str], *, where: str = "") -> None:
        shown = ", ".join(map(repr, available[:20])) + (", ..." if len(available) > 20 else "")
        origin = f" ({where})" if where else ""
        super().__init__(
            f"column {column!r}{origin} is not in the table; available columns: {shown}"
        )
        self.column = column

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class ParameterError(VeilError, ValueError):
    """A parameter value is outside its allowed domain."""


class PolicyError(VeilError):
    """The policy file is not valid."""


class SecretError(VeilError):
    """A secret (pseudonymization key) is missing or unusable. Never includes the secret."""


class OutputError(VeilError):
    """Writing the output would lose data (overwrite the input or an existing file)."""


class MissingExtraError(VeilError, ImportError):
    """An optional dependency is needed; the message names the ``pip install`` to run."""


class CheckFailedError(VeilError):
    """The data does not satisfy the privacy check that was asked for."""

    exit_code = 1


class BudgetExceededError(VeilError):
    """A differentially private release would spend more privacy budget than is left."""

    exit_code = 1


class PrivacyLeakWarning(UserWarning):
    """Bounds were inferred from the data: the inference itself leaks (as in diffprivlib)."""


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (with how much was cut), so
    a huge value never floods a terminal or a log."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def one_line(text: str) -> str:
    """A message on one line: libraries (Arrow, OpenDP) write several."""
    return " ".join(text.split())


class AccuracyWarning(UserWarning):
    """A DP answer is coarser than it needs to be (its candidate grid, for a quantile): said
    from the public bounds and the answer only, never from the data."""


class CleanupNotice(UserWarning):
    """veil removed what an earlier, killed run left behind (a partial output)."""
