"""What a release is: the anonymized table and the certificate of what was done to it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from veil.privacy.models import ClassStats


@dataclass(frozen=True)
class StepRecord:
    name: str  # the transform's policy name, e.g. "generalize"
    where: str  # where in the policy, e.g. "columns.Age.steps[0]"
    description: str  # one line, never a secret
    rows_after: int
    columns_after: int


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

    @property
    def rows_suppressed(self) -> int:
        """Records not released: removed by steps or by the privacy search."""
        return self.rows_in - self.rows_out

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["before"] = self.before.to_dict()
        data["after"] = self.after.to_dict()
        data["rows_suppressed"] = self.rows_suppressed
        for key in ("columns_in", "columns_out", "quasi_identifiers", "sensitive"):
            data[key] = list(data[key])
        data["steps"] = [asdict(s) for s in self.steps]
        data["k"] = self.after.k
        if self.search is not None:  # the search's certificate, at top level as ARX prints it
            data.update({key: self.search[key] for key in ("levels", "loss", "metric")})
            data["suppressed"] = self.rows_suppressed
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

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
            lines.append("No column is marked quasi_identifier, so no k-anonymity is claimed.")
        dropped = [c for c, r in self.roles.items() if r == "identifier"]
        if dropped:
            lines.append(
                f"Direct identifiers ({', '.join(dropped)}) were dropped, masked, pseudonymized "
                "or replaced by fakes."
            )
        for goal, met in self.checks.items():
            lines.append(f"Policy goal {goal}: {'met' if met else 'NOT met'}.")
        return lines


@dataclass(frozen=True)
class Release:
    """The anonymized table and its certificate."""

    data: pd.DataFrame
    certificate: Certificate
