"""Which standing facts a person may want to forget: stale ones and likely duplicates (pure choices).

A fact is *stale* when it is a note without a key (low importance: no slot, no profile), was written more
than `STALE_DAYS` ago, its confidence is not above one half, and it was never recalled or shown. Two facts
are *likely duplicates* when their normalised words overlap by `DUPLICATE_OVERLAP` or more (Jaccard), in one
tier and one key. Both only become proposals to retract (a duplicate: the older one, naming the one kept),
which wait in the review queue until a person decides: nothing here removes anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from host.memory.fold import Fact
from host.memory.records import format_instant, normalise_text
from host.memory.uses import Use

__all__ = ["STALE_DAYS", "DUPLICATE_OVERLAP", "Proposal", "stale_facts", "likely_duplicates"]

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
