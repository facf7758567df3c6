"""Scan a table and, when asked, write a starting policy for it (``veil scan
[--suggest-policy]``): the scan's entry point, kept apart from the fitting of the policy
(``veil.privacy.suggest``) so that a scan alone imports neither the policy's models nor the
search (in a new process of ``veil scan``: 0.05 s of its start-up)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil._html import Shown

if TYPE_CHECKING:
    from veil.progress import Progress
    from veil.scan import ScanResult

__all__ = ["Suggested", "scan_and_suggest"]


@dataclass
class Suggested(Shown):
    """What ``scan_and_suggest`` found and wrote."""

    scan: ScanResult
    policy: Path | None = None  # the starting policy written
    key: Path | None = None  # the pseudonymization key made for it (None: VEIL_KEY, or kept)

    def to_dict(self) -> dict[str, Any]:
        """The scan, and where the policy and a key made for it were written (never the key)."""
        return {
            "scan": self.scan.to_dict(),
            "policy": None if self.policy is None else str(self.policy),
            "key_file": None if self.key is None else str(self.key),
        }


def scan_and_suggest(
    source: Any,
    output: str | os.PathLike[str] | None = None,
    *,
    engine: str = "auto",
    force: bool = False,
    batch_rows: int = 500_000,
    progress: Callable[[str], None] | Progress | None = None,
    scan_options: Mapping[str, Any] | None = None,
    **reading: Any,
) -> Suggested:
    """Scan ``source`` (``veil.scan``) and, with ``output``, write a starting policy there
    (``veil scan --suggest-policy``): fitted on the table when it was read whole, else on the
    counts a scan in passes kept.

    Parameters
    ----------
    source : DataFrame, Dask DataFrame, str, path or Source
        The table (``reading``: its reading options).
    output : path, optional
        The policy YAML to write (``force`` replaces it, never an input). Without a key of the
        user's (``VEIL_KEY``) its pseudonyms read a key file beside it, made here when missing
        (only its owner can read it) and kept when present, so that pseudonyms stay the same.
    engine, batch_rows, progress
        As ``veil.scan`` takes them.
    force : bool
        Replace an existing policy file.
    scan_options : mapping, optional
        ``veil.scan``'s other options (``sample_size``, ``population``...).
    **reading
        The table's reading options (``sep``...).

    Returns
    -------
    Suggested
        The scan, the policy written and the key made.
    """
    from veil.io import OutputSet, Source
    from veil.keys import DEFAULT_KEY_ENV, ensure_key_file
    from veil.scan import scan_source

    src = Source.of(source, **reading)
    outputs = OutputSet(force=force, inputs=[str(src.data)] if src.kind == "files" else [])
    if output is not None:
        outputs.check(output)
    result, frame = scan_source(
        src, engine=engine, batch_rows=batch_rows, progress=progress, **dict(scan_options or {})
    )
    if output is None:
        return Suggested(result)
    target = Path(output)
    # no key of the user's: pseudonyms get one in a file beside the policy (only its owner
    # reads it), so that the policy runs at the first try; VEIL_KEY replaces it
    key = None if DEFAULT_KEY_ENV in os.environ else target.with_suffix(".key").name
    from veil.privacy.suggest import suggest_policy_yaml

    text = suggest_policy_yaml(
        result, frame, source=Path(src.name).name, key_file=key, read=reading
    )
    with outputs:
        outputs.stage(target).write_text(text, encoding="utf-8")
    made = None
    if key is not None and f"key_file: {key}" in text and not (target.parent / key).exists():
        made = target.parent / key
        ensure_key_file(made)
    return Suggested(result, target, made)
