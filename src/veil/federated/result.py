"""A federated run's outcome, for people and programs: accuracy per round beside centralized
training, what each round cost, what differential privacy spent; its JSON shape and its
convergence plot. Light on purpose (no Flower import): the report reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FederatedResult:
    """A simulated run: accuracy per round, the centralized baseline, what it cost."""

    encrypt: str
    model: str
    parties: list[str]
    rounds: list[dict[str, Any]]
    centralized_accuracy: float
    weights: np.ndarray = field(repr=False)
    spec: dict[str, Any] = field(repr=False)
    privacy: dict[str, Any] | None = None
    #: what left each party in clear (not encrypted, not under DP)
    disclosed: list[str] = field(default_factory=list)

    @property
    def left_out(self) -> dict[str, str]:
        """Columns no party trained on (direct identifiers, free text, near-unique), and why."""
        return dict(self.spec.get("left_out", {}))

    @property
    def final_accuracy(self) -> float | None:
        """The last round's accuracy."""
        return self.rounds[-1]["accuracy"] if self.rounds else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``veil fl simulate --format json`` prints."""
        return {
            "rounds": [
                {k: r[k] for k in ("round", "accuracy", "seconds", "bytes_sent")}
                for r in self.rounds
            ],
            "centralized_accuracy": self.centralized_accuracy,
            "encrypt": self.encrypt,
            "model": self.model,
            "parties": self.parties,
            "dp": self.privacy,
            "disclosed": self.disclosed,
        }

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        import json

        return json.dumps(self.to_dict())

    def lines(self, ledger: str = "the ledger") -> list[str]:
        """The run as ``veil fl simulate`` prints it (``ledger``: where DP was charged)."""
        said = [
            f"{len(self.parties)} parties ({', '.join(self.parties)}); updates protected "
            f"by {self.encrypt}"
        ]
        if self.left_out:
            shown = ", ".join(f"{c} ({why})" for c, why in self.left_out.items())
            said.append(f"left out of the features at every party: {shown}")
        for r in self.rounds:
            accuracy = "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
            said.append(
                f"  round {r['round']:>3}: accuracy {accuracy}  {r['seconds']:.2f} s  "
                f"{r['bytes_sent']:,} bytes sent"
            )
        said.append(
            f"centralized (all rows in one place): accuracy {self.centralized_accuracy:.4f}"
        )
        said.append("left each party in clear: " + "; ".join(self.disclosed))
        if self.privacy is not None:
            p = self.privacy
            said.append(
                f"client-level DP: epsilon {p['epsilon']:.3g}, delta {p['delta']:g} over "
                f"{p['rounds']:.0f} rounds ({p['epsilon_per_round']:.3g} a round alone; "
                f"noise sigma {p['sigma']:.3g} on updates clipped to {p['clip']:g}); "
                f"charged to {ledger}"
            )
        return said

    def _repr_html_(self) -> str:
        from veil._html import card

        return card(f"veil federated run ({self.model})", lines=self.lines())


def plot_convergence(results: list[FederatedResult], path: str | Path, *, title: str = "") -> None:
    """Accuracy per round for each run (by how its updates were protected), with each run's
    centralized accuracy as a dashed line: a PNG written atomically."""
    from veil.io import atomic_open
    from veil.plotting import render

    with atomic_open(path, "wb") as handle:
        handle.write(render(convergence_figure(results, title=title)))


def convergence_figure(results: list[FederatedResult], *, title: str = "") -> Any:
    """The matplotlib figure :func:`plot_convergence` writes (the report embeds it too)."""
    from veil.plotting import AFTER, BEFORE, WARN, canvas

    figure, (ax,) = canvas(6.4, 3.6)
    colours = {"none": BEFORE, "paillier": AFTER, "ckks": WARN}
    for result in results:
        rounds = [r["round"] for r in result.rounds]
        accuracy = [r["accuracy"] for r in result.rounds]
        how = "in the clear" if result.encrypt == "none" else f"encrypted ({result.encrypt})"
        ax.plot(
            rounds,
            accuracy,
            marker="o",
            color=colours.get(result.encrypt, AFTER),
            label=f"FedAvg, updates {how}",
        )
    if results:
        ax.axhline(
            results[0].centralized_accuracy,
            color="#444444",
            linestyle="--",
            label="centralized (all rows in one place)",
        )
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("round", fontsize=8)
    ax.set_ylabel("accuracy on the parties' test rows", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    return figure
