"""A federated run for the people who must sign it off: how the updates were protected,
whether the model came close to one trained on all rows in one place, what each round cost,
what differential privacy spent, and which columns never left the parties.

``build_federated_report(result)`` makes a whole report of it (``veil fl simulate
--report``); ``build_report(..., federated=...)`` adds it as a section.
"""

from __future__ import annotations

from veil.federated.result import FederatedResult, convergence_figure
from veil.plotting import render
from veil.report.model import Fact, Figure, Report, Section, Table
from veil.report.sections._common import Inputs, standalone

PROTECTION = {
    "paillier": "Paillier-encrypted (exact to 2^-24 per value) and signed by each party; the "
    "server only multiplied ciphertexts, a separate key holder decrypted only sums of at least "
    "three parties' signed updates of the round",
    "ckks": "CKKS-encrypted (TenSEAL, approximate) and signed by each party; the server only "
    "added ciphertexts, a separate key holder decrypted only sums of at least three parties' "
    "signed updates of the round",
    "none": "in the clear: the server saw every party's update",
}


def section(result: FederatedResult) -> Section:
    """The federated section."""
    final = result.final_accuracy
    gap = None if final is None else final - result.centralized_accuracy
    facts = [
        Fact(
            "-" if final is None else f"{final:.1%}",
            "accuracy of the federated model on the parties' own test rows",
            "good" if gap is not None and gap >= -0.02 else "bad",
        ),
        Fact(
            f"{result.centralized_accuracy:.1%}",
            "accuracy of the same model trained on all rows in one place",
        ),
        Fact(
            result.encrypt, "how updates travelled", "bad" if result.encrypt == "none" else "good"
        ),
    ]
    if result.privacy is not None:
        p = result.privacy
        facts.append(
            Fact(
                f"ε {p['epsilon']:.3g}",
                f"client-level DP over {p['rounds']:.0f} "
                f"rounds (δ {p['delta']:g}), charged to the privacy budget",
            )
        )
    text = [
        f"{len(result.parties)} parties ({', '.join(result.parties)}) trained a {result.model} "
        f"model by federated averaging, weighted by their rows. Updates: "
        f"{PROTECTION.get(result.encrypt, result.encrypt)}.",
    ]
    if result.left_out:
        text.append(
            "Never described or trained on, at any party: "
            + "; ".join(f"{c} ({why})" for c, why in result.left_out.items())
            + "."
        )
    if result.disclosed:
        text.append("What left each party in clear: " + "; ".join(result.disclosed) + ".")
    if result.privacy is not None:
        p = result.privacy
        text.append(
            f"Each party clipped its update to L2 norm {p['clip']:g} and added Gaussian noise "
            f"of scale {p['sigma']:.3g} drawn by OpenDP: epsilon {p['epsilon_per_round']:.3g} "
            f"for one round alone, epsilon {p['epsilon']:.3g} (delta {p['delta']:g}) for the "
            f"run by zero-concentrated composition."
        )
    rounds = tuple(
        (r["round"], r["accuracy"], round(r["seconds"], 2), r["bytes_sent"]) for r in result.rounds
    )
    figure = Figure(
        id="federated-convergence",
        title="Accuracy per round",
        caption=(
            "The federated model's accuracy on the parties' own test rows after each round; "
            "dashed: the same model trained on all their rows in one place."
        ),
        png=render(convergence_figure([result])),
        data={
            "rounds": [r[0] for r in rounds],
            "accuracy": [r[1] for r in rounds],
            "centralized": result.centralized_accuracy,
        },
        wide=True,
    )
    table = Table("Rounds", ("round", "accuracy", "seconds", "bytes sent by the parties"), rounds)
    return Section(
        "federated",
        "Federated learning: one model, no rows shared",
        tuple(text),
        tuple(facts),
        (figure,),
        (table,),
    )


def build(inputs: Inputs) -> Section | None:
    """The section, when the report was given a federated run."""
    return section(inputs.federated) if inputs.federated is not None else None


def build_federated_report(
    result: FederatedResult, *, title: str = "veil federated report", created: str = ""
) -> Report:
    """A report of one federated run (``veil fl simulate --report``)."""
    return standalone(
        section(result),
        title=title,
        created=created,
        headline=(
            f"{len(result.parties)} parties, {len(result.rounds)} rounds of federated "
            f"averaging, updates {result.encrypt}."
        ),
        notice="This report shows accuracies and costs of a federated run; no row of any party.",
    )
