"""The projection rule: how each ledger record changes the facts, and which facts stand at an instant.

`fold` is pure: a record and a lookup of the facts so far in, an `Effect` out. The same function feeds
the persistent projection in the index (facts "now") and `replay`, the in-memory walk that answers
`knownAt` (transaction time: only records observed by then). `classify` picks the standing facts at a
valid-time instant: per key the one confirmed, live record valid then; two or more different candidates
are a conflict, shown together and never decided by recency; facts without a key are de-duplicated by content.
A `retract` record with trust `proposed` is a request to forget, waiting for a person: it adds a proposed
fact of op `retract` (the target's text, `replaces` naming it) and the target stands until a review confirms it.
An `expire` record ends a fact's valid time at its `validUntil` (the fact's own, or the end its tier's lifetime
gave it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Protocol

from host.memory.records import RECORD_FIELDS, Record
from host.memory.trust import is_explicit

__all__ = [
    "TIER_RANK",
    "FACT_FIELDS",
    "Fact",
    "FactLookup",
    "Effect",
    "Conflict",
    "Standing",
    "fact_from_record",
    "fold",
    "valid_at",
    "is_candidate",
    "classify",
    "MemoryState",
    "replay",
]

TIER_RANK = {"profile": 0, "note": 1, "log": 2}


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact record with its state now: trust and status change as later records act on it."""

    id: str
    seq: int
    op: str
    text: str | None
    sig: str | None
    key: str | None
    tier: str
    source: str
    basis: str | None
    trust: str
    status: str  # live, retracted, superseded, erased
    scope: str
    observed_at: str
    valid_from: str | None
    valid_until: str | None
    replaces: str | None
    replace_mode: str | None  # supersede (the old was wrong) or end (the old held until valid_from)
    confidence: float | None
    evidence_seq: int | None
    tool_call_id: str | None
    conflicts_with: tuple[str, ...]
    changed_seq: int
    changed_by: str | None = None
    reason: str | None = None  # why it was written (a request to forget: the reason a person reads in review)


class FactLookup(Protocol):
    def fact(self, record_id: str) -> Fact | None: ...


@dataclass(frozen=True, slots=True)
class Effect:
    """What one record does: facts added or changed, tombstones set or lifted, and whether the epoch bumps."""

    facts: tuple[Fact, ...] = ()
    tombstones: tuple[tuple[str, str], ...] = ()  # (content signature, id of the record that set it)
    lifted: tuple[str, ...] = ()  # signatures whose tombstones an erase removed
    erased: tuple[str, ...] = ()
    bumps_epoch: bool = False


@dataclass(frozen=True, slots=True)
class Conflict:
    key: str
    facts: tuple[Fact, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    current: tuple[Fact, ...]
    conflicts: tuple[Conflict, ...]


FACT_FIELDS = tuple(f.name for f in fields(Fact))
"""Every field of a fact, in declaration order (the index's columns)."""
_FROM_RECORD = tuple(name for name in FACT_FIELDS if name in RECORD_FIELDS)


def fact_from_record(record: Record) -> Fact:
    """The new fact a fact record states, live, with the trust the record carries."""
    shared = {name: getattr(record, name) for name in _FROM_RECORD}
    return Fact(
        **{
            **shared,
            "trust": "confirmed" if record.op == "review" else (record.trust or "proposed"),
            "tier": record.tier or "note",
            "status": "live",
            "replace_mode": record.decision if record.op == "correct" else None,
            "changed_seq": record.seq,
        }
    )


def _replaced(old: Fact, mode: str | None, valid_from: str | None, record: Record) -> Fact:
    if mode == "end" and valid_from is not None:
        until = valid_from if old.valid_until is None else min(old.valid_until, valid_from)
        return replace(old, valid_until=until, changed_seq=record.seq, changed_by=record.id)
    return replace(old, status="superseded", changed_seq=record.seq, changed_by=record.id)


def fold(record: Record, lookup: FactLookup) -> Effect:
    """What `record` does to the facts known through `lookup`. Pure.

    Args:
        record: the next ledger record.
        lookup: the facts as they stand before it.

    Returns:
        The effect to apply; records that name unknown facts change nothing.
    """
    op = record.op
    if op == "assert":
        fact = fact_from_record(record)
        return Effect(facts=(fact,), bumps_epoch=fact.trust == "confirmed" and is_explicit(record.source))
    if op == "correct":
        fact = fact_from_record(record)
        if fact.trust != "confirmed":
            return Effect(facts=(fact,))
        old = lookup.fact(record.replaces or "")
        changed = (fact,) if old is None else (fact, _replaced(old, fact.replace_mode, fact.valid_from, record))
        return Effect(facts=changed, bumps_epoch=True)
    if op == "retract":
        target = lookup.fact(record.target or "")
        if target is None:
            return Effect()
        if record.trust == "proposed":
            return _retraction_request(record, target)
        done = replace(target, status="retracted", changed_seq=record.seq, changed_by=record.id)
        tombs = ((target.sig, record.id),) if target.sig else ()
        return Effect(facts=(done,), tombstones=tombs, bumps_epoch=True)
    if op == "review":
        return _fold_review(record, lookup)
    if op == "erase":
        erased: list[Fact] = []
        for rid in record.targets:
            target = lookup.fact(rid)
            if target is not None:
                erased.append(
                    replace(
                        target,
                        text=None,
                        sig=None,
                        reason=None,
                        status="erased",
                        changed_seq=record.seq,
                        changed_by=record.id,
                    )
                )
        lifted = tuple({f.sig for rid in record.targets if (f := lookup.fact(rid)) is not None and f.sig})
        return Effect(facts=tuple(erased), lifted=lifted, erased=tuple(f.id for f in erased), bumps_epoch=True)
    if op == "expire":
        return _fold_expire(record, lookup)
    return Effect()  # suppress: an audit event only


def _fold_expire(record: Record, lookup: FactLookup) -> Effect:
    """The fact's valid time has ended: the record says so in the audit and starts a new prompt epoch, so the
    frozen section no longer carries it. An end the fact did not carry (its tier's lifetime) becomes its
    `valid_until`, so the fact stays ended whatever the lifetime setting says later."""
    target = lookup.fact(record.target or "")
    if target is None:
        return Effect()
    end = record.valid_until
    if end is None or (target.valid_until is not None and target.valid_until <= end):
        return Effect(bumps_epoch=True)  # its own validUntil ended: it left every view of now by itself
    ended = replace(target, valid_until=end, changed_seq=record.seq)
    return Effect(facts=(ended,), bumps_epoch=True)


def _retraction_request(record: Record, target: Fact) -> Effect:
    """A request to forget `target`, shown for review with its text; nothing changes until a person decides."""
    if target.status != "live":
        return Effect()
    request = replace(
        target,
        id=record.id,
        seq=record.seq,
        op="retract",
        source=record.source,
        basis=record.basis,
        trust="proposed",
        observed_at=record.observed_at,
        replaces=target.id,
        replace_mode=None,
        confidence=None,
        evidence_seq=record.evidence_seq,
        tool_call_id=record.tool_call_id,
        conflicts_with=(),
        changed_seq=record.seq,
        changed_by=None,
        reason=record.reason,
    )
    return Effect(facts=(request,))


def _fold_review(record: Record, lookup: FactLookup) -> Effect:
    target = lookup.fact(record.target or "")
    if target is None:
        return Effect()
    if target.op == "retract":
        # The review settles the request; the store appends the retraction itself when it is confirmed.
        settled = (
            replace(target, trust="confirmed", status="retracted", changed_seq=record.seq, changed_by=record.id)
            if record.decision == "confirm"
            else replace(target, trust="rejected", changed_seq=record.seq, changed_by=record.id)
        )
        return Effect(facts=(settled,), bumps_epoch=True)
    changed: list[Fact] = []
    tombs: list[tuple[str, str]] = []
    if record.decision == "confirm":
        changed.append(replace(target, trust="confirmed", changed_seq=record.seq, changed_by=record.id))
        old = lookup.fact(target.replaces or "")
        if old is not None:
            changed.append(_replaced(old, target.replace_mode, target.valid_from, record))
    elif record.decision == "reject":
        changed.append(replace(target, trust="rejected", changed_seq=record.seq, changed_by=record.id))
        if target.sig:
            tombs.append((target.sig, record.id))
    elif record.decision == "edit":
        edited = replace(fact_from_record(record), replace_mode=target.replace_mode)
        changed += [edited, replace(target, status="superseded", changed_seq=record.seq, changed_by=record.id)]
        if target.sig and target.sig != edited.sig:
            tombs.append((target.sig, record.id))
        old = lookup.fact(record.replaces or "")
        if old is not None:
            changed.append(_replaced(old, target.replace_mode, edited.valid_from, record))
    return Effect(facts=tuple(changed), tombstones=tuple(tombs), bumps_epoch=True)


def valid_at(fact: Fact, instant: str) -> bool:
    """Whether the fact holds in the world at `instant` (valid time)."""
    return (fact.valid_from is None or fact.valid_from <= instant) and (
        fact.valid_until is None or instant < fact.valid_until
    )


def is_candidate(fact: Fact, instant: str) -> bool:
    """Confirmed, live, not erased and valid at `instant`: may stand as a fact."""
    return fact.trust == "confirmed" and fact.status == "live" and fact.text is not None and valid_at(fact, instant)


def classify(facts: Iterable[Fact], instant: str) -> Standing:
    """The standing facts at `instant`: current facts and conflicts, both in ledger order.

    Args:
        facts: any facts; those that are not candidates at `instant` are ignored.
        instant: the valid-time instant (ledger instant form).
    """
    by_key: dict[str, dict[str, Fact]] = {}
    keyless: dict[str, Fact] = {}
    for fact in facts:
        if not is_candidate(fact, instant) or fact.sig is None:
            continue
        if fact.key:
            by_key.setdefault(fact.key, {}).setdefault(fact.sig, fact)
        else:
            kept = keyless.get(fact.sig)
            if kept is None or TIER_RANK.get(fact.tier, 9) < TIER_RANK.get(kept.tier, 9):
                keyless[fact.sig] = fact
    current: list[Fact] = []
    conflicts: list[Conflict] = []
    keyed_sigs: set[str] = set()
    for key, candidates in by_key.items():
        keyed_sigs.update(candidates)
        ordered = tuple(sorted(candidates.values(), key=lambda f: f.seq))
        if len(ordered) == 1:
            current.append(ordered[0])
        else:
            conflicts.append(Conflict(key, ordered))
    current += [fact for sig, fact in keyless.items() if sig not in keyed_sigs]
    current.sort(key=lambda f: f.seq)
    conflicts.sort(key=lambda c: c.facts[0].seq)
    return Standing(tuple(current), tuple(conflicts))


class MemoryState:
    """Facts and tombstones held in memory, built by folding records one by one."""

    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}
        self.tombstones: dict[str, str] = {}
        self.epoch_mark = 0
        self.last_seq = 0

    def fact(self, record_id: str) -> Fact | None:
        return self.facts.get(record_id)

    def apply(self, record: Record) -> Effect:
        effect = fold(record, self)
        for fact in effect.facts:
            self.facts[fact.id] = fact
        for sig in effect.lifted:
            self.tombstones.pop(sig, None)
        for sig, rid in effect.tombstones:
            self.tombstones.setdefault(sig, rid)
        if effect.bumps_epoch:
            self.epoch_mark = record.seq
        self.last_seq = record.seq
        return effect


def replay(records: Iterable[Record], *, known_at: str | None = None, through_seq: int | None = None) -> MemoryState:
    """Fold `records` in order, stopping at the first observed after `known_at` (transaction time) or the
    first past `through_seq` (a ledger position)."""
    state = MemoryState()
    for record in records:
        if known_at is not None and record.observed_at > known_at:
            break
        if through_seq is not None and record.seq > through_seq:
            break
        state.apply(record)
    return state
