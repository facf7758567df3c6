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
     "mwanamume", "mwanaume", "mwanamke", "kiume", "kike", "me", "ke",
     "weiblich", "männlich", "mannlich", "maennlich", "divers", "w", "d", "frau", "herr",
     "homme", "femme", "masculin", "féminin", "feminin", "h"}
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


@cache
def text_places() -> frozenset[str]:
    """Places searched for inside free text: the countries' own gazetteers (Kenya's counties
    and provinces), major world cities and country names. Narrower than ``places``: the city
    lists of every Faker locale hold words a sentence uses otherwise ("Est", "Quam", "Man")."""
    from veil.scan.recognizers.countries import country_places

    words = set(country_places()) | set(WORLD_CITIES)
    for locale in ("en_US", "en_GB"):  # English names (other locales' lists hold
        module = importlib.import_module(f"faker.providers.address.{locale}")  # "Man", "Quam")
        words.update(w for w in getattr(module.Provider, "countries", ()) if isinstance(w, str))
    return frozenset(normalize_place(w) for w in words) - {""}


#: Capitalized words that are not people's names in a note even when some locale has them as
#: one ("Call", "Will", "May", "Grace period", "Doctor"): English function words and the words
#: of business, clinical and Swahili notes that Faker's lists also hold.
#: A name after a title ("Mr Will Long") is still found; these only stop guesses.
NOT_NAMES_IN_TEXT = frozenset(
    {"call", "called", "calls", "sent", "send", "said", "says", "dear", "hi", "hello", "thanks",
     "thank", "please", "note", "notes", "client", "customer", "patient", "member", "agent",
     "doctor", "nurse", "clinic", "hospital", "office", "branch", "bank", "policy", "claim",
     "claims", "premium", "payment", "paid", "pay", "amount", "balance", "account", "invoice",
     "statement", "renewal", "review", "reviewed", "approved", "pending", "rejected", "closed",
     "open", "new", "old", "long", "short", "high", "low", "well", "good", "fine", "ok", "okay",
     "grace", "hope", "faith", "joy", "mark", "bill", "will", "may", "june", "july", "august",
     "april", "march", "january", "february", "september", "october", "november", "december",
     "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today",
     "tomorrow", "yesterday", "week", "month", "year", "day", "morning", "evening", "night",
     "follow", "followup", "visit", "visited", "meeting", "met", "spoke", "asked", "told",
     "emailed", "phoned", "texted", "left", "message", "voicemail", "urgent", "update",
     "updated", "kenya", "nairobi", "africa", "east", "west", "north", "south", "central",
     "road", "street", "avenue", "house", "home", "work", "school", "church", "mosque",
     "rose", "daisy", "lily", "iris", "ivy", "violet", "summer", "autumn", "winter", "spring",
     "king", "queen", "prince", "major", "general", "judge", "bishop", "pastor", "father",
     "mother", "brother", "sister", "son", "daughter", "wife", "husband", "baby", "child",
     "christian", "muslim", "hindu", "english", "french", "german", "british", "american",
     "black", "white", "brown", "green", "gray", "grey", "young", "little", "big", "best",
     "case", "file", "form", "card", "cash", "check", "cheque", "loan", "debt", "fee", "tax",
     "rate", "price", "cost", "total", "number", "ref", "reference", "id", "no", "yes",
     "habari", "asante", "sana", "mteja", "mgonjwa", "daktari", "leo", "kesho", "jana",
     "tafadhali", "pesa", "malipo", "benki", "ofisi", "hospitali", "na", "ya", "wa", "kwa",
     "ni", "si", "au", "lakini", "pia", "bado", "sasa", "baada", "kabla"}
) | frozenset(
    {"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
     "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
     "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during",
     "each", "even", "ever", "every", "few", "for", "from", "further", "get", "got", "had",
     "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his",
     "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "last", "least",
     "less", "let", "like", "made", "make", "many", "me", "more", "most", "much", "must", "my",
     "myself", "near", "neither", "never", "next", "nor", "not", "now", "of", "off", "often",
     "on", "once", "one", "only", "or", "other", "our", "ours", "ourselves", "out", "over",
     "own", "per", "perhaps", "rather", "same", "she", "should", "since", "so", "some",
     "still", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
     "there", "these", "they", "this", "those", "though", "through", "thus", "to", "too",
     "under", "until", "up", "upon", "us", "very", "via", "was", "we", "were", "what", "when",
     "where", "whether", "which", "while", "who", "whom", "whose", "why", "with", "within",
     "without", "would", "yet", "you", "your", "yours", "yourself", "yourselves"}
)  # fmt: skip

#: Words after which a capitalized known name is a person ("Call Carrie", "Dear John",
#: "spoke to Amina", "Mteja Otieno").
NAME_CUES = frozenset(
    {"call", "called", "calling", "phone", "phoned", "ring", "rang", "text", "texted", "email",
     "emailed", "dear", "hi", "hello", "hey", "thanks", "thank", "cc", "attn", "attention",
     "to", "with", "from", "by", "for", "met", "meet", "asked", "told", "informed", "contacted",
     "contact", "visited", "saw", "see", "per", "signed", "patient", "client", "customer",
     "member", "caller", "claimant", "insured", "beneficiary", "spouse", "wife", "husband",
     "son", "daughter", "mother", "father", "brother", "sister", "kin", "agent", "nurse",
     "doctor", "officer", "manager", "and", "name", "named", "habari", "mpendwa", "mteja",
     "mgonjwa", "mke", "mume", "mtoto", "kwa", "na"}
)  # fmt: skip

#: Titles before a name: whatever capitalized words follow are a person ("Mr Otieno").
NAME_TITLES_IN_TEXT = frozenset(
    {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "madam", "dame",
     "lord", "lady", "rev", "fr", "sr", "hon", "bwana", "bi", "mzee", "mama", "baba",
     "daktari", "ndugu", "dada", "kaka", "herr", "frau", "mme", "mlle", "sra"}
)  # fmt: skip

#: Words after a name that make it a place or an institution named after a person ("Kenyatta
#: Hospital", "Moi Avenue", "Aga Khan University").
NAMED_AFTER = frozenset(
    {"hospital", "university", "college", "school", "academy", "road", "street", "avenue",
     "drive", "lane", "highway", "airport", "stadium", "station", "market", "estate", "hall",
     "house", "building", "centre", "center", "foundation", "institute", "memorial", "park",
     "bridge", "clinic", "church", "mosque", "cathedral", "county", "city", "town", "river",
     "lake", "mountain", "mount", "group", "limited", "ltd", "inc", "plc", "bank", "sacco"}
)  # fmt: skip

#: Health states, vital signs and the instruments that read them, as clinical tables write them
#: (a patient's status "Well", "Tired"; a reading "HR", "SpO2"; a "Pulse oximeter").
HEALTH_STATUS = frozenset(
    normalize(w) for w in
    {"well", "unwell", "tired", "fatigue", "fatigued", "anxious", "anxiety", "allergy",
     "allergic", "sick", "ill", "fever", "feverish", "febrile", "afebrile", "stable",
     "critical", "serious", "recovering", "recovered", "improving", "deteriorating",
     "admitted", "discharged", "deceased", "dead", "alive", "icu", "in pain", "pain",
     "nausea", "dizzy", "dizziness", "headache", "cough", "breathless", "vomiting",
     "diarrhoea", "diarrhea", "hr", "heart rate", "pulse", "spo2", "sp02", "oxygen saturation",
     "temperature", "temp", "bp", "blood pressure", "systolic", "diastolic",
     "respiratory rate", "rr", "glucose", "blood glucose", "weight", "bmi",
     "pulse oximeter", "oximeter", "thermometer", "sphygmomanometer", "glucometer",
     "blood pressure monitor", "ecg", "ekg", "stethoscope", "positive", "negative",
     "reactive", "non-reactive", "smoker", "non-smoker", "ex-smoker", "mgonjwa", "mzima",
     "homa", "uchovu", "maumivu"}
)  # fmt: skip

RELIGIONS = frozenset(
    normalize(w) for w in
    {"christian", "christianity", "catholic", "roman catholic", "protestant", "anglican",
     "pentecostal", "evangelical", "methodist", "presbyterian", "lutheran", "baptist",
     "adventist", "seventh-day adventist", "orthodox", "muslim", "islam", "sunni", "shia",
     "ahmadiyya", "hindu", "hinduism", "sikh", "buddhist", "buddhism", "jewish", "judaism",
     "jain", "bahai", "baha'i", "atheist", "agnostic", "no religion", "none", "other",
     "evangelisch", "katholisch", "römisch-katholisch", "roemisch-katholisch",
     "konfessionslos", "muslimisch", "jüdisch", "juedisch", "catholique",
     "protestante", "musulman", "musulmane", "juif", "juive", "sans religion",
     "traditionalist", "african traditional", "mkristo", "mwislamu", "muislamu"}
)  # fmt: skip

ETHNICITIES = frozenset(
    normalize(w) for w in
    {"white", "black", "asian", "asian-pac-islander", "amer-indian-eskimo", "other",
     "hispanic", "latino", "latina", "african american", "black or african american",
     "american indian", "alaska native", "native hawaiian", "pacific islander", "mixed",
     "multiracial", "caucasian", "arab", "indian", "pakistani", "bangladeshi", "chinese",
     "kikuyu", "luhya", "kalenjin", "luo", "kamba", "somali", "kisii", "mijikenda", "meru",
     "maasai", "turkana", "embu", "taita", "teso", "pokot", "samburu", "kuria", "borana"}
)  # fmt: skip

SEXUAL_ORIENTATIONS = frozenset(
    normalize(w) for w in
    {"heterosexual", "straight", "homosexual", "gay", "lesbian", "bisexual", "pansexual",
     "asexual", "queer", "questioning", "other", "prefer not to say"}
)  # fmt: skip

#: Departments and units of an employer (IBM HR's "Research & Development" among them).
DEPARTMENTS = frozenset(
    normalize(w) for w in
    {"sales", "research & development", "research and development", "r&d", "r & d",
     "human resources", "hr", "finance", "accounting", "accounts", "marketing", "it",
     "information technology", "operations", "legal", "engineering", "procurement",
     "customer service", "customer care", "administration", "admin", "logistics",
     "production", "manufacturing", "quality assurance", "security", "facilities",
     "compliance", "risk", "audit", "internal audit", "claims", "underwriting", "actuarial",
     "product", "design", "support", "strategy", "communications", "public relations",
     "training", "purchasing", "management", "executive"}
)  # fmt: skip

#: Levels and fields of education (IBM HR's EducationField, UCI adult's education among them).
EDUCATION = frozenset(
    normalize(w) for w in
    {"life sciences", "medical", "marketing", "technical degree", "human resources", "other",
     "bachelors", "bachelor", "masters", "master", "doctorate", "phd", "hs-grad",
     "high school", "secondary", "primary", "some-college", "college", "assoc-voc",
     "assoc-acdm", "prof-school", "diploma", "certificate", "degree", "undergraduate",
     "postgraduate", "none", "11th", "10th", "9th", "7th-8th", "12th", "5th-6th", "1st-4th",
     "preschool", "engineering", "computer science", "economics", "business",
     "business administration", "law", "education", "nursing", "medicine", "arts",
     "humanities", "social sciences", "science", "mathematics", "kcse", "kcpe"}
)  # fmt: skip
