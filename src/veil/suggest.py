"""How a suggested policy treats each column the scan calls an identifier (or free text):
keys that other tables join on (national IDs, KRA PINs, customer numbers) pseudonymized,
with their shape kept where they have one; row numbers, contact details, names, cards and
accounts dropped; free text redacted. Quasi-identifiers get no step: the search generalizes
them over the hierarchies veil builds (``veil.privacy.suggest`` writes the whole policy);
the few values of one (or of a sensitive column) that hold a direct identifier are redacted
first.
"""

from __future__ import annotations

from typing import Any

from veil.scan import ColumnFinding
from veil.scan.recognizers import ENTITY_INFO
from veil.scan.recognizers.generic import FREE_TEXT
from veil.schema import ColumnRole

__all__ = ["DEFAULT_K", "SHAPED_IDS", "suggested_steps"]

DEFAULT_K = 5
# Identifiers other tables join on: pseudonymized, not dropped. Known formats keep their shape;
# bare keys get hex tokens (short keys would collide in their own shape).
SHAPED_IDS = {name for name, entity in ENTITY_INFO.items() if entity.keeps_shape}


def suggested_steps(finding: ColumnFinding, key_file: str | None = None) -> tuple[list[Any], str]:
    """The suggested steps for one column, and a note on them for the YAML comment: an
    identifier's treatment, free text's redaction; nothing for the other roles."""
    entity = finding.entity
    if finding.free_text and finding.role in (ColumnRole.IDENTIFIER, ColumnRole.INSENSITIVE):
        if finding.role is ColumnRole.IDENTIFIER:
            note = "the personal data inside each text replaced (<PHONE>, <PERSON>...)"
        else:
            note = "free text: redacted in case a name or number the sample missed is in it"
        return [{"redact": {"replace": "placeholder"}}], note
    if entity == FREE_TEXT and finding.role is ColumnRole.IDENTIFIER:  # a few values hold one
        note = "the identifiers among its values replaced (<EMAIL>...), the other values kept"
        return [{"redact": {"replace": "placeholder"}}], note
    if finding.held is not None:  # a quasi-identifier's or sensitive column's few values
        note = "the identifiers among its values replaced (<EMAIL>...), the other values kept"
        return [{"redact": {"replace": "placeholder"}}], f"{note}, before its role applies"
    if finding.role is not ColumnRole.IDENTIFIER:
        return [], ""
    key: dict[str, Any] = {} if key_file is None else {"key_file": key_file}
    if entity in SHAPED_IDS:
        return [{"pseudonymize": {"format": "preserve", **key}}], "keyed pseudonym keeps joins"
    if entity is None:
        return [{"pseudonymize": key}], "keyed pseudonym keeps joins"
    if entity == "RECORD_KEY":
        return ["drop"], "dropped: a row number says nothing and singles out every row"
    return ["drop"], "dropped: not needed for analysis"
