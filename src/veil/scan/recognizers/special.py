"""Special categories of personal data (GDPR art. 9 and 10, Kenya's Data Protection Act s. 2
"sensitive personal data"): health, genetic and biometric data, racial or ethnic origin,
religious or philosophical belief, political opinion, trade-union membership, sex life and
sexual orientation, criminal records; and a person's financial situation. Found by meaning: the
column-name words of each (English, the abbreviations of clinical tables, Swahili) and, where
the values say it, their vocabularies. Every one is ``sensitive``, except racial or ethnic
origin, which is both: an attacker sees or knows it, so it is a quasi-identifier, generalized
with the others (and still listed as a special category).

A clinical table names its columns tersely (heart-disease data: ``cp``, ``trestbps``, ``chol``,
``thalach``, ``oldpeak``, ``ca``, ``target``): the unambiguous abbreviations are hints
anywhere, the ambiguous ones (``slope``, ``ca``, ``hr``, ``status``) and a model's ``target``
only in a table that is health data (``table_hints``; ``veil.scan`` decides that).
"""

from __future__ import annotations

from veil.scan.recognizers import vocabulary
from veil.scan.recognizers.base import Entity, Pattern, PatternRecognizer, VocabularyRecognizer

HEALTH = VocabularyRecognizer(
    "HEALTH",
    lambda: vocabulary.HEALTH | vocabulary.HEALTH_STATUS,
    description="diagnoses, health states or clinical measures",
    min_share=0.6,
    weight=0.9,
)
ICD10 = PatternRecognizer(
    "HEALTH",
    [Pattern("icd-10", r"[A-TV-Z]\d[0-9AB](?:\.[0-9A-TV-Z]{1,4})?", 0.7)],
    description="ICD-10 diagnosis codes",
    min_share=0.8,
)
RELIGION = VocabularyRecognizer(
    "RELIGION",
    lambda: vocabulary.RELIGIONS,
    description="religions",
    min_share=0.7,
    min_distinct=2,
    weight=0.9,
)
ETHNICITY = VocabularyRecognizer(
    "ETHNICITY",
    lambda: vocabulary.ETHNICITIES,
    description="races or ethnic groups",
    min_share=0.7,
    min_distinct=3,
    weight=0.85,
)
SEXUAL_ORIENTATION = VocabularyRecognizer(
    "SEXUAL_ORIENTATION",
    lambda: vocabulary.SEXUAL_ORIENTATIONS,
    description="sexual orientations",
    min_share=0.8,
    min_distinct=2,
    weight=0.95,
)

#: Clinical words a column name may be anywhere (English, abbreviations, Swahili).
_CLINICAL = (
    "diagnosis", "illness", "disease", "condition", "medical condition", "health",
    "illness category", "diagnosis code", "icd", "icd10", "icd 10", "ailment", "symptom",
    "symptoms", "medication", "medications", "prescription", "drug", "dosage", "allergy",
    "allergies", "disability", "pregnancy", "pregnant", "smoker", "smoking", "alcohol",
    "vaccination", "vaccinated", "hiv", "hiv status", "covid", "blood pressure", "bp systolic",
    "systolic", "diastolic", "sbp", "dbp", "trestbps", "resting blood pressure", "chol",
    "cholesterol", "serum cholesterol", "hdl", "ldl", "triglycerides", "glucose",
    "blood glucose", "blood sugar", "fbs", "fasting blood sugar", "hba1c", "a1c", "insulin",
    "bmi", "body mass index", "spo2", "oxygen saturation", "heart rate", "pulse", "thalach",
    "max heart rate", "thal", "thalassemia", "chest pain", "chest pain type", "restecg",
    "resting ecg", "ecg", "ekg", "exang", "exercise angina", "angina", "oldpeak",
    "st depression", "temperature reading", "body temperature", "respiratory rate",
    "creatinine", "hemoglobin", "haemoglobin", "hb", "wbc", "platelets", "viral load", "cd4",
    "tumor", "tumour", "cancer", "stroke", "heart disease", "diabetes", "hypertension",
    "mental health", "depression", "anxiety", "blood type", "blood group", "ugonjwa",
    "magonjwa", "hali ya afya", "afya", "dawa", "shinikizo la damu", "sukari", "mimba",
    "ulemavu", "mapigo ya moyo", "joto la mwili", "diagnose", "befund", "krankheit",
    "erkrankung", "vorerkrankung", "medikament", "medikation", "diagnostic", "maladie",
    "pathologie", "traitement",
)  # fmt: skip
#: Words that are clinical only in a health table (a terse clinical export), and the column a
#: model predicts there (a diagnosis).
_CLINICAL_IN_A_HEALTH_TABLE = (
    "cp", "ca", "slope", "hr", "bp", "temp", "reading", "readings", "observation",
    "observations", "value", "result", "results", "status", "instrument", "device", "test",
    "measurement", "level", "score", "stage", "grade", "target", "label", "outcome", "class",
    "y", "num", "death event", "death", "died", "mortality", "readmitted", "survival",
)  # fmt: skip

#: The special categories (all ``sensitive``).
ENTITIES: tuple[Entity, ...] = (
    Entity("HEALTH", "sensitive", hints=_CLINICAL, table_hints=_CLINICAL_IN_A_HEALTH_TABLE,
           label="health data"),
    Entity("GENETIC", "sensitive", label="genetic data",
           hints=("genetic", "genotype", "dna", "gene", "genes", "brca", "genome",
                  "hereditary")),
    Entity("BIOMETRIC", "sensitive", label="biometric data",
           hints=("biometric", "biometrics", "fingerprint", "fingerprints", "face template",
                  "facial", "face id", "iris", "retina", "voiceprint", "voice print",
                  "alama za vidole")),
    # special-category data that is also a quasi-identifier: visible, recorded in registers
    # and surveys alike, so generalized like age (and listed as special category)
    Entity("ETHNICITY", "quasi_identifier", label="racial or ethnic origin",
           hints=("race", "ethnicity", "ethnic", "ethnic group", "ethnic origin", "tribe",
                  "nonwhite", "non white", "white", "black", "hispanic", "latino", "ethn",
                  "race general", "language", "lang", "mother tongue", "first language",
                  "kabila", "lugha")),
    Entity("RELIGION", "sensitive", label="religious belief",
           hints=("religion", "religious", "faith", "denomination", "belief", "beliefs",
                  "church", "dini", "imani", "konfession", "religionszugehorigkeit",
                  "glaube", "confession")),
    Entity("POLITICAL_OPINION", "sensitive", label="political opinion",
           hints=("political", "political party", "party affiliation", "political affiliation",
                  "vote", "voted", "voting intention", "chama cha siasa")),
    Entity("TRADE_UNION", "sensitive", label="trade-union membership",
           hints=("union", "trade union", "union member", "union membership",
                  "chama cha wafanyakazi")),
    Entity("SEXUAL_ORIENTATION", "sensitive", label="sex life or sexual orientation",
           hints=("sexual orientation", "sexuality", "sex life", "lgbt",
                  "lgbtq")),
    Entity("CRIMINAL_RECORD", "sensitive", label="criminal records",
           hints=("criminal", "criminal record", "conviction", "convictions", "convicted",
                  "offence", "offense", "offences", "arrest", "arrests", "police record",
                  "charges", "sentence", "prison", "jail", "parole", "probation",
                  "rekodi ya uhalifu", "uhalifu")),
    Entity("FINANCIAL", "sensitive", label="financial situation",
           hints=("credit score", "credit rating", "debt", "debts", "arrears", "default",
                  "defaulted", "loan default", "bankruptcy", "bankrupt", "insolvency",
                  "credit history", "net worth", "savings", "overdraft", "deni", "madeni",
                  "mkopo", "account balance", "capital gain", "capital loss", "kontostand",
                  "schulden", "solde")),
)  # fmt: skip

RECOGNIZERS = (HEALTH, ICD10, RELIGION, ETHNICITY, SEXUAL_ORIENTATION)
