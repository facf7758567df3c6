"""``verify``: re-check a release against its certificate, independently of the search.

It reads only the released rows and the certificate (suppressed records are not in the
release; the certificate counts them); k, l and t are measured again from the rows with
pandas group-bys (``check``), not from the engine's frequency tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from veil.exceptions import InputError
from veil.io import content_sha256
from veil.privacy._check import check

_CONSISTENCY = {"rows", "k as certified", "release content"}


@dataclass(frozen=True)
class Verification:
    claims: tuple[tuple[str, bool, str], ...] = field(default_factory=tuple)  # claim, holds, detail

    @property
    def ok(self) -> bool:
        return all(holds for _, holds, _ in self.claims)

    def goals(self) -> dict[str, bool]:
        """The policy's privacy goals as measured (the other claims check consistency)."""
        return {c: h for c, h, _ in self.claims if c not in _CONSISTENCY}

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "claims": [{"claim": c, "holds": h, "detail": d} for c, h, d in self.claims],
        }


def verify(
    release: pd.DataFrame, certificate: Mapping[str, Any], *, content: bool = True
) -> Verification:
    """Re-check ``release`` against ``certificate``. ``content=False`` skips comparing every
    cell with ``release_sha256``, for a caller that has just computed that hash from these
    very rows (``anonymize``): hashing a large release twice is a full pass for nothing."""
    claims: list[tuple[str, bool, str]] = []
    quasi = list(certificate.get("quasi_identifiers", []))
    missing = [c for c in quasi if c not in release.columns]
    if missing:
        raise InputError(
            f"the release lacks the certificate's quasi-identifiers {missing}; is this the "
            "release the certificate was made for?"
        )
    rows_out = int(certificate.get("rows_out", len(release)))
    claims.append(
        ("rows", len(release) == rows_out, f"{len(release):,} rows, certificate {rows_out:,}")
    )
    pinned = certificate.get("release_sha256")
    if content and pinned is None:
        claims.append(("release content", False, "the certificate pins no content (made by an "
                       "older veil); make the release again to verify it"))  # fmt: skip
    elif content:
        actual = content_sha256(release)
        claims.append((
            "release content", actual == pinned,
            "every cell as certified (sha256)" if actual == pinned
            else "cells differ from the certified release (sha256 mismatch)",
        ))  # fmt: skip
    privacy = certificate.get("privacy") or {}
    search = certificate.get("search") or {}
    if "max_suppression" in privacy:
        # the search's budget counts the records it withheld of those it was given; the
        # policy's own suppress_rows steps are not part of it
        entering = int(search.get("rows_in", certificate.get("rows_in", len(release))))
        share = (entering - len(release)) / max(entering, 1)
        limit = float(privacy["max_suppression"])
        claims.append((
            f"suppressed by the search <= {limit:.1%}", share <= limit + 1e-12,
            f"{share:.4%} of {entering:,} records",
        ))  # fmt: skip
    sensitive = list(certificate.get("sensitive", []))
    wants_l = privacy.get("l") is not None or privacy.get("t") is not None
    distance = privacy.get("t_distance")
    distance = None if distance == "hierarchical" else distance
    measured = check(
        release, quasi,
        sensitive=sensitive[0] if sensitive and wants_l else None,
        l=privacy.get("l"),
        t_distance=distance,
    )  # fmt: skip
    if privacy.get("k") is not None:
        k = int(privacy["k"])
        claims.append((f"k >= {k}", measured.k >= k, f"smallest class {measured.k}"))
    if privacy.get("l") is not None:
        l_goal = int(privacy["l"])
        variant = privacy.get("l_variant", "distinct")
        value: float | None
        if variant == "entropy":
            value, holds = measured.l_entropy, (measured.l_entropy or 0) >= l_goal
        elif variant == "recursive":
            c = float(privacy.get("c") or 0)
            value, holds = measured.l_recursive_c, (measured.l_recursive_c or 0) < c
        else:
            value, holds = measured.l_distinct, (measured.l_distinct or 0) >= l_goal
        claims.append((f"l >= {l_goal} ({variant})", holds, f"measured {value}"))
    if privacy.get("t") is not None and privacy.get("t_distance") != "hierarchical":
        t_goal = float(privacy["t"])
        holds = measured.t is not None and measured.t <= t_goal + 1e-12
        claims.append((f"t <= {t_goal}", holds, f"largest class distance {measured.t}"))
    if "k" in certificate and privacy.get("k") is None:
        claims.append(
            ("k as certified", measured.k == int(certificate["k"]), f"measured {measured.k}")
        )
    return Verification(tuple(claims))
