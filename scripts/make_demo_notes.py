"""Add the synthetic `Notes` column to veil's bundled demo sample (src/veil/data/).

    python scripts/make_demo_notes.py

A claims officer's free-text notes, one per client, so that `veil demo` shows personal data
found inside text and redacted. About one note in five names the client, a relative or an
agent, or holds a phone number, an e-mail address, the client's own ID number or KRA PIN (the
row's `ID_number` / `Tax_id`); two hold spreadsheet formulas, for the CSV-injection escaping;
one in ten is empty. Everything is drawn from `random.Random(SEED)` and Faker's en_KE names:
not real people. Running it again gives the same file.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
from faker import Faker

SEED = 20261123
DATA = Path(__file__).resolve().parents[1] / "src" / "veil" / "data" / "kenya_insurance.csv"

HARMLESS = [
    "Renewal reminder sent.",
    "Client asked about the waiting period for maternity cover.",
    "Premium paid via M-Pesa, receipt attached.",
    "Claim documents complete; forwarded for assessment.",
    "Requested a copy of the policy schedule.",
    "Asked whether dental is covered under the {tier} tier.",
    "Outpatient limit explained; client satisfied.",
    "Dependants updated on the member portal.",
    "Annual check-up booked at the partner clinic.",
    "Pre-authorisation approved for the scan.",
    "Client will pay the balance at the end of the month.",
    "Policy reinstated after the arrears were cleared.",
    "Asked to switch to the {tier} tier at renewal.",
    "Hospital invoice queried; awaiting a breakdown.",
    "No answer on two attempts; will try again next week.",
]
PERSONAL = [
    "Call {first} on {phone} about the renewal.",
    "Sent statement to {email}.",
    "Spoke to {title} {last} about the pending claim.",
    "Next of kin: {name}, {phone}.",
    "ID no. {id_number} confirmed at the branch.",
    "KRA PIN {pin} updated for the tax certificate.",
    "Agent {name} will visit the client on Friday.",
    "Dear {first}, your claim has been approved. Call {phone} with questions.",
    "Client's daughter {first} called from {phone}.",
    "Forward the receipts to {email} and copy the agent.",
]
FORMULAS = [
    '=HYPERLINK("http://claims.example.com/open?id=1","open the claim")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
]


def main() -> None:
    rng = random.Random(SEED)
    fake = Faker("en_KE")
    fake.seed_instance(SEED)
    data = pd.read_csv(DATA, dtype=str, keep_default_na=False)
    notes = []
    for _, row in data.iterrows():
        draw = rng.random()
        if draw < 0.10:
            notes.append("")
            continue
        first, last = fake.first_name(), fake.last_name()
        slots = {
            "tier": row["Tier"],
            "first": first,
            "last": last,
            "name": f"{first} {last}",
            "title": rng.choice(["Mr", "Mrs", "Ms", "Dr."]),
            "phone": rng.choice(["07", "+254 7"])
            + str(rng.choice([0, 1, 2]))
            + "".join(str(rng.randrange(10)) for _ in range(7)),
            "email": f"{first.lower()}.{last.lower()}{rng.randrange(100)}@example.co.ke",
            "id_number": row["ID_number"],
            "pin": row["Tax_id"],
        }
        template = rng.choice(PERSONAL) if draw < 0.32 else rng.choice(HARMLESS)
        notes.append(template.format(**slots))
    for position, formula in zip((137, 642), FORMULAS, strict=True):
        notes[position] = formula
    data["Notes"] = notes
    data.to_csv(DATA, index=False)


if __name__ == "__main__":
    main()
