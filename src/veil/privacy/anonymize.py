"""``anonymize``: apply a policy to a table and certify the result."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from veil._version import __version__
from veil.exceptions import CheckFailedError, PolicyError, VeilError
from veil.io import fingerprint
from veil.policy import Policy
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.models import class_stats
from veil.schema import require_columns
from veil.transforms import PCAMask, RenameColumns

Progress = Callable[[str], None]


def _as_policy(policy: Policy | Mapping[str, Any] | str | os.PathLike[str]) -> Policy:
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, Mapping):
        return Policy.from_dict(policy)
    return Policy.load(policy)


def _unsupported(policy: Policy) -> list[str]:
    privacy = policy.privacy
    if privacy is None:
        return []
    asked = privacy.model_dump(exclude_defaults=True)
    return [key for key in asked if key not in {"k", "l", "sensitive", "max_suppression"}]


def anonymize(
    data: pd.DataFrame,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str],
    *,
    progress: Progress | None = None,
) -> Release:
    """Apply ``policy``'s steps to ``data`` (never modified) and certify the release.

    Raises ``PolicyError`` when the policy does not fit the data (unknown column, untreated
    identifier, bad step parameter: the message says where in the policy), and
    ``CheckFailedError`` when the release misses the policy's privacy goals.
    """
    pol = _as_policy(policy)
    require_columns(data, list(pol.columns), where="policy columns")
    untreated = pol.untreated_identifiers()
    if untreated:
        raise PolicyError(
            f"identifier column(s) {untreated} would be released as they are; give each a "
            "drop, pseudonymize, mask or fake step (or change its role)"
        )
    unsupported = _unsupported(pol)
    if unsupported:
        raise PolicyError(
            f"privacy.{unsupported[0]} is not supported by veil {__version__} yet; this version "
            "checks privacy.k, privacy.l (distinct) and privacy.max_suppression on the release; "
            "remove the others"
        )
    schema = pol.to_schema()
    quasi = list(schema.quasi_identifiers)
    sensitive = list(
        pol.privacy.sensitive if pol.privacy and pol.privacy.sensitive else schema.sensitive
    )
    require_columns(data, sensitive, where="privacy.sensitive")
    before = class_stats(data, quasi)

    frame = data
    records: list[StepRecord] = []
    for step in pol.planned_steps():
        if progress is not None:
            progress(f"{step.where}: {step.name}")
        try:
            frame = step.transform.fit_transform(frame)
        except VeilError as err:
            if isinstance(err, CheckFailedError):
                raise
            raise PolicyError(f"policy {step.where} ({step.name}): {err}") from err
        quasi, sensitive = _follow(step.transform, quasi), _follow(step.transform, sensitive)
        records.append(
            StepRecord(step.name, step.where, step.transform.describe(), len(frame), frame.shape[1])
        )

    after = class_stats(frame, quasi)
    checks: dict[str, bool] = {}
    privacy = pol.privacy
    if privacy is not None and privacy.k is not None:
        checks[f"k >= {privacy.k}"] = after.k >= privacy.k
    if privacy is not None and privacy.l is not None:
        if not sensitive:
            raise PolicyError("privacy.l needs a sensitive column: set privacy.sensitive or a role")
        after = class_stats(frame, quasi, sensitive=sensitive)
        checks[f"l >= {privacy.l} (distinct)"] = (after.l_distinct or 0) >= privacy.l

    certificate = Certificate(
        veil_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        source_fingerprint=fingerprint(data),
        release_fingerprint=fingerprint(frame),
        policy_sha256=pol.fingerprint(),
        rows_in=len(data),
        rows_out=len(frame),
        columns_in=tuple(map(str, data.columns)),
        columns_out=tuple(map(str, frame.columns)),
        roles={name: spec.role.value for name, spec in pol.columns.items()},
        steps=tuple(records),
        quasi_identifiers=tuple(quasi),
        sensitive=tuple(sensitive),
        before=before,
        after=after,
        privacy=None if privacy is None else privacy.model_dump(exclude_defaults=True),
        checks=checks,
    )
    if privacy is not None and "max_suppression" in privacy.model_fields_set:
        share = (len(data) - len(frame)) / len(data) if len(data) else 0.0
        checks[f"suppressed records <= {privacy.max_suppression:.1%}"] = (
            share <= privacy.max_suppression
        )
    failed = [goal for goal, met in checks.items() if not met]
    if failed and len(frame) == 0:
        raise CheckFailedError(
            f"every record was suppressed: the quasi-identifiers {quasi} are too detailed for "
            "the rare-record suppression; generalize them (bins, mappings) before suppressing"
        )
    if failed:
        raise CheckFailedError(
            f"the release does not meet {', '.join(failed)} on {quasi} (k = {after.k}, "
            f"{after.unique_rows} unique records); generalize the quasi-identifiers further or "
            "suppress rare records, e.g. steps: [{suppress_rows: {rare: K, columns: [...]}}]"
        )
    return Release(frame, certificate)


def _follow(transform: Any, names: list[str]) -> list[str]:
    """Column names after a step: renamed columns keep their role; dropped ones leave."""
    if isinstance(transform, RenameColumns):
        return [transform.mapping_.get(n, n) for n in names]
    if isinstance(transform, PCAMask):
        return [n for n in names if n not in transform.columns_]
    present = set(transform.get_feature_names_out())
    return [n for n in names if n in present]
