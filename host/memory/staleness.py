"""Which standing facts a person may want to forget: stale ones, likely duplicates and the older side of a
contradiction (pure choices).

A fact is *stale* when it is a note without a key (low importance: no slot, no profile), was written more
than `STALE_DAYS` ago, its confidence is not above one half, and it was never recalled or shown. Two facts
are *likely duplicates* when their normalised words overlap by `DUPLICATE_OVERLAP` or more (Jaccard), in one
tier and one key. Two facts *contradict* when they stand at once for one key with different content (a
conflict, `fold.classify`), neither replacing the other. All only become proposals to retract (a duplicate:
the older one, naming the one kept; a contradiction: each older side, naming the newest), which wait in the
review queue until a person decides: nothing here removes anything, and a contradiction is still shown as a
conflict, never decided by recency, until a person does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from host.memory.fold import Fact, classify
from host.memory.records import format_instant, normalise_text
from host.memory.uses import Use

__all__ = ["STALE_DAYS", "DUPLICATE_OVERLAP", "Proposal", "stale_facts", "likely_duplicates", "contradictions"]

STALE_DAYS = 90
"""A never-used, low-importance note older than this many days is a stale candidate."""
DUPLICATE_OVERLAP = 0.8
"""Facts whose normalised word sets overlap this much (Jaccard) are likely duplicates."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposal to retract `target`, with the reason a person reads in review."""

    target: Fact
    reason: str


def _standing(fact: Fact) -> bool:
    return fact.status == "live" and fact.trust == "confirmed" and fact.text is not None and fact.op != "retract"


def stale_facts(facts: Iterable[Fact], uses: Mapping[str, Use], now: datetime) -> list[Proposal]:
    """The stale candidates among `facts`, oldest first."""
    before = format_instant(now - timedelta(days=STALE_DAYS))
    found = [
        f
        for f in facts
        if _standing(f)
        and f.tier == "note"
        and f.key is None
        and (f.confidence is None or f.confidence <= 0.5)
        and f.observed_at < before
        and f.id not in uses
    ]
    return [
        Proposal(f, f"stale: never recalled or shown since it was noted on {f.observed_at[:10]}")
        for f in sorted(found, key=lambda f: f.seq)
    ]


def _words(fact: Fact) -> frozenset[str]:
    return frozenset(normalise_text(fact.text or "").split())


def likely_duplicates(facts: Iterable[Fact]) -> list[Proposal]:
    """For each pair of likely duplicates, a proposal to retract the older, naming the newer (kept).

    Pairs are only compared within a block of facts sharing one of their two longest words, so the cost
    follows the facts, not their pairs.
    """
    standing = sorted((f for f in facts if _standing(f) and f.tier != "log"), key=lambda f: f.seq)
    words = {f.id: _words(f) for f in standing}
    blocks: dict[str, list[Fact]] = {}
    for fact in standing:
        for word in sorted(words[fact.id], key=lambda w: (-len(w), w))[:2]:
            blocks.setdefault(word, []).append(fact)
    proposals: dict[str, Proposal] = {}
    for block in blocks.values():
        for index, older in enumerate(block):
            for newer in block[index + 1 :]:
                if older.id in proposals or (older.tier, older.key) != (newer.tier, newer.key):
                    continue
                a, b = words[older.id], words[newer.id]
                if a and b and len(a & b) / len(a | b) >= DUPLICATE_OVERLAP:
                    # Named by id alone: a reason quoting the kept fact would outlive that fact's erase.
                    proposals[older.id] = Proposal(older, f"likely duplicate of [{newer.id}], which is kept")
    return sorted(proposals.values(), key=lambda p: p.target.seq)


def contradictions(facts: Iterable[Fact], instant: str) -> list[Proposal]:
    """For each conflict among `facts` at `instant`, a proposal to retract each older side, naming the newest.

    A conflict is one key held by standing facts of different content (`fold.classify`); a pair where one
    replaces the other is a change, not a contradiction, and is left alone. The reason names both ids only:
    a reason quoting either fact would outlive its erase.
    """
    proposals: list[Proposal] = []
    for conflict in classify((f for f in facts if _standing(f)), instant).conflicts:
        newest = conflict.facts[-1]
        for older in conflict.facts[:-1]:
            if older.id == newest.replaces or newest.id == older.replaces:
                continue  # a correction beside what it corrects is a change, not a contradiction
            reason = (
                f"contradicts the newer [{newest.id}] for {conflict.key}: [{older.id}] and [{newest.id}] both stand"
            )
            proposals.append(Proposal(older, reason))
    return sorted(proposals, key=lambda p: p.target.seq)
