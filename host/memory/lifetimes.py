"""When facts' lifetimes end: a fact's own `validUntil`, or its tier's lifetime (the agent's `ttl` setting).

A fact of tier T without a `validUntil` of its own ends `ttl[T]` days after its `validFrom` (or, without one,
after it was noted). `due_endings` finds the ends passed and not yet recorded; the store writes one `expire`
record for each, carrying the end, and the fold makes that end the fact's `valid_until`, so a fact once ended
stays ended when the setting changes later, while the facts not yet ended follow the new setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from host.memory.fold import Fact
from host.memory.index_queries import IndexQueries
from host.memory.records import format_instant

__all__ = ["Lifetimes", "Ending", "due_endings"]

Lifetimes = Mapping[str, int]
"""Days a fact of each tier stands without a `validUntil` of its own (tiers left out: no limit)."""


@dataclass(frozen=True, slots=True)
class Ending:
    """A fact whose lifetime ended at `end` (ledger instant form), and the reason its `expire` record gives."""

    fact: Fact
    end: str
    reason: str


def due_endings(index: IndexQueries, now: datetime, lifetimes: Lifetimes) -> list[Ending]:
    """The lifetimes ended by `now` that have no `expire` record yet: own ends first, then each tier's.

    Own ends are those after the index's `expired_through` mark; a tier's lifetime applies only to facts
    with no end yet (an expired one carries its end from its record).
    """
    instant = format_instant(now)
    endings = [
        Ending(fact, fact.valid_until or instant, f"its lifetime ended at {fact.valid_until}")
        for fact in index.expiring(index.meta("expired_through") or "", instant)
    ]
    for tier, days in sorted(lifetimes.items()):
        for fact in index.outlived(tier, format_instant(now - timedelta(days=days))):
            born = datetime.fromisoformat(fact.valid_from or fact.observed_at)
            end = format_instant(born + timedelta(days=days))
            endings.append(Ending(fact, end, f"its kind's lifetime ({tier}: {days} days) ended at {end}"))
    return endings
