"""Who vouches for each column (docs/provenance.md), as the summary, the page and the pull request
comment say it: a mark for the column's head and one line per column naming the trust entry, the key
or workflow that signed, and the run. Shown only for a matrix merged with a trust file."""

from __future__ import annotations

from typing import Final

from harness.model import Column, Matrix, Provenance, ProvenanceState
from harness.publish.render.mdtext import code, link, text

MARKS: Final = {
    ProvenanceState.VERIFIED: "🔏 verified",
    ProvenanceState.UNVERIFIED: "⚠️ unverified",
    ProvenanceState.INVALID: "⛔ invalid",
}


def has_provenance(matrix: Matrix) -> bool:
    return any(c.provenance is not None for c in matrix.columns)


def mark(provenance: Provenance | None) -> str:
    return MARKS[provenance.state] if provenance is not None else ""


def vouch_text(provenance: Provenance) -> str:
    """Markdown: '🔏 verified by **AMD lab** (key sha256:1a2b…) · [run](url)', or the mark and why not."""
    if provenance.verified:
        line = f"{MARKS[provenance.state]} by **{text(provenance.by)}**"
        if provenance.signer:
            line += f" ({text(provenance.signer)})"
    else:
        line = f"{MARKS[provenance.state]}: {text(provenance.reason or '')}"
    if provenance.run_url:
        line += " · " + link("run", provenance.run_url)
    return line


def vouch_line(column: Column) -> str:
    """One list item: the column and who vouches for it."""
    head = f"- **{text(column.label)}** {code(column.id, table=False)}: "
    if column.provenance is None:
        return head + "⚠️ unverified: no cell arrived"
    return head + vouch_text(column.provenance)


def vouch_section(matrix: Matrix) -> list[str]:
    """'### Who vouches for each column' and its list; nothing for a matrix merged without a trust file."""
    if not has_provenance(matrix):
        return []
    return ["", "### Who vouches for each column", "", *(vouch_line(c) for c in matrix.columns if c.shipped)]
