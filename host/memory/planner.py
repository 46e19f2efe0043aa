"""The note planner: what a batch of new facts does to memory, decided from data alone.

`plan_notes` is pure: the checked items and what the projection says about each item's content in, one
`NotePlan` per item out, no I/O. A fact already known is a duplicate (nothing written); a fact a tombstone
forbids, from a source that may be suppressed, is suppressed; anything else is recorded (or proposed, by
trust), naming the live facts of its key that it now conflicts with. Duplicates inside one batch count too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from host.memory.fold import Fact
from host.memory.values import NoteItem

__all__ = ["NoteContext", "NotePlan", "plan_notes"]


@dataclass(frozen=True, slots=True)
class NoteContext:
    """What memory holds about one item's content, gathered by the store before planning.

    `live` are the live facts with the item's content signature; `tombstone` is the id of the record
    whose tombstone covers that signature, if any; `retired` are the facts with that signature that no
    longer stand (retracted, replaced, rejected); `rivals` are the facts standing for the item's key now
    with different content.
    """

    sig: str
    live: tuple[Fact, ...] = ()
    tombstone: str | None = None
    retired: tuple[Fact, ...] = ()
    rivals: tuple[Fact, ...] = ()


@dataclass(frozen=True, slots=True)
class NotePlan:
    """What to do with one item.

    `kind` is `recorded`, `proposed`, `duplicate` or `suppressed`. A duplicate names the known fact
    (`fact`) or, when it repeats an earlier item of the same batch, that item's position (`same_as`).
    `related` are the rivals (recorded, proposed) or the retired copies (suppressed).
    """

    kind: str
    item: NoteItem
    sig: str
    fact: Fact | None = None
    same_as: int | None = None
    related: tuple[Fact, ...] = ()
    tombstone: str | None = None

    @property
    def writes(self) -> bool:
        """Whether the plan appends a record (an assert, or a suppress for the audit trail)."""
        return self.kind in ("recorded", "proposed", "suppressed")


def plan_notes(
    items: Sequence[NoteItem], contexts: Sequence[NoteContext], *, trust: str, suppressible: bool
) -> list[NotePlan]:
    """Plan a batch of notes.

    Args:
        items: checked note items, in order.
        contexts: one per item, what memory holds about its content.
        trust: the trust every new record of this writer gets (`confirmed` or `proposed`).
        suppressible: whether a tombstone stops this writer (the extractor, a peer, a tool, the agent).

    Returns:
        One plan per item, in order.
    """
    plans: list[NotePlan] = []
    pending: dict[tuple[str, str | None, str | None], int] = {}
    for position, (item, context) in enumerate(zip(items, contexts, strict=True)):
        slot = (context.sig, item.key, item.valid_from)
        if slot in pending:
            plans.append(NotePlan("duplicate", item, context.sig, same_as=pending[slot]))
            continue
        same = [
            fact
            for fact in context.live
            if fact.valid_from == item.valid_from and (item.key is None or fact.key == item.key)
        ]
        # A proposed write is already covered by any live copy; a confirmed one only by a confirmed copy.
        known = next((fact for fact in same if fact.trust == "confirmed" or trust == "proposed"), None)
        if known is not None:
            plans.append(NotePlan("duplicate", item, context.sig, fact=known))
            continue
        if suppressible and context.tombstone is not None:
            suppressed = NotePlan("suppressed", item, context.sig, related=context.retired, tombstone=context.tombstone)
            plans.append(suppressed)
            continue
        rivals = tuple(fact for fact in context.rivals if fact.sig != context.sig) if item.key else ()
        pending[slot] = position
        plans.append(NotePlan("recorded" if trust == "confirmed" else "proposed", item, context.sig, related=rivals))
    return plans
