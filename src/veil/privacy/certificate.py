"""What a release is: the anonymized table and the certificate of what was done to it."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from veil._html import Shown
from veil.exceptions import InputError
from veil.policy import PrivacySettings
from veil.privacy.classes import ClassStats
from veil.privacy.criteria import Criterion
from veil.privacy.decide import Decision

#: The certificate's format: 2 pins the whole release (``release_sha256``) and records how each
#: column's role was decided; 3 names the input by a full-length SHA-256 over every row
#: (``source_fingerprint``) and the release by its cell hash (``release_fingerprint`` equals
#: ``release_sha256``); 2 hashed 10,000 sampled rows of each.
#: 4 lists the privacy goals as typed models (``privacy.models``: ``{"model": "k_anonymity",
#: "k": 5}``, see ``veil.privacy.criteria``) where 3 wrote ``k``, ``l`` and ``t`` keys (still read).
#: 5 counts the cells escaped against spreadsheet formulas (``escaped_cells``) and what each
#: step counted (``steps[].counts``, e.g. the entities ``redact`` replaced).
#: 6 pins the release with a hash that any split of its rows into batches gives alike
#: (``veil.io.ContentHash``), so a release streamed to disk is hashed as it is written; a
#: release written as several files (``release_parts``) is pinned by each file's hash.
#: ``verify`` refuses a certificate that pins nothing.
FORMAT_VERSION = 6


@dataclass(frozen=True)
class StepRecord:
    """One step of a release as the certificate records it: what it did and what it counted."""

    name: str  # the transform's policy name, e.g. "generalize"
    where: str  # where in the policy, e.g. "columns.Age.steps[0]"
    description: str  # one line, never a secret
    rows_after: int
    columns_after: int
    counts: dict[str, int] | None = None  # what the step counted, e.g. {"PHONE": 12}


@dataclass(frozen=True)
class Certificate:
    """A record of a release that ``verify`` can re-check and a report can explain."""

    veil_version: str
    created: str
    source_fingerprint: str
    release_fingerprint: str
    policy_sha256: str
    rows_in: int
    rows_out: int
    columns_in: tuple[str, ...]
    columns_out: tuple[str, ...]
    roles: dict[str, str]
    steps: tuple[StepRecord, ...]
    quasi_identifiers: tuple[str, ...]  # as named in the release
    sensitive: tuple[str, ...]
    before: ClassStats
    after: ClassStats
    privacy: dict[str, Any] | None = None  # the goals asked for
    checks: dict[str, bool] = field(default_factory=dict)  # goal -> met
    search: dict[str, Any] | None = None  # levels, loss, metric... of the privacy search
    decisions: tuple[Decision, ...] = ()  # per input column: role, decided by, treatment
    warnings: tuple[str, ...] = ()  # goals met by wiping data, large suppression
    release_sha256: str | None = None  # every cell of the release (veil.io.content_sha256)
    escaped_cells: int = 0  # text cells given a leading apostrophe (CSV injection)
    # the sensitive column's hierarchy, when t-closeness used hierarchical distance: verify
    # measures t with the very tree the search used (it holds categories, not records)
    sensitive_hierarchy: list[list[str]] | None = None
    # a release written as several files (a cluster's partitions, in order): how many; its
    # release_sha256 is then veil.io.parts_sha256 of each file's content hash
    release_parts: int | None = None
    format: int = FORMAT_VERSION

    @property
    def models(self) -> list[Criterion]:
        """The privacy models the release was made to meet (``privacy.models``)."""
        return list(PrivacySettings.model_validate(self.privacy).models) if self.privacy else []

    @property
    def kept_identifiers(self) -> dict[str, str]:
        """Direct identifiers released as they are, on purpose, with the policy's reason."""
        return {d.column: d.reason or "" for d in self.decisions if d.treatment == "kept"}

    @property
    def rows_suppressed(self) -> int:
        """Records not released: removed by steps or by the privacy search."""
        return self.rows_in - self.rows_out

    def to_dict(self) -> dict[str, Any]:
        """The certificate as JSON values, with the fields readers look for at the top (``k``,
        ``levels``, ``loss``, ``kept_identifiers``).
        """
        data = asdict(self)
        data["before"] = self.before.to_dict()
        data["after"] = self.after.to_dict()
        data["rows_suppressed"] = self.rows_suppressed
        for key in ("columns_in", "columns_out", "quasi_identifiers", "sensitive"):
            data[key] = list(data[key])
        data["steps"] = [asdict(s) for s in self.steps]
        data["decisions"] = [d.to_dict() for d in self.decisions]
        data["warnings"] = list(self.warnings)
        data["kept_identifiers"] = self.kept_identifiers
        data["k"] = self.after.k
        if self.search is not None:  # the search's certificate, at top level as ARX prints it
            data.update({key: self.search[key] for key in ("levels", "loss", "metric")})
            data["suppressed"] = self.rows_suppressed
        return data

    def to_json(self) -> str:
        """The certificate as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Certificate:
        """The certificate ``to_dict`` wrote (the keys it adds for readers are ignored)."""
        try:
            return cls(
                **{name: data[name] for name in _PLAIN_FIELDS},
                columns_in=tuple(data["columns_in"]),
                columns_out=tuple(data["columns_out"]),
                quasi_identifiers=tuple(data["quasi_identifiers"]),
                sensitive=tuple(data["sensitive"]),
                steps=tuple(
                    StepRecord(**{f: s[f] for f in StepRecord.__dataclass_fields__ if f in s})
                    for s in data["steps"]
                ),
                before=_class_stats(data["before"]),
                after=_class_stats(data["after"]),
                privacy=data.get("privacy"),
                checks=dict(data.get("checks") or {}),
                search=data.get("search"),
                decisions=tuple(Decision.from_dict(d) for d in data.get("decisions") or ()),
                warnings=tuple(data.get("warnings") or ()),
                release_sha256=data.get("release_sha256"),
                escaped_cells=int(data.get("escaped_cells", 0)),
                sensitive_hierarchy=data.get("sensitive_hierarchy"),
                release_parts=data.get("release_parts"),
                format=int(data.get("format", 1)),
            )
        except KeyError as err:
            raise InputError(
                f"a certificate must have the key {err.args[0]!r}; give the certificate.json "
                "that `veil anonymize --certificate` wrote"
            ) from err
        except (TypeError, ValueError) as err:
            raise InputError(
                f"certificate is malformed ({err}); give the certificate.json "
                "that `veil anonymize --certificate` wrote"
            ) from err

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Certificate:
        """The certificate in the JSON file at ``path``; an unreadable one is an ``InputError``."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as err:
            raise InputError(f"certificate {path} does not exist") from err
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise InputError(f"certificate {path} is not JSON ({err})") from err
        if not isinstance(data, dict):
            raise InputError(f"certificate {path} must hold a JSON object")
        try:
            return cls.from_dict(data)
        except InputError as err:
            raise InputError(f"{path}: {err}") from err

    def _repr_html_(self) -> str:
        from veil._html import card

        goals = [
            (goal, ("met", "insensitive") if met else ("missed", "identifier"))
            for goal, met in self.checks.items()
        ]
        return card(
            "veil release certificate",
            headers=("goal", "measured") if goals else (),
            rows=goals,
            lines=self.summary(),
        )

    def summary(self) -> list[str]:
        """Plain-language sentences for people who will not read the JSON."""
        lines = [
            f"{self.rows_out:,} of {self.rows_in:,} records released"
            + (f" ({self.rows_suppressed:,} suppressed)" if self.rows_suppressed else "")
            + f", {len(self.columns_out)} of {len(self.columns_in)} columns.",
        ]
        if self.quasi_identifiers:
            qis = ", ".join(self.quasi_identifiers)
            k = self.after.k
            if k > 1:
                lines.append(
                    f"Every person shares their {qis} with at least {k - 1} other"
                    f"{'s' if k > 2 else ''} in the release (k = {k}; it was {self.before.k})."
                )
            else:
                lines.append(
                    f"{self.after.unique_rows:,} people are still unique on {qis} (k = 1): "
                    "linking this release with another source could single them out."
                )
            lines.append(
                f"Records unique on the quasi-identifiers: {self.before.unique_rows:,} before, "
                f"{self.after.unique_rows:,} after."
            )
        else:
            lines.append("No column is a quasi-identifier, so no k-anonymity is claimed.")
        treated: dict[str, list[str]] = {}
        for d in self.decisions:
            if d.role == "identifier" and d.treatment not in (None, "kept"):
                treated.setdefault(_VERBS.get(d.treatment, d.treatment), []).append(d.column)
        for verb, names in treated.items():
            lines.append(f"Direct identifiers {verb}: {', '.join(names)}.")
        for column, reason in self.kept_identifiers.items():
            lines.append(f"Released as it is, on purpose: {column} ({reason}).")
        for step in self.steps:
            if step.name == "scrub_text" and step.counts:
                shown = ", ".join(f"{name} {n:,}" for name, n in step.counts.items())
                lines.append(
                    f"Generalized quasi-identifiers' values replaced in the free text too: {shown}."
                )
        by_scan = [d.column for d in self.decisions if d.by == "scan"]
        if by_scan:
            lines.append(f"Roles decided by the scan (not in the policy): {', '.join(by_scan)}.")
        for goal, met in self.checks.items():
            lines.append(f"Policy goal {goal}: {'met' if met else 'NOT met'}.")
        if self.escaped_cells:
            lines.append(
                f"{self.escaped_cells:,} text cells that a spreadsheet would run as formulas "
                "were written with a leading apostrophe (CSV injection)."
            )
        lines.extend(f"Warning: {w}" for w in self.warnings)
        return lines


_VERBS = {
    "drop": "dropped",
    "pseudonymize": "pseudonymized (keyed)",
    "mask": "masked",
    "fake": "replaced by fakes",
    "redact": "redacted (the personal data inside the text replaced)",
}

_PLAIN_FIELDS = (
    "veil_version",
    "created",
    "source_fingerprint",
    "release_fingerprint",
    "policy_sha256",
    "rows_in",
    "rows_out",
    "roles",
)


def _class_stats(data: dict[str, Any]) -> ClassStats:
    return ClassStats(
        quasi_identifiers=tuple(data["quasi_identifiers"]),
        **{f: data[f] for f in ClassStats.__dataclass_fields__ if f != "quasi_identifiers"},
    )


@dataclass(frozen=True)
class Release(Shown):
    """The anonymized table and its certificate."""

    data: pd.DataFrame
    certificate: Certificate

    def to_dict(self) -> dict[str, Any]:
        """The release's size and its certificate (the rows are in ``data``)."""
        return {
            "rows": len(self.data),
            "columns": [str(c) for c in self.data.columns],
            "certificate": self.certificate.to_dict(),
        }

    def lines(self) -> list[str]:
        """The certificate's summary."""
        return list(self.certificate.summary())

    def with_formulas_escaped(self) -> Release:
        """The release as a spreadsheet may open it: text cells that would run as formulas
        prefixed by an apostrophe (``veil.io.escape_formulas``), the certificate counting them
        and pinning the escaped cells (what the CSV or Excel file holds)."""
        from veil.io import content_sha256, escape_formulas

        data, escaped = escape_formulas(self.data)  # marked: never escaped a second time
        if not escaped:
            return Release(data, self.certificate)
        digest = content_sha256(data)
        certificate = replace(
            self.certificate,
            escaped_cells=self.certificate.escaped_cells + escaped,
            release_sha256=digest,
            release_fingerprint=digest,
        )
        return Release(data, certificate)

    def _repr_html_(self) -> str:
        from veil._html import card

        cert = self.certificate
        preview = self.data.head(5).to_html(index=False, border=0)  # pandas escapes cells
        title = f"veil release: {cert.rows_out:,} rows x {len(cert.columns_out)} columns"
        return card(
            title, lines=cert.summary(), footer=f'<div class="muted">first rows</div>{preview}'
        )
