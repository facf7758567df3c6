"""What a column's name says: English and Swahili words per entity.

Names are split into lower-case tokens (``barua_pepe``, ``EmailAddress``, ``e-mail`` ->
``barua pepe``, ``email address``, ``e mail``); a hint matches when its tokens appear in a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEY = "KEY"  # a unique key: an identifier without a named entity

HINTS: dict[str, tuple[str, ...]] = {
    "EMAIL": ("email", "e mail", "mail", "email address", "barua pepe", "baruapepe"),
    "PHONE": ("phone", "telephone", "tel", "mobile", "cell", "cellphone", "msisdn",
              "phone number", "mobile number", "simu", "nambari ya simu", "namba ya simu",
              "rununu", "contact number", "whatsapp"),
    "PERSON": ("name", "full name", "first name", "last name", "surname", "given name",
               "family name", "middle name", "firstname", "lastname", "fullname", "forename",
               "customer name", "client name", "patient name", "member name", "jina",
               "jina kamili", "majina", "jina la kwanza", "jina la mwisho", "next of kin",
               "beneficiary", "mteja"),
    "KE_NATIONAL_ID": ("national id", "id number", "idno", "id no", "nat id", "national id number",
                       "kitambulisho", "nambari ya kitambulisho", "huduma number",
                       "huduma namba", "passport", "passport number", "alien id"),
    "KE_KRA_PIN": ("kra", "kra pin", "pin", "tax id", "tax pin", "tin", "pin number",
                   "taxpayer id", "tax number"),
    "US_SSN": ("ssn", "social security", "social security number"),
    "UK_NINO": ("nino", "national insurance", "ni number", "national insurance number"),
    "CREDIT_CARD": ("credit card", "card number", "card no", "cc number", "pan", "debit card"),
    "IBAN": ("iban", "bank account", "account iban"),
    "IP_ADDRESS": ("ip", "ip address", "ipaddress", "ipv4", "ipv6", "client ip"),
    "URL": ("url", "website", "web site", "homepage", "profile url", "link", "tovuti"),
    "ADDRESS": ("address", "street", "street address", "home address", "postal address",
                "residence", "anwani", "makazi", "sanduku la posta"),
    "POSTCODE": ("postcode", "post code", "postal code", "zip", "zip code", "zipcode",
                 "postal", "msimbo wa posta"),
    "DATE_OF_BIRTH": ("dob", "date of birth", "birth date", "birthdate", "birthday", "born",
                      "tarehe ya kuzaliwa", "kuzaliwa"),
    "AGE": ("age", "age years", "umri", "miaka"),
    "GENDER": ("gender", "sex", "jinsia"),
    "LOCATION": ("county", "city", "town", "country", "region", "location", "district",
                 "province", "state", "village", "ward", "constituency", "sub county",
                 "residence county", "kaunti", "mji", "mahali", "eneo", "kijiji", "nchi",
                 "place of birth", "birthplace", "native country"),
    "MARITAL_STATUS": ("marital", "marital status", "civil status", "hali ya ndoa", "ndoa"),
    "OCCUPATION": ("occupation", "job", "job title", "profession", "employment", "position",
                   "kazi", "ajira", "taaluma"),
    "HEALTH": ("diagnosis", "illness", "disease", "condition", "medical condition",
               "health", "illness category", "diagnosis code", "icd", "icd10", "ailment",
               "ugonjwa", "magonjwa", "hali ya afya", "afya", "chest pain"),
    "INCOME": ("income", "salary", "wage", "wages", "earnings", "pay", "monthly income",
               "annual income", "net pay", "gross pay", "mshahara", "kipato", "mapato"),
    KEY: ("id", "uuid", "guid", "customer id", "client id", "member id", "patient id",
          "employee id", "employee number", "account number", "account no", "policy number",
          "policy no", "record id", "user id", "customer number", "membership number",
          "nhs number", "mrn", "medical record number", "ref", "reference", "key",
          "identifier", "number", "no"),
}  # fmt: skip

# Words that make "name" (and friends) not a person's name.
NOT_A_PERSON = frozenset(
    {"company", "product", "file", "business", "brand", "item", "street", "city", "county",
     "town", "host", "domain", "bank", "branch", "school", "hospital", "facility", "dept",
     "department", "category", "tier", "plan", "policy", "column", "table", "user", "user name",
     "username", "place", "country", "drug", "medicine", "scheme"}
)  # fmt: skip


# Words that make a name about something other than the person: "JobSatisfaction",
# "Vehicle_Age", "PercentSalaryHike", "MonthlyRate". They stop partial matches only; an exact
# name ("age") always counts.
NOT_ABOUT_THE_PERSON = frozenset(
    {"level", "satisfaction", "involvement", "rating", "score", "count", "rate", "ratio",
     "percent", "pct", "hike", "increase", "change", "growth", "vehicle", "car", "product",
     "company", "plan", "flag", "index", "rank", "average", "avg", "mean", "median", "total",
     "sum", "limit", "premium", "target", "balance", "involved", "distance", "years", "since",
     "last", "hours", "standard", "options", "option", "stock", "training", "times"}
)  # fmt: skip


def is_opaque(name: str) -> bool:
    """``c00``, ``col_3``, ``x1``, ``V12``: names that say nothing about the column."""
    words = tokens(name)
    filler = {"col", "column", "field", "var", "feature", "attr", "attribute", "unnamed"}
    return not words or all(w in filler or re.fullmatch(r"[a-z]{0,4}\d+|[a-z]", w) for w in words)


def tokens(name: str) -> list[str]:
    """``"EmailAddress"`` -> ``["email", "address"]``; ``"barua_pepe"`` -> ``["barua", "pepe"]``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [t for t in re.split(r"[^0-9A-Za-z]+", spaced.lower()) if t]


@dataclass(frozen=True)
class NameHint:
    entity: str
    score: float
    phrase: str


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def read_name(name: str) -> list[NameHint]:
    """Every entity the column name hints at, strongest first.

    An exact match scores 0.9; a phrase inside a longer name 0.75, more for longer phrases.
    """
    words = tokens(name)
    if not words:
        return []
    joined = "".join(words)
    found: dict[str, NameHint] = {}
    for entity, phrases in HINTS.items():
        for phrase in phrases:
            needle = phrase.split()
            if words == needle or joined == phrase.replace(" ", ""):
                score = 0.9
            elif _contains(words, needle) and not (set(words) & NOT_ABOUT_THE_PERSON):
                score = min(0.85, 0.7 + 0.05 * len(needle))
            else:
                continue
            if entity == "PERSON" and (set(words) & NOT_A_PERSON):
                continue
            if entity not in found or found[entity].score < score:
                found[entity] = NameHint(entity, score, phrase)
    return sorted(found.values(), key=lambda h: -h.score)
