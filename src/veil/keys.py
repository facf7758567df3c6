"""Secrets for keyed pseudonymization: from an environment variable or a key file, never logged.

A key never lives in an estimator's parameters (so it is never pickled, printed in a repr,
written to a policy, a certificate or a report): transforms hold the *name* of the variable
or the *path* of the file and read the key when they need it.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from veil.exceptions import SecretError

__all__ = ["DEFAULT_KEY_ENV", "MIN_KEY_BYTES", "check_key_env", "generate_key", "load_key"]

DEFAULT_KEY_ENV = "VEIL_KEY"
MIN_KEY_BYTES = 16


def generate_key() -> str:
    """A new random key: 32 bytes from the OS's CSPRNG, hex-encoded."""
    return secrets.token_hex(32)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def check_key_env(key_env: object) -> str:
    """``key_env`` must be the *name* of an environment variable; the value is never echoed
    (someone may have pasted the key itself there)."""
    if not isinstance(key_env, str) or not _ENV_NAME.fullmatch(key_env):
        raise SecretError(
            "key_env must be the name of an environment variable (letters, digits and _, "
            "such as VEIL_KEY), not the key itself; the value given is not shown: put the key "
            "in that variable, or in a key_file"
        )
    return key_env


def _looks_like_a_key(path: Path) -> bool:
    """A file name without extension, long, unspaced, with digits and letters: more likely a
    pasted key (resolved beside the policy) than a file's name."""
    name = path.name
    return (
        len(name) >= MIN_KEY_BYTES
        and not re.search(r"[.\s]", name)
        and bool(re.search(r"\d", name))
        and bool(re.search(r"[A-Za-z]", name))
    )


def load_key(
    *, key_env: str = DEFAULT_KEY_ENV, key_file: str | os.PathLike[str] | None = None
) -> bytes:
    """Read the key from ``key_file`` if given, else from the environment variable ``key_env``.

    A key put where a name belongs (``key_env: 3f9a...``, ``key_file: 3f9a...``) is refused
    without being repeated: messages name variables and files, never a value that may be a key.
    """
    check_key_env(key_env)
    if key_file is not None:
        path = Path(key_file)
        try:
            key = path.read_bytes().strip()
        except OSError as err:
            shown = "(not shown: it looks like a key, which belongs inside the file)"
            named = shown if _looks_like_a_key(path) else repr(str(path))
            raise SecretError(
                f"key_file {named} cannot be read ({err.strerror}); "
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
