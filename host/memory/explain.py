"""Why memory holds a belief: one record with everything that bears on it, gathered from the ledger.

`explain` is read-only. It names the fact as it stands, the records that acted on it (reviews, the
correction that replaced it, the retraction or erase that removed it), the fact it replaced, and the
transcript seq its evidence points at, which the caller quotes. Erased text stays absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from host.memory.errors import RecordNotFoundError
from host.memory.fold import Fact
from host.memory.index import MemoryIndex
from host.memory.records import Record

__all__ = ["Explanation", "explain", "describe"]


@dataclass(frozen=True, slots=True)
class Explanation:
    """One fact and its story. `history` is every ledger record that names it, oldest first."""

    fact: Fact
    replaced: Fact | None
    replaced_by: Fact | None
    reviews: tuple[Record, ...]
    removed_by: Record | None
    history: tuple[Record, ...]


def explain(record_id: str, index: MemoryIndex, records: Sequence[Record]) -> Explanation:
    """Gather what bears on the fact `record_id`.

    Args:
        record_id: a fact's id.
        index: the projection (the fact as it stands, and its neighbours by id).
        records: the ledger records that name it (or the whole ledger), oldest first.

    Raises:
        RecordNotFoundError: no fact has that id.
    """
    fact = index.fact(record_id)
    if fact is None:
        raise RecordNotFoundError(f"no memory record {record_id}")
    history = tuple(
        r for r in records if record_id in (r.id, r.target, r.replaces) or record_id in (*r.targets, *r.scrubbed)
    )
    reviews = tuple(r for r in history if r.op == "review" and r.target == record_id)
    removed = next((r for r in history if r.op in ("retract", "erase") and r.id != record_id), None)
    replaced = index.fact(fact.replaces) if fact.replaces else None
    # The record that last changed it is a fact only when it replaced it (a correction, an edited review).
    replaced_by = index.fact(fact.changed_by) if fact.changed_by else None
    return Explanation(fact, replaced, replaced_by, reviews, removed, history)


def describe(explanation: Explanation, quoted: str | None) -> str:
    """The explanation in a few plain sentences, for a person or the model."""
    fact = explanation.fact
    text = fact.text if fact.text is not None else "(its text was erased)"
    parts = [f"{fact.id}: {text}", f"Written by {fact.source} on {fact.observed_at[:10]}; trust {fact.trust}."]
    if fact.basis:
        parts.append(f"The content came from {fact.basis}.")
    if quoted is not None:
        parts.append(f"It rests on transcript line {fact.evidence_seq}: {quoted!r}.")
    for review in explanation.reviews:
        parts.append(f"Reviewed ({review.decision}) by {review.source} on {review.observed_at[:10]}.")
    if fact.valid_from or fact.valid_until:
        parts.append(f"Valid from {(fact.valid_from or 'always')[:10]} until {(fact.valid_until or 'now')[:10]}.")
    if explanation.replaced is not None:
        parts.append(f"It replaced {explanation.replaced.id} ({explanation.replaced.text or 'erased'}).")
    if explanation.replaced_by is not None:
        parts.append(f"It was replaced by {explanation.replaced_by.id} ({explanation.replaced_by.text or 'erased'}).")
    if explanation.removed_by is not None:
        removed = explanation.removed_by
        verb = "Forgotten" if removed.op == "retract" else "Erased"
        reason = f": {removed.reason}" if removed.reason else ""
        parts.append(f"{verb} by {removed.source} on {removed.observed_at[:10]}{reason}.")
    parts.append(f"Status now: {fact.status}.")
    return " ".join(parts)
