"""Evaluation of any release against the table it was made from: fidelity, utility on real
holdout rows, and what an attacker could still learn.

Works for k-anonymous releases (intervals read at their midpoints), masked, pseudonymized and
synthetic ones alike (see ``_prepare`` for how generalized values are compared).

    >>> import numpy as np, pandas as pd
    >>> from veil.evaluate import evaluate_release
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"age": rng.integers(18, 90, 400), "tier": rng.choice(["A", "B"], 400)})
    >>> train, holdout = real.iloc[:300], real.iloc[300:]
    >>> measured = evaluate_release(train, train.copy(), holdout=holdout)
    >>> measured.privacy["exact_copies"]  # the original itself: every row is a real row
    1.0
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from veil._deprecated import UNSET, renamed_seed
from veil.evaluate._prepare import MIN_HOLDOUT, Prepared, prepare
from veil.risk.tables import risk_label

__all__ = ["MIN_HOLDOUT", "Evaluation", "evaluate_release", "risk_label"]


@dataclass
class Evaluation:
    """What an evaluation measured; ``None`` with a reason where a measure could not be."""

    fidelity: dict[str, Any]
    utility: dict[str, Any] | None
    privacy: dict[str, Any]
    seconds: float
    compared: list[str]
    left_out: dict[str, str]
    notes: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)  # train, holdout, release
    # for the report's figures: the association matrices and the two DCR samples
    figures: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``veil evaluate --format json`` (a measure that could not be
        computed is null with a ``..._reason`` beside it, never left out)."""
        privacy = dict(self.privacy)
        if privacy.get("dcr") is not None:
            privacy["dcr"] = dict(privacy["dcr"])
        out: dict[str, Any] = {
            "fidelity": self.fidelity,
            "utility": self.utility,
            "privacy": privacy,
            "seconds": self.seconds,
            "compared": self.compared,
            "left_out": self.left_out,
            "notes": self.notes,
            "rows": self.rows,
        }
        if self.utility is None:
            out["utility_reason"] = "no target: pass one to train a model on each table"
        elif "reason" in self.utility:
            out["utility"], out["utility_reason"] = None, self.utility["reason"]
        return out

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict())

    def lines(self) -> list[str]:
        """What was measured, as ``veil evaluate`` prints it."""
        data = self.to_dict()
        left = ", ".join(f"{c} ({why})" for c, why in self.left_out.items()) or "none"
        said = [f"compared {len(self.compared)} columns; left out: {left}"]
        said += [f"  {note}" for note in self.notes]
        said.append(_fidelity_line(data["fidelity"]))
        said += _utility_lines(data)
        return said + _privacy_lines(data["privacy"])

    def _repr_html_(self) -> str:
        from veil._html import card

        return card("veil evaluation", lines=self.lines())


def _fidelity_line(fidelity: dict[str, Any]) -> str:
    name, worst = max(fidelity["columns"].items(), key=lambda item: item[1]["value"])
    return (
        f"fidelity: detection AUC {fidelity['detection_auc']:.3f} (0.5: indistinguishable); "
        f"association difference {fidelity['association_difference']:.3f}; furthest column "
        f"{name} ({worst['statistic']} {worst['value']:.3f})"
    )


def _utility_lines(data: dict[str, Any]) -> list[str]:
    u = data["utility"]
    if u is None:
        return [f"utility: not measured ({data['utility_reason']})"]
    said = []
    for name in ("trtr", "tstr"):
        scores = u[name]
        if scores is not None:
            auc = "-" if scores["roc_auc"] is None else f"{scores['roc_auc']:.3f}"
            said.append(
                f"utility {name.upper()} ({u['target']}): accuracy {scores['accuracy']:.3f}, "
                f"F1 {scores['f1']:.3f}, ROC-AUC {auc}"
            )
    return said


def _privacy_lines(p: dict[str, Any]) -> list[str]:
    if p["dcr"] is None:
        return [f"privacy: not measured ({p['dcr_reason']})"]
    said = [
        f"privacy: {p['dcr']['share_closer_to_training']:.1%} of release rows closer to "
        f"training than to holdout rows ({p['dcr']['ideal']:.0%} ideal: the training rows' "
        f"share); exact copies {p['exact_copies']:.1%}; "
        f"membership advantage {p['membership_advantage']:.3f}"
    ]
    for attack in ("singling_out", "linkability", "inference"):
        measured, name = p[attack], attack.replace("_", " ")
        if measured["risk"] is None:
            said.append(f"  {name}: not measured ({measured['reason']})")
            continue
        low, high = measured["ci"]
        said.append(
            f"  {name} risk {measured['risk']:.3f} [{low:.3f}, {high:.3f}] "
            f"({risk_label((low, high))})"
        )
    return said


def evaluate_release(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    holdout_fraction: float | None = None,
    target: str | None = None,
    random_state: int = 0,
    seed: Any = UNSET,
) -> Evaluation:
    """Measure ``release`` against ``original`` (the rows it was made from) and real rows it was
    not made from (``holdout``, or ``holdout_fraction`` of ``original`` set aside: then the
    release must have been made without them). ``random_state`` seeds the split, the models
    and the attacks (``seed``: its old name, deprecated)."""
    # the measures and the attacks load scikit-learn and scipy: only an evaluation needs them
    # (a report reads an Evaluation without them)
    from veil.evaluate._measures import associations, check_target, column_fidelity, detection_auc

    start = time.perf_counter()
    seed = renamed_seed(random_state, seed, "evaluate_release")
    prepared: Prepared = prepare(
        original, release, holdout=holdout, holdout_fraction=holdout_fraction, seed=seed
    )
    if target is not None:
        check_target(prepared, target)
    before = associations(prepared.train, prepared.kinds)
    after = associations(prepared.release, prepared.kinds)
    difference = (before - after).abs()
    pairs = len(before) * (len(before) - 1)
    fidelity = {
        "columns": column_fidelity(prepared),
        "association_difference": float(difference.to_numpy().sum() / pairs) if pairs else 0.0,
        "detection_auc": detection_auc(prepared, seed),
    }
    figures: dict[str, Any] = {
        "associations": (before, after),
        "tables": (prepared.train, prepared.release, prepared.kinds),
    }
    privacy, measured_utility = _privacy(prepared, target, seed, figures)
    return Evaluation(
        fidelity,
        measured_utility,
        privacy,
        time.perf_counter() - start,
        prepared.columns,
        prepared.left_out,
        prepared.notes,
        {
            "train": len(prepared.train),
            "release": len(prepared.release),
            "holdout": 0 if prepared.holdout is None else len(prepared.holdout),
        },
        figures,
    )


def _privacy(
    prepared: Prepared, target: str | None, seed: int, figures: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The distances and the three attacks, and the utility (None without a target): each
    with its reason where there are no holdout rows to measure against; the distances'
    samples go to ``figures``."""
    from veil.evaluate._measures import utility
    from veil.risk.attacks import inference, linkability, singling_out
    from veil.risk.distance import distance_privacy

    privacy: dict[str, Any]
    if prepared.holdout is None:
        reason = "no holdout rows: pass holdout or holdout_fraction"
        privacy = {
            "dcr": None,
            "dcr_reason": reason,
            "exact_copies": None,
            "membership_advantage": None,
            "membership_advantage_reason": reason,
        }
        for attack in ("singling_out", "linkability", "inference"):  # they need control rows
            privacy[attack] = {"risk": None, "ci": None, "reason": reason}
        measured_utility = None if target is None else {"target": target, "reason": reason}
    else:
        privacy, samples = distance_privacy(prepared, seed)
        figures["dcr"] = samples
        privacy["singling_out"] = singling_out(prepared, seed).to_dict()
        privacy["linkability"] = (
            linkability(prepared, seed).to_dict()
            if len(prepared.columns) >= 2
            else {"risk": None, "ci": None, "reason": "one column: nothing to link"}
        )
        secret = target or (prepared.sensitive[0] if prepared.sensitive else None)
        if secret is None or len(prepared.columns) < 2:
            privacy["inference"] = {
                "risk": None,
                "ci": None,
                "reason": "nothing to infer: give a target, or the scan found no sensitive column",
            }
        else:
            privacy["inference"] = {**inference(prepared, secret, seed).to_dict(), "secret": secret}
        measured_utility = None if target is None else utility(prepared, target, seed)
    return privacy, measured_utility
