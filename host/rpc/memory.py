"""The `memory.*` methods a shell calls, and the conversion of memory change notices into events.

Every act here is a person's (source `human`). An unknown agent or record is NOT_FOUND, a refused secret is
SENSITIVE_CONTENT, a malformed instant is INVALID_PARAMS: the store's typed errors carry their codes.
Ledger walks (history, verify) run in a worker thread so a long ledger does not stall the host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from host.memory.explain import describe
from host.memory.fold import FACT_FIELDS, Fact
from host.memory.hub import MemoryHub
from host.memory.records import RECORD_FIELDS, Evidence, Record
from host.memory.values import MemoryEvent, WriteOutcome
from protocol.dispatch import MethodTable
from protocol.models.memory import (
    MEMORY_EVENTS,
    MEMORY_METHODS,
    MemoryChangedEvent,
    MemoryConflictModel,
    MemoryCorrectParams,
    MemoryCorrectResult,
    MemoryEraseParams,
    MemoryEraseResult,
    MemoryEvidenceLine,
    MemoryEvidenceModel,
    MemoryExplainParams,
    MemoryExplainResult,
    MemoryHistoryParams,
    MemoryHistoryResult,
    MemoryListParams,
    MemoryListResult,
    MemoryNoteParams,
    MemoryNoteResult,
    MemoryProposedEvent,
    MemoryRecordModel,
    MemoryRetractParams,
    MemoryRetractResult,
    MemoryReviewParams,
    MemoryReviewResult,
    MemorySearchHit,
    MemorySearchParams,
    MemorySearchResult,
    MemoryVerifyParams,
    MemoryVerifyResult,
    MemoryViewSetAsideEvent,
    MemoryWriteResult,
)

__all__ = [
    "MEMORY_METHODS",
    "MEMORY_EVENTS",
    "register_memory_methods",
    "memory_notification",
    "fact_to_model",
    "record_to_model",
]

_HUMAN = Evidence("human")
# Fields the memory dataclasses share with the wire model by name; `commit`, `salt`, `sig`, `hash`, `prev`
# and the evidence parts stay off the wire (the evidence goes as one object).
_WIRE_FIELDS = frozenset(MemoryRecordModel.model_fields) - {"evidence", "decision", "erased"}


def _evidence(seq: int | None, tool_call_id: str | None, basis: str | None) -> MemoryEvidenceModel | None:
    if seq is None and tool_call_id is None and basis is None:
        return None
    return MemoryEvidenceModel(seq=seq, tool_call_id=tool_call_id, basis=basis)


def _wire_fields(value: Fact | Record, names: tuple[str, ...]) -> dict[str, Any]:
    """The dataclass fields the wire model also has, tuples as lists; the evidence parts are joined."""
    out = {name: getattr(value, name) for name in names if name in _WIRE_FIELDS}
    out = {name: list(v) if isinstance(v, tuple) else v for name, v in out.items()}
    out["evidence"] = _evidence(value.evidence_seq, value.tool_call_id, value.basis)
    return out


def fact_to_model(fact: Fact) -> MemoryRecordModel:
    """A fact as it stands, for the wire."""
    fields = _wire_fields(fact, FACT_FIELDS)
    fields |= {"decision": fact.replace_mode, "erased": fact.status == "erased" or fact.text is None}
    return MemoryRecordModel.model_validate(fields)


def record_to_model(record: Record) -> MemoryRecordModel:
    """A ledger record (an event of any op), for the wire. Erased content is simply absent."""
    fields = _wire_fields(record, RECORD_FIELDS)
    fields |= {"decision": record.decision, "erased": bool(record.commit) and not record.content()}
    return MemoryRecordModel.model_validate(fields)


def _write_result(cls: type[MemoryWriteResult], outcome: WriteOutcome) -> MemoryWriteResult:
    # Validated, so a store outcome the wire does not know is caught here rather than sent.
    return cls.model_validate(
        {
            "outcome": outcome.kind,
            "record": fact_to_model(outcome.fact) if outcome.fact is not None else None,
            "written": [record_to_model(r) for r in outcome.records],
            "related": [fact_to_model(f) for f in outcome.related],
        }
    )


def memory_notification(
    event: MemoryEvent,
) -> tuple[str, MemoryChangedEvent | MemoryProposedEvent | MemoryViewSetAsideEvent]:
    """The (method, params) of the notification a shell gets for a memory change notice."""
    if event.kind == "set_aside":
        return "memory.viewSetAside", MemoryViewSetAsideEvent(
            agent_id=event.agent_id, kept_as=event.kept_as or "", problem=event.problem or ""
        )
    if event.kind == "proposed":
        return "memory.proposed", MemoryProposedEvent(
            agent_id=event.agent_id, records=[fact_to_model(f) for f in event.facts]
        )
    return "memory.changed", MemoryChangedEvent.model_validate(
        {
            "agent_id": event.agent_id,
            "op": event.op,
            "record_ids": list(event.record_ids),
            "epoch_bumped": event.epoch_bumped,
        }
    )


EvidenceLine = Callable[[str, int], MemoryEvidenceLine | None]
"""`line(agent_id, seq)`: the transcript line a record's evidence points at, quoted."""


def register_memory_methods(router: MethodTable, hub: MemoryHub, evidence_line: EvidenceLine | None = None) -> None:
    """Add every `memory.*` method to `router`, backed by `hub`.

    Args:
        router: the host's request router.
        hub: the host's memory hub.
        evidence_line: quotes the transcript line a record rests on (for `memory.explain`).
    """

    async def list_memory(p: MemoryListParams) -> MemoryListResult:
        listing = hub.get(p.agent_id).list_facts(p.view, as_of=p.as_of, known_at=p.known_at)
        conflicts = [
            MemoryConflictModel(key=c.key, records=[fact_to_model(f) for f in c.facts]) for c in listing.conflicts
        ]
        return MemoryListResult(view=p.view, records=[fact_to_model(f) for f in listing.facts], conflicts=conflicts)

    async def search(p: MemorySearchParams) -> MemorySearchResult:
        store = hub.get(p.agent_id)
        await store.prepare_recall(p.query)
        hits = store.search(p.query, limit=p.limit, include_retracted=p.include_retracted, as_of=p.as_of)
        store.note_use([hit.fact.id for hit in hits], "recalled")
        found = [MemorySearchHit(record=fact_to_model(h.fact), score=h.score) for h in hits]
        return MemorySearchResult(hits=found, meaning=store.meaning)

    async def history(p: MemoryHistoryParams) -> MemoryHistoryResult:
        store = hub.get(p.agent_id)
        records = await asyncio.to_thread(store.history, p.record_id, limit=p.limit, before_seq=p.before_seq)
        return MemoryHistoryResult(records=[record_to_model(r) for r in records])

    async def verify(p: MemoryVerifyParams) -> MemoryVerifyResult:
        report = await asyncio.to_thread(hub.get(p.agent_id).verify)
        return MemoryVerifyResult(
            ok=report.ok,
            count=report.count,
            head=report.head,
            first_bad_seq=report.first_bad_seq,
            first_bad_id=report.first_bad_id,
            problem=report.problem,
        )

    async def note(p: MemoryNoteParams) -> MemoryWriteResult:
        outcome = await hub.get(p.agent_id).note(
            p.text,
            evidence=_HUMAN,
            key=p.key,
            tier=p.tier,
            valid_from=p.valid_from,
            valid_until=p.valid_until,
            confidence=p.confidence,
        )
        return _write_result(MemoryNoteResult, outcome)

    async def correct(p: MemoryCorrectParams) -> MemoryWriteResult:
        store = hub.get(p.agent_id)
        outcome = await store.correct(p.record_id, p.text, evidence=_HUMAN, valid_from=p.valid_from, key=p.key)
        return _write_result(MemoryCorrectResult, outcome)

    async def retract(p: MemoryRetractParams) -> MemoryWriteResult:
        outcome = await hub.get(p.agent_id).retract(p.record_id, evidence=_HUMAN, reason=p.reason)
        return _write_result(MemoryRetractResult, outcome)

    async def review(p: MemoryReviewParams) -> MemoryWriteResult:
        store = hub.get(p.agent_id)
        outcome = await store.review(p.record_id, p.decision, text=p.text, key=p.key, reason=p.reason)
        return _write_result(MemoryReviewResult, outcome)

    async def erase(p: MemoryEraseParams) -> MemoryWriteResult:
        store = hub.get(p.agent_id)
        outcome = await store.erase(
            p.record_id, reason=p.reason, evidence=_HUMAN, scrub_conversation=p.scrub_conversation
        )
        result = _write_result(MemoryEraseResult, outcome)
        if outcome.erasure is not None:
            result = result.model_copy(
                update={"held_in_conversation": outcome.erasure.held, "scrubbed_messages": outcome.erasure.scrubbed}
            )
        return result

    async def explain(p: MemoryExplainParams) -> MemoryExplainResult:
        store = hub.get(p.agent_id)
        # The ledger walk runs in a worker thread; the index is read on this one (its connection's thread).
        story = store.explain(p.record_id, await asyncio.to_thread(store.history, p.record_id))
        fact = story.fact
        line = evidence_line(p.agent_id, fact.evidence_seq) if evidence_line and fact.evidence_seq else None
        return MemoryExplainResult(
            record=fact_to_model(fact),
            evidence_line=line,
            reviews=[record_to_model(r) for r in story.reviews],
            replaced=fact_to_model(story.replaced) if story.replaced else None,
            replaced_by=fact_to_model(story.replaced_by) if story.replaced_by else None,
            removed_by=record_to_model(story.removed_by) if story.removed_by else None,
            history=[record_to_model(r) for r in story.history],
            summary=describe(story, line.text if line else None),
        )

    router.add("memory.list", MemoryListParams, list_memory)
    router.add("memory.explain", MemoryExplainParams, explain)
    router.add("memory.search", MemorySearchParams, search)
    router.add("memory.history", MemoryHistoryParams, history)
    router.add("memory.verify", MemoryVerifyParams, verify)
    router.add("memory.note", MemoryNoteParams, note)
    router.add("memory.correct", MemoryCorrectParams, correct)
    router.add("memory.retract", MemoryRetractParams, retract)
    router.add("memory.review", MemoryReviewParams, review)
    router.add("memory.erase", MemoryEraseParams, erase)
