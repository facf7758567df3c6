"""Secrets for keyed pseudonymization: from an environment variable or a key file, never logged.

A key never lives in an estimator's parameters (so it is never pickled, printed in a repr,
written to a policy, a certificate or a report): transforms hold the *name* of the variable
or the *path* of the file and read the key when they need it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path

from veil.exceptions import SecretError

__all__ = [
    "DEFAULT_KEY_ENV",
    "MIN_KEY_BYTES",
    "check_key_env",
    "ensure_key_file",
    "generate_key",
    "load_key",
    "looks_like_a_key",
]

DEFAULT_KEY_ENV = "VEIL_KEY"
MIN_KEY_BYTES = 16


def ensure_key_file(path: Path) -> None:
    """A random key in a file only its owner can read, made once and then reused: written to
    a temporary file created owner-only, then linked to ``path`` (a key that appeared meanwhile
    is kept)."""
    if path.exists():
        return
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(generate_key() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # made meanwhile: that key is kept
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def generate_key() -> str:
    """A new random key: 32 bytes from the OS's CSPRNG, hex-encoded."""
    return secrets.token_hex(32)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def looks_like_a_key(name: str, *, file: bool = False) -> bool:
    """A name where a secret was pasted: long, unspaced, without a dot, and either hexadecimal
    (``veil keygen``'s keys, whether they start with a digit or a letter) or letters mixed with
    digits (a random token) with no ``_`` between words. ``file``: a file's name, where any
    mix of letters and digits is suspect (URL-safe tokens hold ``_`` and ``-``)."""
    if len(name) < MIN_KEY_BYTES or re.search(r"[\s.]", name):
        return False
    if re.fullmatch(r"[0-9A-Fa-f]+", name):
        return True
    mixed = bool(re.search(r"\d", name)) and bool(re.search(r"[A-Za-z]", name))
    return mixed and (file or "_" not in name.strip("_"))


def check_key_env(key_env: object) -> str:
    """``key_env`` must be the *name* of an environment variable; the value is never echoed
    (someone may have pasted the key itself there: a name shaped like a key is refused)."""
    if (
        not isinstance(key_env, str)
        or not _ENV_NAME.fullmatch(key_env)
        or looks_like_a_key(key_env)
    ):
        raise SecretError(
            "key_env must be the name of an environment variable (letters, digits and _, "
            "such as VEIL_KEY), not the key itself; the value given is not shown: put the key "
            "in that variable, or in a key_file"
        )
    return key_env


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
            named = shown if looks_like_a_key(path.name, file=True) else repr(str(path))
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
