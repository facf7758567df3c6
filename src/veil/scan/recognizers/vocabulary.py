"""Word lists for the vocabulary recognizers, built once and cached.

Names and job titles come from Faker's providers across all its locales (en_KE and sw
included); places are Kenya's counties, Faker's country lists and real city lists, and a list
of major world cities; health terms are a diagnosis/illness vocabulary written for veil.
"""

from __future__ import annotations

import importlib
from functools import cache

from faker.config import AVAILABLE_LOCALES

from veil.scan.recognizers.normalize import normalize, normalize_place

GENDER = frozenset(
    {"male", "female", "m", "f", "man", "woman", "men", "women", "boy", "girl", "other",
     "non-binary", "nonbinary", "non binary", "intersex", "transgender", "unknown",
     "mwanamume", "mwanaume", "mwanamke", "kiume", "kike", "me", "ke"}
)  # fmt: skip

MARITAL_STATUS = frozenset(
    {"single", "married", "divorced", "widowed", "widow", "widower", "separated",
     "registered partnership", "domestic partnership", "civil partnership", "partnered",
     "engaged", "cohabiting", "never married", "never-married", "married-civ-spouse",
     "married-spouse-absent", "married-af-spouse", "de facto", "living together",
     "ameoa", "ameolewa", "hajaoa", "hajaolewa", "mjane", "mgane", "ametalikiwa"}
)  # fmt: skip

HEALTH = frozenset(
    {"chronic", "acute", "subacute", "sub-acute", "congenital", "terminal", "infectious",
     "diabetes", "type 1 diabetes", "type 2 diabetes", "hypertension", "high blood pressure",
     "asthma", "copd", "malaria", "hiv", "hiv/aids", "aids", "tuberculosis", "tb", "cancer",
     "breast cancer", "prostate cancer", "cervical cancer", "lung cancer", "leukemia",
     "lymphoma", "stroke", "heart disease", "coronary artery disease", "heart failure",
     "arrhythmia", "epilepsy", "depression", "anxiety", "schizophrenia", "bipolar disorder",
     "dementia", "alzheimer's disease", "parkinson's disease", "multiple sclerosis",
     "arthritis", "rheumatoid arthritis", "osteoarthritis", "osteoporosis", "obesity",
     "kidney disease", "chronic kidney disease", "renal failure", "liver disease",
     "hepatitis", "hepatitis b", "hepatitis c", "cirrhosis", "pneumonia", "influenza",
     "covid-19", "covid", "typhoid", "cholera", "measles", "sickle cell", "sickle cell anaemia",
     "sickle cell anemia", "anaemia", "anemia", "ulcer", "peptic ulcer", "gastritis",
     "migraine", "glaucoma", "cataract", "eczema", "psoriasis", "allergy", "fracture",
     "injury", "pregnancy", "maternity", "autism", "adhd", "dengue", "ebola",
     "brucellosis", "bilharzia", "schistosomiasis", "trachoma", "kwashiorkor", "malnutrition",
     "healthy", "no disease", "none", "presence", "absence", "angina", "typical angina",
     "atypical angina", "non-anginal pain", "asymptomatic", "kisukari", "shinikizo la damu",
     "pumu", "kifua kikuu", "saratani", "ukimwi"}
)  # fmt: skip

# Major cities, Africa first; Faker's real city lists are added below.
WORLD_CITIES = (
    "Nairobi", "Mombasa", "Kisumu", "Nakuru", "Eldoret", "Thika", "Malindi", "Kitale",
    "Garissa", "Nyeri", "Machakos", "Meru", "Naivasha", "Kericho", "Lamu", "Kampala",
    "Entebbe", "Jinja", "Gulu", "Dar es Salaam", "Dodoma", "Arusha", "Mwanza", "Zanzibar",
    "Kigali", "Bujumbura", "Addis Ababa", "Mogadishu", "Juba", "Khartoum", "Cairo",
    "Alexandria", "Lagos", "Abuja", "Kano", "Ibadan", "Accra", "Kumasi", "Dakar", "Abidjan",
    "Bamako", "Niamey", "Ouagadougou", "Conakry", "Freetown", "Monrovia", "Lomé", "Cotonou",
    "Douala", "Yaoundé", "Kinshasa", "Lubumbashi", "Brazzaville", "Luanda", "Lusaka",
    "Harare", "Bulawayo", "Lilongwe", "Blantyre", "Maputo", "Johannesburg", "Cape Town",
    "Durban", "Pretoria", "Port Elizabeth", "Gaborone", "Windhoek", "Antananarivo",
    "Port Louis", "Tunis", "Algiers", "Casablanca", "Rabat", "Marrakesh", "Tripoli",
    "London", "Manchester", "Birmingham", "Liverpool", "Leeds", "Glasgow", "Edinburgh",
    "Cardiff", "Belfast", "Bristol", "Dublin", "Paris", "Lyon", "Marseille", "Berlin",
    "Hamburg", "Munich", "Frankfurt", "Cologne", "Vienna", "Zurich", "Geneva", "Brussels",
    "Amsterdam", "Rotterdam", "Copenhagen", "Stockholm", "Oslo", "Helsinki", "Madrid",
    "Barcelona", "Lisbon", "Porto", "Rome", "Milan", "Naples", "Athens", "Warsaw",
    "Krakow", "Prague", "Budapest", "Bucharest", "Sofia", "Belgrade", "Zagreb", "Kyiv",
    "Moscow", "Saint Petersburg", "Istanbul", "Ankara", "New York", "Los Angeles",
    "Chicago", "Houston", "Phoenix", "Philadelphia", "San Antonio", "San Diego", "Dallas",
    "San Jose", "Austin", "Boston", "Seattle", "Denver", "Washington", "Atlanta", "Miami",
    "Detroit", "Minneapolis", "San Francisco", "Toronto", "Montreal", "Vancouver",
    "Calgary", "Ottawa", "Mexico City", "Guadalajara", "Monterrey", "Havana", "Bogotá",
    "Medellín", "Lima", "Santiago", "Buenos Aires", "São Paulo", "Rio de Janeiro",
    "Brasília", "Caracas", "Quito", "Montevideo", "Dubai", "Abu Dhabi", "Doha", "Riyadh",
    "Jeddah", "Tehran", "Baghdad", "Beirut", "Amman", "Jerusalem", "Tel Aviv", "Karachi",
    "Lahore", "Islamabad", "Delhi", "New Delhi", "Mumbai", "Bangalore", "Bengaluru",
    "Chennai", "Kolkata", "Hyderabad", "Pune", "Ahmedabad", "Dhaka", "Kathmandu", "Colombo",
    "Bangkok", "Hanoi", "Ho Chi Minh City", "Kuala Lumpur", "Singapore", "Jakarta",
    "Manila", "Beijing", "Shanghai", "Shenzhen", "Guangzhou", "Hong Kong", "Taipei",
    "Seoul", "Busan", "Tokyo", "Osaka", "Kyoto", "Sydney", "Melbourne", "Brisbane", "Perth",
    "Adelaide", "Auckland", "Wellington",
)  # fmt: skip


def _provider_lists(kind: str, attributes: tuple[str, ...]) -> set[str]:
    words: set[str] = set()
    for locale in AVAILABLE_LOCALES:
        try:
            module = importlib.import_module(f"faker.providers.{kind}.{locale}")
        except ImportError:
            continue
        provider = getattr(module, "Provider", None)
        for attribute in attributes:
            values = getattr(provider, attribute, None)
            if isinstance(values, dict):  # weighted lists: {name: weight}
                values = list(values)
            if isinstance(values, list | tuple):
                words.update(normalize(v) for v in values if isinstance(v, str))
    words.discard("")
    return words


@cache
def first_names() -> frozenset[str]:
    return frozenset(
        _provider_lists("person", ("first_names", "first_names_female", "first_names_male"))
    )


@cache
def last_names() -> frozenset[str]:
    return frozenset(_provider_lists("person", ("last_names",)))


@cache
def name_titles() -> frozenset[str]:
    words = _provider_lists(
        "person",
        (
            "prefixes",
            "prefixes_female",
            "prefixes_male",
            "suffixes",
            "suffixes_female",
            "suffixes_male",
        ),
    )
    return frozenset(w.rstrip(".") for w in words) | {"mr", "mrs", "ms", "miss", "dr", "prof"}


@cache
def occupations() -> frozenset[str]:
    return frozenset(_provider_lists("job", ("jobs",)))


@cache
def places() -> frozenset[str]:
    from veil.scan.recognizers.countries import country_places  # their own place names

    words = set(country_places()) | set(WORLD_CITIES)
    # real lists only: Faker's en_US "cities" are invented ("Lake Marytown"), its countries
    # and the city lists of many locales (de_DE, en_IN, fr_FR...) are real
    words |= _provider_lists("address", ("countries", "cities", "city_names", "states"))
    return frozenset(normalize_place(w) for w in words) - {""}
