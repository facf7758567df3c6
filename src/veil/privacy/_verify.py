"""``verify``: re-check a release against its certificate, independently of the search.

It reads only the released rows and the certificate (suppressed records are not in the
release; the certificate counts them); each privacy model the certificate names measures the
release's classes again, counted from the rows (not from the search's lattice or its roll-ups).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from veil._html import Shown
from veil.exceptions import InputError, one_line
from veil.frequency import (
    COUNT,
    Frequencies,
    FrequencySum,
    class_sizes,
    histograms,
    sensitive_codes,
)
from veil.hierarchy import Hierarchy
from veil.io import ContentHash, TableStream, content_sha256, parts_sha256
from veil.policy import PrivacySettings
from veil.privacy.criteria import KAnonymity, TCloseness

_CONSISTENCY = {"rows", "k as certified", "release content"}


@dataclass(frozen=True)
class Verification(Shown):
    """Each claim of a certificate, whether it holds on the release, and how it was measured."""

    claims: tuple[tuple[str, bool, str], ...] = field(default_factory=tuple)  # claim, holds, detail

    @property
    def ok(self) -> bool:
        """Whether every claim holds."""
        return all(holds for _, holds, _ in self.claims)

    def goals(self) -> dict[str, bool]:
        """The policy's privacy goals as measured (the other claims check consistency)."""
        return {c: h for c, h, _ in self.claims if c not in _CONSISTENCY}

    def to_dict(self) -> dict[str, Any]:
        """The claims as JSON values: what ``veil verify --format json`` prints."""
        return {
            "ok": self.ok,
            "claims": [{"claim": c, "holds": h, "detail": d} for c, h, d in self.claims],
        }


def verify(
    release: pd.DataFrame,
    certificate: Mapping[str, Any],
    *,
    content: bool = True,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> Verification:
    """Re-check ``release`` against ``certificate``. ``content=False`` skips comparing every
    cell with ``release_sha256``, for a caller that has just computed that hash from these
    very rows (``anonymize``): hashing a large release twice is a full pass for nothing.
    Hierarchical t-closeness is measured with the sensitive hierarchy the certificate keeps
    (or the one in ``hierarchies``); with neither, its claim fails: it was not measured."""
    _require_quasi(certificate, release.columns)
    version = 2 if int(certificate.get("format", 1)) >= 6 else 1  # 6 hashes batch by batch

    def classes(settings: PrivacySettings) -> tuple[Any, Any, list[str], Any]:
        quasi = list(certificate.get("quasi_identifiers", []))
        column = _sensitive_column(certificate, settings)
        klass, sizes = class_sizes(release, quasi)
        hist, values = histograms(release, klass, column, len(sizes)) if column else (None, [])

        def people(model: KAnonymity, person: str) -> tuple[str, bool, str]:
            return _people_k(model, release, klass, len(sizes), person)

        return sizes, hist, values, people

    digest = (lambda: content_sha256(release, version=version)) if content else None
    return _verified(certificate, len(release), digest, classes, hierarchies)


def verify_counts(
    counts: pd.DataFrame,
    certificate: Mapping[str, Any],
    *,
    digest: str,
    count: str,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> Verification:
    """``verify`` for a release summarized as it was written (a streamed or a cluster's
    release): ``counts`` holds one row per distinct combination of the release's
    quasi-identifiers and sensitive value with how many rows hold it (column ``count``), and
    ``digest`` is ``veil.io.ContentHash`` of every row written."""
    _require_quasi(certificate, counts.columns)
    weights = counts[count].to_numpy(dtype=np.int64)

    def classes(settings: PrivacySettings) -> tuple[Any, Any, list[str], Any]:
        if settings.person_id is not None:
            raise InputError(
                "people are counted (privacy.person_id) on a release in memory: "
                "verify it with veil verify"
            )
        quasi = list(certificate.get("quasi_identifiers", []))
        column = _sensitive_column(certificate, settings)
        klass, found = class_sizes(counts, quasi)
        sizes = np.bincount(klass, weights=weights, minlength=len(found)).astype(np.int64)
        hist, values = None, list[str]()
        if column is not None:
            codes, values = sensitive_codes(counts[column])
            flat = np.bincount(
                klass * len(values) + codes, weights=weights, minlength=len(found) * len(values)
            )
            hist = flat.astype(np.int64).reshape(len(found), len(values))
        return sizes, hist, values, None

    return _verified(certificate, int(weights.sum()), lambda: digest, classes, hierarchies)


def _require_quasi(certificate: Mapping[str, Any], columns: Any) -> None:
    quasi = list(certificate.get("quasi_identifiers", []))
    missing = [c for c in quasi if c not in columns]
    if missing:
        raise InputError(
            f"the release lacks the certificate's quasi-identifiers {missing}; is this the "
            "release the certificate was made for?"
        )


def _verified(
    certificate: Mapping[str, Any],
    rows: int,
    digest: Callable[[], str] | None,
    classes: Callable[[PrivacySettings], tuple[Any, Any, list[str], Any]],
    hierarchies: Mapping[str, Hierarchy] | None,
) -> Verification:
    """The claims about a release of ``rows`` rows whose content hashes to ``digest()`` (None:
    not compared) and whose classes ``classes`` counts."""
    claims: list[tuple[str, bool, str]] = []
    rows_out = int(certificate.get("rows_out", rows))
    claims.append(("rows", rows == rows_out, f"{rows:,} rows, certificate {rows_out:,}"))
    pinned = certificate.get("release_sha256")
    if digest is not None and pinned is None:
        claims.append(
            (
                "release content",
                False,
                "the certificate pins no content (made by an "
                "older veil); make the release again to verify it",
            )
        )
    elif digest is not None:
        actual = digest()
        claims.append(
            (
                "release content",
                actual == pinned,
                "every cell as certified (sha256)"
                if actual == pinned
                else "cells differ from the certified release (sha256 mismatch)",
            )
        )
    privacy = certificate.get("privacy") or {}
    search = certificate.get("search") or {}
    if "max_suppression" in privacy:
        # the search's budget counts the records it withheld of those it was given; the
        # policy's own suppress_rows steps are not part of it
        entering = int(search.get("rows_in", certificate.get("rows_in", rows)))
        share = (entering - rows) / max(entering, 1)
        limit = float(privacy["max_suppression"])
        claims.append(
            (
                f"suppressed by the search <= {limit:.1%}",
                share <= limit + 1e-12,
                f"{share:.4%} of {entering:,} records",
            )
        )
    try:  # format 3 wrote k, l and t at the top: the policy's shorthand reads them
        settings = PrivacySettings.model_validate(privacy)
    except (ValidationError, ValueError) as err:
        raise InputError(
            f"the certificate's privacy goals are not readable: {one_line(str(err))}"
        ) from err
    sizes, hist, values, people = classes(settings)
    claims += _model_claims(settings, certificate, sizes, hist, values, hierarchies, people)
    return Verification(tuple(claims))


def _sensitive_column(certificate: Mapping[str, Any], settings: PrivacySettings) -> str | None:
    sensitive = list(certificate.get("sensitive", []))
    return sensitive[0] if sensitive and any(m.needs_sensitive for m in settings.models) else None


def _model_claims(
    settings: PrivacySettings,
    certificate: Mapping[str, Any],
    sizes: Any,
    hist: Any,
    values: list[str],
    hierarchies: Mapping[str, Hierarchy] | None,
    people: Any,
) -> list[tuple[str, bool, str]]:
    """Each privacy model measured on the release's classes (``sizes``, ``hist``)."""
    claims: list[tuple[str, bool, str]] = []
    column = _sensitive_column(certificate, settings)
    for model in settings.models:
        model = model.model_copy()
        if isinstance(model, TCloseness) and model.distance == "hierarchical":
            tree = _sensitive_tree(certificate, column, hierarchies)
            if tree is None:
                claims.append(
                    (
                        model.goal,
                        False,
                        "not measured: the certificate keeps no "
                        "sensitive hierarchy; give it (--hierarchies DIR)",
                    )
                )
                continue
            model.use_hierarchy(tree)
        model.prepare(values)
        if isinstance(model, KAnonymity) and settings.person_id is not None:
            claims.append(people(model, settings.person_id))
            continue
        value = (
            model.measure(sizes, hist) if hist is not None or not model.needs_sensitive else None
        )
        claims.append((model.goal, model.met(value), f"measured {_shown(value)}"))
    k_measured = KAnonymity(k=1).measure(sizes, None)
    if "k" in certificate and not any(isinstance(m, KAnonymity) for m in settings.models):
        claims.append(
            ("k as certified", k_measured == int(certificate["k"]), f"measured {k_measured}")
        )
    return claims


def _sensitive_tree(
    certificate: Mapping[str, Any], column: str | None, hierarchies: Mapping[str, Hierarchy] | None
) -> Hierarchy | None:
    """The sensitive column's hierarchy: given, else the certificate's."""
    if column is not None and hierarchies and column in hierarchies:
        return hierarchies[column]
    rows = certificate.get("sensitive_hierarchy")
    if column is None or not rows:
        return None
    return Hierarchy(column, [list(map(str, row)) for row in rows])


def _people_k(
    model: KAnonymity, release: pd.DataFrame, klass: Any, classes: int, person: str
) -> tuple[str, bool, str]:
    """k counted on the people of each class (``privacy.person_id``)."""
    goal = f"{model.goal} (people, by {person})"
    if person not in release.columns:
        return (
            goal,
            False,
            f"not measured: the release has no column {person!r} to count "
            "people by (pseudonymize it rather than drop it)",
        )
    from veil.risk.reidentification import person_risk

    people = person_risk(release[person], klass, classes).class_people
    value = model.measure(people, None)
    return (goal, model.met(value), f"measured {_shown(value)} people")


def _shown(value: float | None) -> str:
    if value is None:
        return "nothing (no class)"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def verify_files(
    source: TableStream,
    certificate: Mapping[str, Any],
    *,
    batch_rows: int = 500_000,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> Verification:
    """``verify`` for a release read a batch at a time: one file, or the files of a release
    written in parts (``release_parts``: a cluster's partitions, in their order), each hashed
    on its own. Memory holds the counts of the release's classes and a batch."""
    quasi = list(certificate.get("quasi_identifiers", []))
    settings_sensitive = list(certificate.get("sensitive", []))[:1]
    measured = [c for c in [*quasi, *settings_sensitive] if c in source.columns]
    _require_quasi(certificate, source.columns)
    parts = certificate.get("release_parts")
    summed = FrequencySum()
    digests: list[str] = []
    whole = ContentHash(list(source.columns))
    files = [TableStream(str(p)) for p in source.paths] if parts else [source]
    for part in files:
        digest = ContentHash(list(part.columns))
        for batch in part.batches(batch_rows):
            (digest if parts else whole).update(batch)
            summed.add(Frequencies.of(batch, measured))
        digests.append(digest.hexdigest())
    counts = summed.total()
    content = parts_sha256(digests) if parts else whole.hexdigest()
    if parts and len(digests) != int(parts):
        content = f"{len(digests)} files, not the {parts} parts certified"
    table = counts.counts if counts is not None else pd.DataFrame(columns=[*measured, COUNT])
    return verify_counts(table, certificate, digest=content, count=COUNT, hierarchies=hierarchies)
