"""Held-out free text: insurance and clinic notes with the entities inside them labelled, for
measuring `veil.scan.text` (and Presidio, on the same cells) on text it was not tuned on.

    notes = make_notes(600, seed=1)  # [(text, [(entity, start, end), ...]), ...]

Written after `veil.scan.text` and apart from its development set (tests/data/
free_text_notes.csv): other templates, other wording. People's names come from NAMES below,
written by hand for this file, not from Faker (whose name lists are veil's gazetteer), so a
bare "given family" pair measures the gazetteer's reach honestly; `gazetteer_share` says how
many of them it holds. Numbers are valid where they have a checksum (Faker's cards and IBANs).
"""

from __future__ import annotations

import re
import string

import numpy as np
from faker import Faker

_GIVEN = (
    "Achieng Adhiambo Akinyi Awuor Chebet Chelangat Jebet Kerubo Moraa Nafula Naliaka Nekesa "
    "Njeri Nyambura Wairimu Wambui Wanjiku Wanjiru Zawadi Baraka Kiprono Kipchumba Kibet Mutua "
    "Musyoka Njoroge Ochieng Odhiambo Omondi Otieno Wekesa Barasa Juma Hamisi Rashid Tatu "
    "Siobhan Aoife Eilidh Rhiannon Callum Ruairi Hamish Dafydd Priya Anjali Rohan Tariq Yusuf "
    "Folasade Chiamaka Oluwaseun Tendai Thandiwe Sipho Kwame Ama Mei Haruto Ingrid Lars Sven"
)
_FAMILY = (
    "Kamau Mwangi Njoroge Kariuki Wafula Wanyama Kiprotich Rotich Cheruiyot Langat Korir Mutiso "
    "Kilonzo Musyoka Onyango Okoth Owino Ouma Achieng Atieno Mohamed Abdi Hassan Ali Nyaga "
    "Gitau Macharia Karanja Maina Omolo Oduya Keter Sang Ngugi Muriuki Kimani MacLeod Pritchard "
    "Llewellyn O'Sullivan Fitzgerald Campbell Okonkwo Adeyemi Mensah Dlamini Nkosi Chaudhry "
    "Banerjee Iyer Nakamura Lindqvist Haugen Kowalczyk Novak Esposito Moreau Fonseca"
)
GIVEN, FAMILY = tuple(_GIVEN.split()), tuple(_FAMILY.split())
TITLES = ("Mr", "Mrs", "Ms", "Dr", "Dr.", "Mr.", "Bi", "Bw.")

# {slot} -> an entity; sentences with no slot are entity-free (false positives show there)
TEMPLATES = (
    "Client {person} phoned from {phone} about the renewal date.",
    "Refund sent to {iban}; confirmation e-mailed to {email}.",
    "Portal login from {ip} flagged by the fraud desk.",
    "Card {card} declined at the pharmacy, customer to pay cash.",
    "Please ask {titled} to send the discharge summary to {email}.",
    "Agent note: {person} disputes the excess on claim 55-1023.",
    "{person} ({phone}) wants the cover moved to the employer scheme.",
    "Mteja {person} alipiga simu kutoka {phone} kuhusu malipo.",
    "Verified ID no. {ke_id} at the Thika branch.",
    "KRA PIN {kra} captured for the tax certificate.",
    "Spouse added to the policy; documents from {email}.",
    "Premium reminder sent by SMS to {phone}.",
    "Met {titled} at the clinic, bills to follow.",
    "Called back {person}, no answer, will retry Monday.",
    "Beneficiary changed to {person} at the member's request.",
    "Reimbursement to {iban} approved by {titled}.",
    "Customer requested paper statements.",
    "Waiting period explained again; no change to the plan.",
    "Claim closed after the assessor's visit.",
    "Renewal quote issued at 3% below last year.",
    "Duplicate receipt 2023-0045 voided.",
    "Hospital invoice of 12,400 approved on 12/03/2024.",
    "Policy lapsed in June, reinstated after payment of arrears.",
    "Outpatient limit raised to 150,000 from next month.",
    "Member moved to the Gold tier after the annual review.",
    "Pre-authorisation for MRI granted, valid 30 days.",
)
ENTITY_OF = {
    "person": "PERSON",
    "titled": "PERSON",
    "phone": "PHONE",
    "email": "EMAIL",
    "iban": "IBAN",
    "ip": "IP_ADDRESS",
    "card": "CREDIT_CARD",
    "ke_id": "KE_NATIONAL_ID",
    "kra": "KE_KRA_PIN",
}
#: Presidio's name for each entity (None: Presidio has no recognizer for it)
PRESIDIO = {
    "PERSON": "PERSON",
    "PHONE": "PHONE_NUMBER",
    "EMAIL": "EMAIL_ADDRESS",
    "IBAN": "IBAN_CODE",
    "IP_ADDRESS": "IP_ADDRESS",
    "CREDIT_CARD": "CREDIT_CARD",
    "KE_NATIONAL_ID": None,
    "KE_KRA_PIN": None,
}

Note = tuple[str, list[tuple[str, int, int]]]


def make_notes(n: int, seed: int = 1) -> list[Note]:
    rng = np.random.default_rng(seed)
    fake = Faker(["en_GB", "en_US", "de_DE"])
    fake.seed_instance(seed)

    def pick(items: tuple[str, ...] | list[str]) -> str:
        return str(items[rng.integers(len(items))])

    def phone() -> str:
        digits = "".join(rng.choice(list(string.digits), 8))
        return pick(
            [
                f"07{digits}",
                f"+254 7{digits[:2]} {digits[2:5]} {digits[5:]}",
                f"0{digits[:2]}-{digits[2:5]}{digits[5:]}7",
                f"+44 7700 900{digits[:3]}",
                f"(212) 555-{digits[:4]}",
            ]
        )

    def value(slot: str, person: tuple[str, str]) -> str:
        given, family = person
        if slot == "person":
            return f"{given} {family}" if rng.random() < 0.7 else given
        if slot == "titled":
            return f"{pick(TITLES)} {family}"
        if slot == "email":
            user = re.sub(r"[^a-z]", "", f"{given[0]}{family}".lower())
            return f"{user}{rng.integers(1, 99)}@{pick(['gmail.com', 'yahoo.co.ke', 'mail.co.uk'])}"
        if slot == "phone":
            return phone()
        if slot == "iban":
            return fake.iban()
        if slot == "ip":
            return fake.ipv4_public()
        if slot == "card":
            return fake.credit_card_number()
        if slot == "ke_id":
            return str(rng.integers(10_000_000, 39_999_999))
        return f"{pick(['A', 'P'])}{rng.integers(0, 10**9):09d}{pick(list(string.ascii_uppercase))}"

    notes = []
    for _ in range(n):
        template = pick(TEMPLATES)
        person = (pick(GIVEN), pick(FAMILY))
        text, spans, last = "", [], 0
        for match in re.finditer(r"\{(\w+)\}", template):
            text += template[last : match.start()]
            filled = value(match.group(1), person)
            spans.append((ENTITY_OF[match.group(1)], len(text), len(text) + len(filled)))
            text += filled
            last = match.end()
        notes.append((text + template[last:], spans))
    return notes


def recall(
    notes: list[Note], found: list[list[tuple[str, int, int]]], names: dict[str, str | None]
) -> tuple[dict[str, tuple[int, int]], int]:
    """Per entity, (embedded, found): a labelled span counts as found when a found span of the
    same entity (``names`` maps veil's entity to the tool's) overlaps it; and the number of
    found spans overlapping no labelled span (false positives)."""
    per: dict[str, list[int]] = {}
    false = 0
    for (_, truth), hits in zip(notes, found, strict=True):
        for entity, start, end in truth:
            counts = per.setdefault(entity, [0, 0])
            counts[0] += 1
            want = names.get(entity)
            counts[1] += any(e == want and s < end and start < f for e, s, f in hits)
        false += sum(not any(s < end and start < f for _, start, end in truth) for _, s, f in hits)
    return {e: (c[0], c[1]) for e, c in sorted(per.items())}, false


def gazetteer_share() -> tuple[float, float]:
    """Shares of GIVEN and of FAMILY that veil's name gazetteer (Faker's lists) holds."""
    from veil.scan.recognizers import vocabulary
    from veil.scan.recognizers.normalize import normalize

    first, last = vocabulary.first_names(), vocabulary.last_names()
    return (
        sum(normalize(w) in first for w in GIVEN) / len(GIVEN),
        sum(normalize(w) in last for w in FAMILY) / len(FAMILY),
    )
