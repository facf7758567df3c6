"""The policy section: what was done to each column and by the privacy search."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from veil.privacy.certificate import Certificate
from veil.report.model import Section, Table
from veil.report.sections._common import Inputs, column_steps
from veil.transforms.redact import PLACEHOLDER


def _redacted(cert: Certificate, data: pd.DataFrame) -> Table | None:
    """Per redacted column: the entities replaced inside its texts, and one released text
    that shows how (a placeholder or pseudonym in place of each; never an original value)."""
    rows = []
    for step in cert.steps:
        if step.name != "redact" or not step.where.startswith("columns."):
            continue
        column = step.where.removeprefix("columns.").rsplit(".steps[", 1)[0]
        counts = step.counts or {}
        example = ""
        if column in data.columns:
            texts = data[column].dropna().astype(str)
            marked = texts[texts.str.contains(PLACEHOLDER)].unique()
            # the text with the most replacements (then the first in order): the same whatever
            # the order of the rows
            if len(marked):
                example = min(marked, key=lambda t: (-len(PLACEHOLDER.findall(t)), t))
        kinds = ", ".join(f"{entity} {n:,}" for entity, n in counts.items()) or "none found"
        rows.append((column, f"{sum(counts.values()):,}", kinds, example[:160]))
    if not rows:
        return None
    return Table(
        "Free text: personal data found inside and replaced",
        ("column", "entities replaced", "by kind", "a released text"),
        tuple(rows),
        note=(
            "Each phone number, e-mail address, ID, card, IBAN, IP address and name found "
            "inside the text was replaced; the rest of each sentence is released. The search "
            "keeps what it does not recognize: read a sample before publishing."
        ),
    )


def _deciders(cert: Certificate) -> Callable[[str], str]:
    """Who decided each column's role: the policy, or the scan (its entity and confidence)."""
    decided = {d.column: d for d in cert.decisions}

    def why(name: str) -> str:
        d = decided.get(name)
        if d is None:
            return "policy"
        if d.by == "scan":
            found = f": {d.entity}" if d.entity else ""
            return f"scan{found} ({d.confidence:.2f})" if d.confidence is not None else "scan"
        if d.treatment == "kept":
            return f"policy, kept as is: {d.reason}"
        return d.by

    return why


def _done(
    cert: Certificate, per_column: dict[str, list[str]], levels: dict[str, int]
) -> dict[str, list[str]]:
    """What happened to each input column: its steps, then the search's generalization."""
    done = {name: list(per_column.get(name, [])) for name in cert.columns_in}
    for name, level in levels.items():
        if level and name in done:
            done[name].append(f"generalized by the search (hierarchy level {level})")
    if (cert.search or {}).get("method") == "mondrian":
        for name in cert.quasi_identifiers:
            if name in done:
                done[name].append("generalized by Mondrian (each class on its own)")
    return done


def _text(cert: Certificate, scrubbed: set[str]) -> list[str]:
    """The section's sentences: new columns, the goals asked for, free text scrubbed."""
    text = []
    new = [c for c in cert.columns_out if c not in cert.columns_in]
    if new:
        text.append(f"Columns new in the release (renamed or derived): {', '.join(new)}.")
    if cert.privacy:
        goals = ", ".join(model.name for model in cert.models) or "none"
        settings = "; ".join(
            f"{key} {value}" for key, value in cert.privacy.items() if key != "models"
        )
        text.append(
            f"Privacy goals asked for: {goals}" + (f" ({settings})" if settings else "") + "."
        )
    if scrubbed:
        text.append(
            "The original values of the generalized quasi-identifiers "
            f"{', '.join(sorted(scrubbed))} were replaced in the free text too "
            f"({'; '.join(s.description for s in cert.steps if s.name == 'scrub_text')})."
        )
    return text


def _section(cert: Certificate, data: pd.DataFrame) -> Section:
    per_column, table_steps = column_steps(cert)
    released = set(cert.columns_out)
    why = _deciders(cert)
    search = cert.search or {}
    levels = search.get("levels") or {}
    done = _done(cert, per_column, levels)
    scrubbed = {n for s in cert.steps if s.name == "scrub_text" for n in (s.counts or {})}
    rows = tuple(
        (
            name,
            cert.roles.get(name, "insensitive"),
            why(name),
            "; ".join(done[name]) or "unchanged",
            ("transformed" if done[name] else "as is") if name in released else "no",
        )
        for name in cert.columns_in
    )
    tables = [
        Table(
            "Columns",
            ("column", "role", "decided by", "what was done", "released"),
            rows,
            note=(
                "Columns the policy does not list get the role the scan finds; identifiers "
                "among them are dropped or pseudonymized. "
                + ("Table-level steps (below) apply to every column." if table_steps else "")
            ),
        )
    ]
    redacted = _redacted(cert, data)
    if redacted is not None:
        tables.append(redacted)
    if table_steps:
        tables.append(
            Table(
                "Table-level steps",
                ("policy", "step", "records after", "columns after"),
                tuple((s.where, s.description, s.rows_after, s.columns_after) for s in table_steps),
            )
        )
    text = _text(cert, scrubbed)
    if levels:

        def shown(name: str) -> str:
            values = data[name].dropna().astype(str).value_counts() if name in data else None
            return ", ".join(values.index[:3]) if values is not None else ""

        tables.append(
            Table(
                "Generalization chosen by the search",
                ("quasi-identifier", "hierarchy level", "most common released values"),
                tuple((name, level, shown(name)) for name, level in levels.items()),
                note=(
                    f"{search.get('method', '')} search, "
                    f"{'proven optimal' if search.get('optimal') else 'not proven optimal'}"
                    f" for {search.get('metric')}: {search.get('loss', 0):.4g}; "
                    f"{search.get('evaluated', 0):,} of {search.get('nodes', 0):,} "
                    "lattice nodes evaluated"
                ),
            ),
        )
    return Section(
        id="policy", title="What was done: the policy", text=tuple(text), tables=tuple(tables)
    )


def build(inputs: Inputs) -> Section:
    """The policy section: each column's steps, table-level steps and the search's levels."""
    return _section(inputs.cert, inputs.data)
