"""Wire models for `memory.*`: a person's view of an agent's memory and a person's own memory acts.

One record model serves every method: a fact as it stands (with `status`), or a ledger event (any `op`).
An erased record keeps its id, op, actor and times, and has no `text`. Instants are ISO 8601 strings.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN, KEY_PATTERN, RECORD_ID_PATTERN
from protocol.models.base import Params, WireModel
from protocol.models.transcript import UsageInfo

__all__ = [
    "MemoryView",
    "MeaningState",
    "MemoryOp",
    "WriteOutcomeKind",
    "MemoryEvidenceModel",
    "MemoryRecordModel",
    "MemoryConflictModel",
    "MemoryListParams",
    "MemoryListResult",
    "MemorySearchParams",
    "MemorySearchHit",
    "MemorySearchResult",
    "MemoryHistoryParams",
    "MemoryHistoryResult",
    "MemoryVerifyParams",
    "MemoryVerifyResult",
    "MemoryWriteResult",
    "MemoryNoteParams",
    "MemoryNoteResult",
    "MemoryCorrectParams",
    "MemoryCorrectResult",
    "MemoryRetractParams",
    "MemoryRetractResult",
    "MemoryReviewParams",
    "MemoryReviewResult",
    "MemoryEraseParams",
    "MemoryEraseResult",
    "MemoryExplainParams",
    "MemoryEvidenceLine",
    "MemoryExplainResult",
    "MemoryChangedEvent",
    "MemoryProposedEvent",
    "MemoryViewSetAsideEvent",
    "MemoryExtractedEvent",
    "MEMORY_METHODS",
    "MEMORY_EVENTS",
]


AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
RecordId = Annotated[str, Field(pattern=RECORD_ID_PATTERN)]
FactKey = Annotated[str, Field(pattern=KEY_PATTERN)]
FactText = Annotated[str, Field(min_length=1, max_length=4000)]
Reason = Annotated[str, Field(min_length=1, max_length=1000)]
Instant = Annotated[str, Field(min_length=4, max_length=40, description="ISO 8601 date or date-time")]

MemoryView = Literal["current", "conflicts", "proposed", "all", "retracted"]
MemoryOp = Literal["assert", "correct", "retract", "review", "erase", "suppress", "expire"]
Tier = Literal["profile", "note", "log"]
WriteOutcomeKind = Literal[
    "recorded",
    "proposed",
    "duplicate",
    "suppressed",
    "corrected",
    "retracted",
    "confirmed",
    "rejected",
    "edited",
    "erased",
    "unchanged",
]


class MemoryEvidenceModel(WireModel):
    """Where a record's content came from: transcript seq, tool call id, and the content's own source."""

    seq: int | None = None
    tool_call_id: str | None = None
    basis: str | None = None


class MemoryRecordModel(WireModel):
    """A memory record. For facts, `trust` and `status` are as they stand now; `text` is absent once erased."""

    id: str
    seq: int
    op: MemoryOp
    source: str
    observed_at: str
    trust: Literal["confirmed", "proposed", "rejected"] | None = None
    status: Literal["live", "retracted", "superseded", "erased"] | None = None
    key: str | None = None
    tier: Tier | None = None
    scope: str = "private"
    text: str | None = None
    reason: str | None = None
    evidence: MemoryEvidenceModel | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    replaces: str | None = None
    target: str | None = None
    targets: list[str] = Field(default_factory=list)
    scrubbed: list[str] = Field(default_factory=list)
    decision: str | None = None
    conflicts_with: list[str] = Field(default_factory=list)
    confidence: float | None = None
    reassert: bool = False
    changed_by: str | None = None
    erased: bool = False


class MemoryConflictModel(WireModel):
    """Two or more live, confirmed records that disagree on one key, shown together."""

    key: str
    records: list[MemoryRecordModel]


class MemoryListParams(Params):
    agent_id: AgentId
    view: MemoryView = "current"
    as_of: Instant | None = None
    known_at: Instant | None = None


class MemoryListResult(WireModel):
    view: MemoryView
    records: list[MemoryRecordModel]
    conflicts: list[MemoryConflictModel] = Field(default_factory=list)


class MemorySearchParams(Params):
    agent_id: AgentId
    query: Annotated[str, Field(min_length=1, max_length=2000)]
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    include_retracted: bool = False
    as_of: Instant | None = None


class MemorySearchHit(WireModel):
    record: MemoryRecordModel
    score: float


MeaningState = Literal["on", "loading", "off"]
"""Whether a search ranked by meaning too (`on`), or by words only: `loading`, the embedding model is still
loading after a start; `off`, semantic recall is switched off or its engine is missing or failed to load."""


class MemorySearchResult(WireModel):
    hits: list[MemorySearchHit]
    meaning: MeaningState


class MemoryHistoryParams(Params):
    """The audit trail of one record (`recordId`), or of the whole memory (newest `limit` before `beforeSeq`)."""

    agent_id: AgentId
    record_id: RecordId | None = None
    limit: Annotated[int, Field(ge=1, le=10000)] | None = None
    before_seq: Annotated[int, Field(ge=1)] | None = None


class MemoryHistoryResult(WireModel):
    records: list[MemoryRecordModel]


class MemoryVerifyParams(Params):
    agent_id: AgentId


class MemoryVerifyResult(WireModel):
    """`ok` when every record chains, hashes and matches its commitments; else the first bad one is named."""

    ok: bool
    count: int
    head: str
    first_bad_seq: int | None = None
    first_bad_id: str | None = None
    problem: str | None = None


class MemoryWriteResult(WireModel):
    """What a write did: `record` is the fact now carrying the content, `written` the ledger records appended."""

    outcome: WriteOutcomeKind
    record: MemoryRecordModel | None = None
    written: list[MemoryRecordModel] = Field(default_factory=list)
    related: list[MemoryRecordModel] = Field(default_factory=list)


class MemoryNoteParams(Params):
    """A person's own note: confirmed at once, and it may bring back a fact that was forgotten."""

    agent_id: AgentId
    text: FactText
    key: FactKey | None = None
    tier: Tier = "note"
    valid_from: Instant | None = None
    valid_until: Instant | None = None
    confidence: Annotated[float, Field(ge=0, le=1)] | None = None


class MemoryNoteResult(MemoryWriteResult):
    pass


class MemoryCorrectParams(Params):
    """Replace a fact: without `validFrom` the old one was wrong; with it, the old one held until then."""

    agent_id: AgentId
    record_id: RecordId
    text: FactText
    valid_from: Instant | None = None
    key: FactKey | None = None


class MemoryCorrectResult(MemoryWriteResult):
    pass


class MemoryRetractParams(Params):
    agent_id: AgentId
    record_id: RecordId
    reason: Reason | None = None


class MemoryRetractResult(MemoryWriteResult):
    pass


class MemoryReviewParams(Params):
    """Confirm, reject, or edit (and so confirm) a proposed fact; `text` is required for `edit`."""

    agent_id: AgentId
    record_id: RecordId
    decision: Literal["confirm", "reject", "edit"]
    text: FactText | None = None
    key: FactKey | None = None
    reason: Reason | None = None


class MemoryReviewResult(MemoryWriteResult):
    pass


class MemoryEraseParams(Params):
    """Remove a fact's text physically everywhere; the audit keeps that it existed and who erased it. The
    memory tools' replies that showed it lose it in every transcript; `scrubConversation` (the person's yes)
    also scrubs it, marked `[erased]`, from the conversation's own messages (the person's, the agent's, other
    tools' results, what the agent sent to or got from other agents), which are otherwise kept and counted."""

    agent_id: AgentId
    record_id: RecordId
    reason: Reason | None = None
    scrub_conversation: bool = False


class MemoryEraseResult(MemoryWriteResult):
    """`heldInConversation`: messages of the agent's conversation that still hold the text (none when the
    conversation was scrubbed); `scrubbedMessages`: messages whose text the conversation scrub replaced."""

    held_in_conversation: int = 0
    scrubbed_messages: int = 0


class MemoryExplainParams(Params):
    agent_id: AgentId
    record_id: RecordId


class MemoryEvidenceLine(WireModel):
    """The transcript line a record's evidence points at, quoted (bounded) as the person or model said it."""

    seq: int
    type: str
    speaker: str
    text: str
    truncated: bool = False


class MemoryExplainResult(WireModel):
    """Why memory holds a belief: the fact as it stands (source, trust, evidence, valid time), the line it
    rests on, who reviewed it, what it replaced and what replaced it, what removed it, its whole history,
    and a summary in words."""

    record: MemoryRecordModel
    evidence_line: MemoryEvidenceLine | None = None
    reviews: list[MemoryRecordModel] = Field(default_factory=list)
    replaced: MemoryRecordModel | None = None
    replaced_by: MemoryRecordModel | None = None
    removed_by: MemoryRecordModel | None = None
    history: list[MemoryRecordModel] = Field(default_factory=list)
    summary: str


class MemoryChangedEvent(WireModel):
    """An agent's memory changed; `epochBumped` says the next turn's system prompt is rebuilt."""

    agent_id: str
    op: MemoryOp
    record_ids: list[str]
    epoch_bumped: bool


class MemoryProposedEvent(WireModel):
    """Facts wait for a person's review."""

    agent_id: str
    records: list[MemoryRecordModel]


class MemoryViewSetAsideEvent(WireModel):
    """An agent's MEMORY.md could not be imported (empty, cut short, garbled, binary, or not a view): nothing
    was taken from it, it is kept as `keptAs` in the agent's memory folder, and the view was written again."""

    agent_id: str
    kept_as: str
    problem: str


class MemoryExtractedEvent(WireModel):
    """A background extraction ran over an agent's turns through transcript seq `throughSeq`: how many
    operations it applied and what the call cost, with the share of its input the provider's cache served."""

    agent_id: str
    through_seq: int
    operations: int
    usage: UsageInfo
    cached_share: float = Field(ge=0, le=1)


MEMORY_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "memory.list": (MemoryListParams, MemoryListResult),
    "memory.search": (MemorySearchParams, MemorySearchResult),
    "memory.history": (MemoryHistoryParams, MemoryHistoryResult),
    "memory.verify": (MemoryVerifyParams, MemoryVerifyResult),
    "memory.explain": (MemoryExplainParams, MemoryExplainResult),
    "memory.note": (MemoryNoteParams, MemoryNoteResult),
    "memory.correct": (MemoryCorrectParams, MemoryCorrectResult),
    "memory.retract": (MemoryRetractParams, MemoryRetractResult),
    "memory.review": (MemoryReviewParams, MemoryReviewResult),
    "memory.erase": (MemoryEraseParams, MemoryEraseResult),
}

MEMORY_EVENTS: dict[str, type[BaseModel]] = {
    "memory.changed": MemoryChangedEvent,
    "memory.proposed": MemoryProposedEvent,
    "memory.viewSetAside": MemoryViewSetAsideEvent,
    "memory.extracted": MemoryExtractedEvent,
}
