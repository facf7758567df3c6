"""Write `tests/data/ke_claims.csv`: 3,000 claims of a Kenyan health insurer, made with Faker.

    python scripts/make_claims.py

The shape a new user brings: members with several claims each (so names, IDs, KRA PINs and
phone numbers repeat), the phone column named `contact` and written `+2547…` (no header says
"phone"), county, gender, date of birth, marital status, occupation and dependants as the
quasi-identifiers a person would name, a diagnosis and an amount, and a claims officer's
`claim_notes` that mention the member's county ("Outpatient visit at Nairobi clinic"), names
and phone numbers. Counties follow a rough population weighting. Everything is drawn from
`random.Random(SEED)` and Faker's en_KE provider: not real people. Running it again gives the
same file.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
from faker import Faker

from veil.scan.recognizers.ke.counties import COUNTY_PROVINCE

SEED = 20261125
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "ke_claims.csv"
MEMBERS, CLAIMS = 1_100, 3_000
BIG = {"Nairobi": 12, "Kiambu": 6, "Nakuru": 5, "Mombasa": 5, "Kisumu": 4, "Machakos": 3,
       "Kakamega": 3, "Uasin Gishu": 3, "Meru": 3, "Kilifi": 2, "Nyeri": 2,
       "Kajiado": 2}  # fmt: skip
MARITAL = {"Married": 50, "Single": 35, "Divorced": 6, "Widowed": 6, "Separated": 3}
OCCUPATIONS = ["Teacher", "Farmer", "Nurse", "Driver", "Trader", "Accountant", "Engineer",
               "Civil servant", "Mechanic", "Student", "Clerk", "Police officer", "Doctor",
               "Tailor", "Sales agent"]  # fmt: skip
DIAGNOSES = ["Malaria", "Hypertension", "Type 2 diabetes", "Asthma", "Typhoid", "Pneumonia",
             "Fracture", "Maternity", "Gastritis", "Arthritis", "Influenza", "Allergy"]  # fmt: skip
NOTES = [
    "Outpatient visit at {county} clinic.",
    "Admitted at {county} Referral Hospital for {diagnosis}.",
    "Member called from {phone} about the claim.",
    "Spoke to {name}; documents to follow.",
    "Pharmacy claim, {county} branch.",
    "Lab tests done in {town}; results attached.",
    "Claim reviewed and approved.",
    "Follow-up visit booked.",
    "",
]


def main() -> None:
    rng = random.Random(SEED)
    fake = Faker("en_KE")
    fake.seed_instance(SEED)
    counties = list(COUNTY_PROVINCE)
    weights = [BIG.get(c, 1) for c in counties]
    members = []
    for _ in range(MEMBERS):
        gender = rng.choice(["Female", "Male"])
        first = fake.first_name_female() if gender == "Female" else fake.first_name_male()
        born = date(1950, 1, 1) + timedelta(days=rng.randrange(365 * 55))
        members.append({
            "member_name": f"{first} {fake.last_name()}",
            "national_id": str(rng.randrange(10_000_000, 40_000_000)),
            "kra_pin": f"A{rng.randrange(10**8, 10**9):09d}{rng.choice('ABCDEFGHJKLMNPQRTUVWXYZ')}",
            "contact": f"+2547{rng.randrange(10**8):08d}",
            "county": rng.choices(counties, weights)[0],
            "gender": gender,
            "date_of_birth": born.isoformat(),
            "marital_status": rng.choices(list(MARITAL), list(MARITAL.values()))[0],
            "occupation": rng.choice(OCCUPATIONS),
            "dependants": min(rng.choices(range(8), [20, 18, 22, 18, 10, 6, 4, 2])[0], 7),
        })  # fmt: skip
    rows = []
    for i in range(CLAIMS):
        member = members[min(int(rng.expovariate(1 / 350)), MEMBERS - 1)]
        diagnosis = rng.choice(DIAGNOSES)
        note = rng.choice(NOTES).format(
            county=member["county"], diagnosis=diagnosis.lower(), phone=member["contact"],
            name=member["member_name"], town=member["county"],
        )  # fmt: skip
        day = date(2024, 1, 1) + timedelta(days=rng.randrange(700))
        rows.append({"claim_id": f"CLM-{100000 + i}", **member, "claim_date": day.isoformat(),
                     "diagnosis": diagnosis, "amount": round(rng.lognormvariate(9, 1), 2),
                     "claim_notes": note})  # fmt: skip
    pd.DataFrame(rows).to_csv(OUT, index=False)
    print(f"wrote {OUT} ({len(rows):,} claims of {MEMBERS:,} members)")


if __name__ == "__main__":
    main()
