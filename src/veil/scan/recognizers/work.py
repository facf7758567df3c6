"""What an employer or a school knows of a person: the quasi-identifiers an insider links on
(department, field and level of education, years of tenure and experience) and the HR
judgements that are sensitive (performance ratings, whether the person left or was let go).
In IBM's HR table, age, role, department, education field and years at the company single
out most employees; PerformanceRating and Attrition are what they would not want known.
"""

from __future__ import annotations

from veil.scan.recognizers import vocabulary
from veil.scan.recognizers.base import Entity, VocabularyRecognizer

DEPARTMENT = VocabularyRecognizer(
    "DEPARTMENT",
    lambda: vocabulary.DEPARTMENTS,
    description="departments",
    min_share=0.7,
    min_distinct=2,
    max_distinct=200,
    weight=0.8,
)
EDUCATION = VocabularyRecognizer(
    "EDUCATION",
    lambda: vocabulary.EDUCATION,
    description="fields or levels of education",
    min_share=0.7,
    min_distinct=3,
    max_distinct=200,
    weight=0.8,
)

#: The employment entities: quasi-identifiers, and HR judgements (sensitive).
ENTITIES: tuple[Entity, ...] = (
    Entity(
        "DEPARTMENT",
        "quasi_identifier",
        label="a department",
        hints=("department", "dept", "division", "business unit", "idara"),
    ),
    Entity(
        "EDUCATION",
        "quasi_identifier",
        label="education",
        hints=(
            "education",
            "educ",
            "edu",
            "schooling",
            "years of schooling",
            "degree",
            "grade",
            "school grade",
            "years college",
            "college",
            "education years",
            "education field",
            "education level",
            "field of study",
            "major",
            "degree",
            "qualification",
            "highest qualification",
            "school level",
            "elimu",
            "kiwango cha elimu",
        ),
    ),
    Entity(
        "TENURE",
        "quasi_identifier",
        label="years of tenure or experience",
        hints=(
            "tenure",
            "years at company",
            "total working years",
            "years in current role",
            "years of service",
            "length of service",
            "service years",
            "seniority",
            "experience",
            "exper",
            "years experience",
            "years of experience",
            "yrs service",
            "yrs since phd",
            "years since phd",
            "yrs experience",
            "work experience",
            "experience years",
            "years employed",
            "employment length",
            "time in role",
            "months at company",
            "miaka ya kazi",
            "uzoefu",
        ),
    ),
    Entity(
        "EMPLOYMENT_RECORD",
        "sensitive",
        label="an HR judgement",
        hints=(
            "performance rating",
            "performance score",
            "performance",
            "appraisal",
            "appraisal score",
            "attrition",
            "terminated",
            "termination",
            "termination reason",
            "dismissed",
            "dismissal",
            "resigned",
            "resignation",
            "disciplinary",
            "disciplinary action",
            "warning letter",
            "grievance",
            "left company",
            "exit reason",
            "fired",
        ),
    ),
)

RECOGNIZERS = (DEPARTMENT, EDUCATION)
