"""Secrets for keyed pseudonymization: from an environment variable or a key file, never logged.

A key never lives in an estimator's parameters (so it is never pickled, printed in a repr,
written to a policy, a certificate or a report): transforms hold the *name* of the variable
or the *path* of the file and read the key when they need it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from veil.exceptions import SecretError

__all__ = ["DEFAULT_KEY_ENV", "MIN_KEY_BYTES", "generate_key", "load_key"]

DEFAULT_KEY_ENV = "VEIL_KEY"
MIN_KEY_BYTES = 16


def generate_key() -> str:
    """A new random key: 32 bytes from the OS's CSPRNG, hex-encoded."""
    return secrets.token_hex(32)


def load_key(
    *, key_env: str = DEFAULT_KEY_ENV, key_file: str | os.PathLike[str] | None = None
) -> bytes:
    """Read the key from ``key_file`` if given, else from the environment variable ``key_env``."""
    if key_file is not None:
        path = Path(key_file)
        try:
            key = path.read_bytes().strip()
        except OSError as err:
            raise SecretError(
                f"key_file {str(path)!r} cannot be read ({err.strerror}); "
                "create one with `veil keygen -o FILE`"
            ) from err
        source = f"key file {str(path)!r}"
    else:
        value = os.environ.get(key_env)
        if not value:
            raise SecretError(
                f"no pseudonymization key: environment variable {key_env} is not set; "
                f"run `export {key_env}=$(veil keygen)` or pass a key_file"
            )
        key = value.strip().encode()
        source = f"environment variable {key_env}"
    if len(key) < MIN_KEY_BYTES:
        # Never echo the key, not even its length beyond the rule.
        raise SecretError(
            f"the key in {source} must be at least {MIN_KEY_BYTES} characters; "
            "generate a strong one with `veil keygen`"
        )
    return key
