"""Redaction of free text: each entity replaced, the rest of the sentence kept, the count in
the certificate; and the search it uses, on labelled notes (tests/data/free_text_notes.csv)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import TEST_KEY
from veil.exceptions import ParameterError, PolicyError
from veil.policy import Policy
from veil.privacy import anonymize
from veil.scan.text import find_entities
from veil.transforms import Redact

NOTES = Path(__file__).parents[1] / "data" / "free_text_notes.csv"


def labelled() -> list[tuple[str, set[tuple[str, str]]]]:
    with NOTES.open(encoding="utf-8") as fh:
        return [
            (row["note"], {tuple(e.split(":", 1)) for e in row["entities"].split("|") if e})
            for row in csv.DictReader(fh)
        ]  # type: ignore[misc]


def test_every_labelled_entity_is_found_and_nothing_else() -> None:
    # the development set: each rule of veil.scan.text has a case here, and a trap beside it
    # ("Grace period", "Will call back", "Long Beach office", "Kenyatta hospital", a date)
    rows = labelled()
    assert sum(len(want) for _, want in rows) >= 30
    assert sum(not want for _, want in rows) >= 15
    for note, want in rows:
        found = {(s.entity, note[s.start : s.end]) for s in find_entities(note)}
        assert found == want, note


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "notes": [
                "Call Carrie on +1-875-988-3835 about the renewal",
                "Sent statement to enjenga@example.org",
                None,
                "Call Carrie on +1-875-988-3835 about the renewal",
                "Premium paid via M-Pesa, receipt attached.",
            ],
            "n": range(5),
        }
    )


def test_placeholders_keep_the_sentence_and_count_what_they_replaced() -> None:
    redact = Redact("notes")
    out = redact.fit_transform(frame())
    assert out["notes"].tolist()[:2] == [
        "Call <PERSON> on <PHONE> about the renewal",
        "Sent statement to <EMAIL>",
    ]
    assert pd.isna(out["notes"].iloc[2])
    assert out["notes"].iloc[4] == "Premium paid via M-Pesa, receipt attached."
    assert redact.counts_ == {"EMAIL": 1, "PERSON": 2, "PHONE": 2}
    assert redact.cells_changed_ == 3
    assert "5 entities replaced in 3 cells" in redact.describe()


def test_a_date_with_dots_is_a_date_not_the_phone_number_inside_it() -> None:
    """``08.1946``, inside ``22.08.1946``, is a number a phone plan allows: it was replaced as
    a phone, leaving ``22.`` and no date. The phone beside it is still one."""
    notes = pd.DataFrame({"notes": ["Born 22.08.1946 in Nyeri, call 0712 345 678"]})
    out = Redact("notes").fit_transform(notes)
    assert out["notes"].iloc[0] == "Born <DATE> in <LOCATION>, call <PHONE>"
    assert not find_entities("born 22.08.1946")  # no phone number in it


def test_a_number_joined_to_another_is_part_of_it_not_a_phone_number() -> None:
    """A phone plan allows the ``03-08 15`` of a time stamp, the ``06-814888`` of an ISBN and
    the ``08.515203`` of a time's fraction: each was found as a phone number. A hit must not
    be joined by a hyphen or a dot to another number (or follow a colon); a port after an IP
    address is no part of it, and phone numbers side by side are each one."""
    for code in ("2023-03-08 15:47:35.136819", "ISBN 978-1-06-814888-0", "at 23:46:08.515203"):
        assert not find_entities(code), code
    found = find_entities("host 10.0.0.1:8080, tel 0722000111/0733000222.")
    assert [(e.entity, e.start, e.end) for e in found] == [
        ("IP_ADDRESS", 5, 13),
        ("PHONE", 24, 34),
        ("PHONE", 35, 45),
    ]


def test_pseudonyms_are_keyed_and_stable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_KEY", TEST_KEY)
    first = Redact("notes", replace="pseudonym").fit_transform(frame())["notes"]
    assert first.iloc[0] == first.iloc[3]  # the same person and number, the same tokens
    assert first.iloc[0].startswith("Call <PERSON_")
    assert "Carrie" not in first.iloc[0]
    assert "875" not in first.iloc[0]
    monkeypatch.setenv("VEIL_KEY", "f" * 64)
    other = Redact("notes", replace="pseudonym").fit_transform(frame())["notes"]
    assert other.iloc[0] != first.iloc[0]  # another key, other tokens
    monkeypatch.delenv("VEIL_KEY")
    with pytest.raises(Exception, match="VEIL_KEY"):
        Redact("notes", replace="pseudonym").fit(frame())


def test_fakes_are_of_the_same_kind() -> None:
    out = Redact("notes", replace="fake", random_state=0).fit_transform(frame())["notes"]
    assert "Carrie" not in out.iloc[0]
    assert "enjenga" not in out.iloc[1]
    assert out.iloc[0] == out.iloc[3]  # one original, one fake
    kinds = {s.entity for s in find_entities(out.iloc[1])}
    assert kinds == {"EMAIL"}


def test_entities_limit_the_search_and_unknown_ones_are_refused() -> None:
    out = Redact("notes", entities=["EMAIL"]).fit_transform(frame())["notes"]
    assert out.iloc[0] == frame()["notes"].iloc[0]
    assert out.iloc[1] == "Sent statement to <EMAIL>"
    with pytest.raises(ParameterError, match="entities must be among"):
        Redact("notes", entities=["PASSPORT_XX"]).check_parameters()
    with pytest.raises(PolicyError, match=r"columns\.notes\.steps\[0\] \(redact\)"):
        Policy.from_dict(
            {
                "columns": {
                    "notes": {"role": "identifier", "steps": [{"redact": {"replace": "blank"}}]}
                }
            }
        )


def test_the_certificate_counts_the_redacted_entities() -> None:
    policy = {
        "version": 1,
        "columns": {
            "notes": {"role": "identifier", "steps": ["redact"]},
            "n": {"role": "insensitive"},
        },
    }
    release = anonymize(frame(), policy)
    (record,) = [s for s in release.certificate.steps if s.name == "redact"]
    assert record.counts == {"EMAIL": 1, "PERSON": 2, "PHONE": 2}
    assert release.certificate.to_dict()["steps"][0]["counts"] == record.counts
    assert any("redacted" in line and "notes" in line for line in release.certificate.summary())


def test_free_text_declared_harmless_is_refused_when_it_holds_personal_data() -> None:
    notes = [f"Claim {i} reviewed; call back on 07{22000000 + i} tomorrow." for i in range(40)]
    data = pd.DataFrame({"notes": notes})
    with pytest.raises(PolicyError, match="FREE_TEXT.*redact"):
        anonymize(data, {"version": 1, "columns": {"notes": {"role": "insensitive"}}})


def test_a_column_of_identifiers_is_not_free_text_and_is_refused() -> None:
    # redaction keeps what it does not recognize: a names column needs drop, pseudonymize...
    names = pd.DataFrame({"name": [f"Xq{i} Zorblat" for i in range(50)]})
    with pytest.raises(ParameterError, match="'name' holds a person's name in its cells, not free"):
        Redact("name").fit(names)
    phones = pd.DataFrame({"phone": [f"07{22000000 + i}" for i in range(50)]})
    with pytest.raises(ParameterError, match="'phone' holds a phone number"):
        Redact("phone").fit(phones)
