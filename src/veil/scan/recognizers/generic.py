"""Recognizers that hold in every country: contact details, cards, accounts, people, places."""

from __future__ import annotations

import ipaddress
import re
import string
from functools import cache, lru_cache
from typing import Any

from veil.scan.recognizers import phones, vocabulary
from veil.scan.recognizers.base import (
    ColumnSample,
    Entity,
    Evidence,
    Pattern,
    PatternRecognizer,
    VocabularyRecognizer,
    percent,
)
from veil.scan.recognizers.normalize import normalize, normalize_place

# Regions tried, in order, for numbers written without a country code.
PHONE_REGIONS = ("KE", "US", "GB", "DE", "FR", "IN", "UG", "TZ", "NG", "ZA")


@lru_cache(maxsize=1 << 16)
def valid_phone(text: str) -> bool | None:
    """True for a number phonenumbers calls valid, None if only possible, False otherwise.
    Remembered for the last 65,536 texts: a column or a note repeats its numbers (a hotline; a
    hostile cell of one number 400,000 times).

    A number written with ASCII digits and the usual separators is decided on its digits with
    phonenumbers' metadata (``phones.verdict``: a few µs against ~40 µs; held equal to
    phonenumbers by the tests); anything else, by phonenumbers itself."""
    regions = phone_regions(text)
    found = phones.verdict(text, regions)
    return parsed_phone(text, regions) if found is phones.UNSURE else found


def phone_regions(text: str) -> tuple[str | None, ...]:
    """The regions a number is read in, in turn: its own country code after a plus (None),
    else ``PHONE_REGIONS``."""
    return (None,) if text.lstrip().startswith("+") else PHONE_REGIONS


def parsed_phone(text: str, regions: tuple[str | None, ...]) -> bool | None:
    """What phonenumbers says of ``text`` tried in ``regions`` in turn: True for the first it
    is valid in, None if only possible in one, False otherwise (``parse`` costs ~25 µs a
    region). phonenumbers is imported by the first text that needs it (15 ms of a command's
    start-up that a table without phone-shaped text does not need)."""
    import phonenumbers

    possible = False
    for region in regions:
        try:
            number = phonenumbers.parse(text, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return True
        possible = possible or phonenumbers.is_possible_number(number)
    return None if possible else False


def valid_card(text: str) -> bool:
    """Whether ``text`` is a payment card number with a valid Luhn check digit."""
    from stdnum import luhn  # python-stdnum imports ssl: loaded when a number is checked

    digits = re.sub(r"[ -]", "", text)
    return 12 <= len(digits) <= 19 and digits[0] in "23456" and luhn.is_valid(digits)


def valid_iban(text: str) -> bool:
    """Whether ``text`` is an IBAN: python-stdnum's ``iban.is_valid``, its steps in its order
    (the mod-97 check, the country's BBAN format, the country's own check), with each
    country's format looked up once rather than per number (stdnum walks its registry of 89
    countries for every number: 25 µs of the 30). Held equal to ``iban.is_valid`` by the
    tests."""
    from stdnum import iban
    from stdnum.exceptions import ValidationError
    from stdnum.iso7064 import mod_97_10

    # stdnum's compact and mod-97 check, written for ASCII as str.translate (stdnum maps
    # Unicode's look-alikes, and "`", to ASCII first: such a text takes stdnum's own way)
    ascii_text = text.isascii() and "`" not in text
    number = text.translate(_IBAN_SEPARATORS).strip().upper() if ascii_text else iban.compact(text)
    rotated = number[4:] + number[:4]
    if rotated.isascii() and rotated.isalnum():
        if int(rotated.translate(_BASE_36)) % 97 != 1:
            return False
    else:
        try:
            if mod_97_10.checksum(rotated) != 1:
                return False
        except Exception:  # stdnum's validate reads any failure here as a bad format
            return False
    country = _iban_country(number[:2])
    if country is None or not country[0].match(number[4:]):
        return False
    if country[1] is not None:
        try:
            country[1].validate(number)
        except ValidationError:
            return False
    return True


_IBAN_SEPARATORS = str.maketrans("", "", " -.")
#: Each ASCII letter or digit as its value in base 36, written in base 10 (stdnum's _to_base10).
_BASE_36 = str.maketrans({c: str(int(c, 36)) for c in string.digits + string.ascii_letters})


@cache
def _iban_country(prefix: str) -> tuple[re.Pattern[str], Any] | None:
    """A country's BBAN format and its own IBAN check (None: not an IBAN country). stdnum's
    registry has one level, two letters, so the number's first two letters find what the
    whole number would."""
    from stdnum import iban

    found = iban._ibandb.info(prefix)
    if not found or not found[0][1]:
        return None
    return iban._struct_to_re(found[0][1].get("bban", "")), iban._get_cc_module(prefix)


def valid_ip(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


_EMAIL = r"[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,63}"
EMAIL = PatternRecognizer(
    "EMAIL",
    # RFC 5321's lengths bound each part (a local part of 64, labels of 63): a search inside a
    # cell of "a-a-a-..." tries each start in bounded steps (unbounded, every start ran to the
    # end of the run: quadratic on a hostile cell). No possessive forms: Arrow's RE2 runs it too.
    [Pattern("email", _EMAIL, 0.95)],
    description="e-mail addresses",
)

PHONE = PatternRecognizer(
    "PHONE",
    [
        Pattern(
            "international",
            r"\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}(?:\s*(?:x|ext\.?)\s*\d{1,5})?",
            0.8,
        ),
        Pattern(
            "idd prefix", r"(?:00|011)[\s.-]?\d{1,3}(?:[\s.-]?\d{2,4}){2,5}(?:\s*x\d{1,5})?", 0.7
        ),
        Pattern("trunk 0", r"\(?0\d{1,4}\)?[\s.-]?\d{2,4}(?:[\s.-]?\d{2,4}){1,2}", 0.7),
        Pattern("kenya 254", r"254[17]\d{8}", 0.8),
        Pattern(
            "north american",
            r"(?:1[\s.-])?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}"
            r"(?:\s*(?:x|ext\.?)\s*\d{1,5})?",
            0.7,
        ),
        Pattern("digits", r"\d{9,12}", 0.3, text_only=True),
    ],
    description="phone numbers (checked with phonenumbers)",
    validate=valid_phone,
)


def valid_international(text: str) -> bool:
    """Whether digits stored as a number (``254715688985``: a spreadsheet or a database kept
    ``+254 715 688985`` as an integer) are a valid number once the ``+`` is put back."""
    import phonenumbers

    try:
        return phonenumbers.is_valid_number(phonenumbers.parse("+" + text.strip(), None))
    except phonenumbers.NumberParseException:
        return False


class NumericPhoneRecognizer:
    """Phone numbers stored as numbers: a column of integers that, read with a leading ``+``,
    are valid numbers with their country code (a Parquet int64 of ``2547…``, an Excel or SQL
    column typed as a number). Judged on the values as written in the source: text columns
    are ``PHONE``'s. Not searched for in free text (``PHONE`` is)."""

    entity = "PHONE"

    def __init__(self) -> None:
        self.digits = PatternRecognizer(
            "PHONE",
            [Pattern("country code and number", r"[1-9]\d{9,13}", 0.6)],
            description="phone numbers stored as numbers (with their country code, checked "
            "with phonenumbers)",
            validate=valid_international,
            numeric_ok=True,
            min_share=0.8,
        )

    def check(self, column: ColumnSample) -> Evidence | None:
        """``PHONE`` evidence for a numeric column, None for any other."""
        return self.digits.check(column) if column.kind == "numeric" else None


NUMERIC_PHONE = NumericPhoneRecognizer()

URL = PatternRecognizer(
    "URL",
    [
        Pattern("http", r"https?://[^\s/$.?#][^\s]*", 0.9),
        Pattern("www", r"www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[^\s]*)?", 0.85),
    ],
    description="web addresses",
)

IP_ADDRESS = PatternRecognizer(
    "IP_ADDRESS",
    [
        Pattern("ipv4", r"(?:\d{1,3}\.){3}\d{1,3}", 0.6),
        Pattern("ipv6", r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}", 0.6),
    ],
    description="IP addresses",
    validate=valid_ip,
)

CREDIT_CARD = PatternRecognizer(
    "CREDIT_CARD",
    [Pattern("card", r"\d(?:[ -]?\d){12,18}", 0.3)],
    description="payment card numbers (Luhn checksum valid)",
    validate=valid_card,
    numeric_ok=True,
)

IBAN = PatternRecognizer(
    "IBAN",
    [Pattern("iban", r"[A-Z]{2}\d{2}(?:\s?[A-Z0-9]){11,30}", 0.3)],
    description="IBANs (mod-97 checksum valid)",
    validate=valid_iban,
)

# Street types: the common part of USPS Publication 28's suffixes, UK and Indian ones.
_STREET_WORDS = (
    "street|st|road|rd|avenue|ave|lane|ln|drive|dr|court|ct|boulevard|blvd|way|place|pl|"
    "square|sq|terrace|close|crescent|highway|hwy|path|gardens?|park|view|hills?|row|walk|"
    "parkway|pkwy|trail|circle|cir|estate|haven|dam|ville|mews|marg|nagar|chowk|alley|"
    "arcade|bayou|beach|bend|bluff|branch|bridge|brook|burg|bypass|camp|canyon|cape|"
    "causeway|center|centre|cliffs?|club|common|corners?|cove|creek|crest|crossing|"
    "crossroad|curve|dale|divide|estates|expressway|extension|falls|ferry|fields?|flats?|"
    "ford|forest|forge|fork|fort|freeway|gateway|glen|green|grove|harbor|heights|highlands?|"
    "hollow|inlet|island|isle|junction|keys?|knolls?|lakes?|landing|light|loaf|locks?|"
    "lodge|loop|mall|manor|meadows?|mill|mission|motorway|mount|mountain|neck|orchard|oval|"
    "overpass|pass|pike|pines|plains?|plaza|points?|port|prairie|ranch|rapids?|ridge|river|"
    "route|run|shoals?|shores?|skyway|springs?|spur|stations?|stravenue|stream|summit|"
    "throughway|trace|track|trafficway|tunnel|turnpike|underpass|unions?|valleys?|viaduct|"
    "vista|wells?"
)
ADDRESS = PatternRecognizer(
    "ADDRESS",
    [
        Pattern("po box", r"(?i:p\.?\s?o\.?\s*box)\s*\d+.*", 0.9),
        Pattern(
            "number street",
            rf"(?is:\d{{1,5}}[A-Za-z]?,?\s+(?:[^\s,]+\s+){{0,4}}(?:{_STREET_WORDS})\b.*)",
            0.85,
        ),
        Pattern("number / street", r"(?s:\d{1,5}\s*/\s*\w+.*,.*)", 0.7),
        Pattern("..., city, ST 12345", r"(?s:.+,\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?)", 0.85),
        Pattern("street 12, 12345 city", r"(?s:.+\s\d+\w?(?:[-/]\d+)?,\s*\d{4,5}\s+\S.*)", 0.85),
        Pattern("military", r"(?s:.*\b(?:FPO|APO|DPO)\s+A[AEP]\s+\d{5})", 0.85),
        Pattern("..., UK postcode", r"(?s:.+,\s*[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2})", 0.85),
        Pattern("flat", r"(?is:(?:flat|apt\.?|apartment|suite|unit|house)\s*\d+\w?\b.*)", 0.8),
        Pattern(
            "street number (de)",
            r"(?is:.*(?:straße|strasse|str\.|weg|allee|platz|gasse|ring|damm)\s*\d+\w?.*)",
            0.85,
        ),
        Pattern(
            "number, street (fr/es/it)",
            r"(?is:\d{1,5},?\s+(?:rue|avenue|boulevard|bd|chemin|place|impasse|allée|calle|via|"
            r"viale|piazza|rua|avenida)\b.*)",
            0.85,
        ),
    ],
    description="postal addresses",
)


class PersonRecognizer:
    """People's names: tokens found in a gazetteer of first and last names from Faker's
    person providers in every locale (en_KE and sw included), titles ignored."""

    entity = "PERSON"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence that the column holds people's names: most sampled values are two or more words
        whose first and last are given or family names (Faker's lists), or single known names in a
        varied column.
        """
        if column.kind != "text" or not column.texts or column.mean_length > 60:
            return None
        first, last, titles = (
            vocabulary.first_names(),
            vocabulary.last_names(),
            vocabulary.name_titles(),
        )
        full, single = 0.0, 0
        for text in column.texts:
            tokens = [t.strip(".") for t in normalize(text).replace("-", " ").split()]
            tokens = [t for t in tokens if t and t not in titles]
            if len(tokens) >= 2 and not any(ch.isdigit() for ch in text):
                hits = (tokens[0] in first) + (tokens[-1] in last or tokens[-1] in first)
                full += {0: 0.0, 1: 0.75, 2: 1.0}[hits]
            elif len(tokens) == 1 and (tokens[0] in first or tokens[0] in last):
                single += 1
        n = len(column.texts)
        if full / n >= 0.6:
            share = full / n
            detail = f"{percent(share)} of values are people's full names"
            return Evidence(self.entity, 0.95 * share, detail)
        if single / n >= 0.8 and column.n_distinct >= 10:
            share = single / n
            return Evidence(
                self.entity, 0.85 * share, f"{percent(share)} of values are given or family names"
            )
        return None


PERSON = PersonRecognizer()

GENDER = VocabularyRecognizer(
    "GENDER",
    lambda: vocabulary.GENDER,
    description="genders",
    min_share=0.9,
    max_distinct=8,
    weight=0.95,
)
MARITAL_STATUS = VocabularyRecognizer(
    "MARITAL_STATUS",
    lambda: vocabulary.MARITAL_STATUS,
    description="marital statuses",
    min_share=0.8,
    max_distinct=25,
    weight=0.95,
)
LOCATION = VocabularyRecognizer(
    "LOCATION",
    vocabulary.places,
    description="places (Kenyan counties, countries, cities)",
    min_share=0.7,
    min_distinct=3,
    normalizer=normalize_place,
)
OCCUPATION = VocabularyRecognizer(
    "OCCUPATION",
    vocabulary.occupations,
    description="occupations",
    min_share=0.6,
    min_distinct=5,
    weight=0.85,
)
#: A text column with personal data inside its cells (found by ``veil.scan.text``).
FREE_TEXT = "FREE_TEXT"

#: The entities the generic recognizers find: role, column-name words (English and Swahili)
#: and whether they are searched for inside free text.
ENTITIES: tuple[Entity, ...] = (
    Entity(FREE_TEXT, "identifier", label="free text with personal data in it"),
    Entity(
        "EMAIL",
        "identifier",
        hints=(
            "email",
            "e mail",
            "mail",
            "email address",
            "barua pepe",
            "baruapepe",
        ),
        in_text=True,
        label="an e-mail address",
    ),
    Entity(
        "PHONE",
        "identifier",
        hints=(
            "phone",
            "telephone",
            "tel",
            "mobile",
            "cell",
            "cellphone",
            "msisdn",
            "phone number",
            "mobile number",
            "simu",
            "nambari ya simu",
            "namba ya simu",
            "rununu",
            "contact number",
            "whatsapp",
        ),
        in_text=True,
        context=(
            "call",
            "called",
            "ring",
            "sms",
            "text",
            "piga",
            "phone",
            "tel",
            "mobile",
            "cell",
            "simu",
            "whatsapp",
            "number",
            "on",
            "at",
            "namba",
        ),
        label="a phone number",
    ),
    Entity(
        "PERSON",
        "identifier",
        hints=(
            "name",
            "full name",
            "first name",
            "last name",
            "surname",
            "given name",
            "family name",
            "middle name",
            "firstname",
            "lastname",
            "fullname",
            "forename",
            "customer name",
            "client name",
            "patient name",
            "member name",
            "jina",
            "jina kamili",
            "majina",
            "jina la kwanza",
            "jina la mwisho",
            "next of kin",
            "beneficiary",
            "mteja",
        ),
        in_text=True,
        label="a person's name",
    ),
    Entity(
        "CREDIT_CARD",
        "identifier",
        hints=(
            "credit card",
            "card number",
            "card no",
            "cc number",
            "pan",
            "debit card",
        ),
        in_text=True,
        label="a payment card number",
    ),
    Entity(
        "IBAN",
        "identifier",
        hints=(
            "iban",
            "bank account",
            "account iban",
        ),
        in_text=True,
        label="an IBAN",
    ),
    Entity(
        "IP_ADDRESS",
        "identifier",
        hints=(
            "ip",
            "ip address",
            "ipaddress",
            "ipv4",
            "ipv6",
            "client ip",
        ),
        in_text=True,
        label="an IP address",
    ),
    Entity(
        "URL",
        "identifier",
        hints=(
            "url",
            "website",
            "web site",
            "homepage",
            "profile url",
            "link",
            "tovuti",
        ),
    ),
    Entity(
        "ADDRESS",
        "identifier",
        hints=(
            "address",
            "street",
            "street address",
            "home address",
            "postal address",
            "residence",
            "anwani",
            "makazi",
            "sanduku la posta",
        ),
    ),
    Entity(
        "POSTCODE",
        "quasi_identifier",
        hints=(
            "postcode",
            "post code",
            "postal code",
            "zip",
            "zip code",
            "zipcode",
            "postal",
            "plz",
            "postleitzahl",
            "code postal",
            "codigo postal",
            "eircode",
            "msimbo wa posta",
        ),
    ),
    Entity(
        "GENDER",
        "quasi_identifier",
        hints=(
            "gender",
            "sex",
            "female",
            "male",
            "is female",
            "is male",
            "jinsia",
        ),
    ),
    Entity(
        "LOCATION",
        "quasi_identifier",
        hints=(
            "county",
            "city",
            "town",
            "country",
            "region",
            "location",
            "district",
            "province",
            "state",
            "village",
            "ward",
            "constituency",
            "sub county",
            "residence county",
            "south",
            "north",
            "northeast",
            "midwest",
            "smsa",
            "msa",
            "metro",
            "urban",
            "rural",
            "fips",
            "state fips",
            "state fips code",
            "region code",
            "kaunti",
            "mji",
            "mahali",
            "eneo",
            "kijiji",
            "nchi",
            "place of birth",
            "birthplace",
            "native country",
        ),
    ),
    Entity(
        "MARITAL_STATUS",
        "quasi_identifier",
        hints=(
            "marital",
            "marital status",
            "maritl",
            "marstat",
            "mstatus",
            "married",
            "is married",
            "years married",
            "marriage duration",
            "spouse",
            "civil status",
            "hali ya ndoa",
            "ndoa",
        ),
    ),
    Entity(
        "OCCUPATION",
        "quasi_identifier",
        hints=(
            "occupation",
            "occ",
            "job",
            "job title",
            "job class",
            "jobclass",
            "profession",
            "employment",
            "employment status",
            "employed",
            "self employed",
            "selfemp",
            "rank",
            "academic rank",
            "employer",
            "employer name",
            "workplace",
            "place of work",
            "discipline",
            "wrkstat",
            "work status",
            "labor force",
            "labour force",
            "student",
            "is student",
            "workclass",
            "class of worker",
            "position",
            "industry",
            "sector",
            "kazi",
            "ajira",
            "taaluma",
        ),
    ),
)

HOUSEHOLD = Entity(
    "HOUSEHOLD",
    "quasi_identifier",
    label="the size of a household or the number of children or dependants",
    hints=(
        "family",
        "family size",
        "household",
        "household size",
        "hhsize",
        "hh size",
        "persons in household",
        "household members",
        "children",
        "number of children",
        "no of children",
        "kids",
        "youngkids",
        "young kids",
        "oldkids",
        "old kids",
        "dependents",
        "dependants",
        "no of dependents",
        "no of dependants",
        "number of dependents",
        "numdep",
        "num dep",
        "watoto",
        "wategemezi",
        "idadi ya watoto",
    ),
)
NATIONALITY = Entity(
    "NATIONALITY",
    "quasi_identifier",
    label="a citizenship or country of birth",
    hints=(
        "citizen",
        "citizenship",
        "nationality",
        "country of birth",
        "birthplace",
        "birth country",
        "native country",
        "immigrant",
        "foreign born",
        "uraia",
        "utaifa",
    ),
)
BODY = Entity(
    "BODY",
    "quasi_identifier",
    label="a body measurement (height, weight), which others see",
    hints=(
        "height",
        "weight",
        "body weight",
        "stature",
        "height cm",
        "weight kg",
        "height m",
        "uzito",
        "urefu",
    ),
)
ENTITIES = (*ENTITIES, HOUSEHOLD, NATIONALITY, BODY)

#: Value patterns, asked first (countries' patterns follow them).
PATTERNS = (EMAIL, PHONE, NUMERIC_PHONE, URL, IP_ADDRESS, CREDIT_CARD, IBAN)
#: Asked after the countries' patterns.
VOCABULARIES = (ADDRESS, PERSON, GENDER, MARITAL_STATUS, LOCATION, OCCUPATION)
