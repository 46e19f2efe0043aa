"""Transcript events: the append-only record of one agent's conversation, as stored and as sent.

Every event has `seq` (dense, from 1) and `ts` (UTC, ISO 8601). The union is discriminated on `type`
and decoded by one `TypeAdapter`, `TRANSCRIPT_EVENT`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from protocol.models.base import Params, WireModel

__all__ = [
    "EndReason",
    "StopReason",
    "UsageInfo",
    "ToolCallInfo",
    "Attachment",
    "UserEvent",
    "WakeEvent",
    "ContextEvent",
    "AssistantEvent",
    "ToolResultEvent",
    "RunEndedEvent",
    "CompactEvent",
    "ReceiptEvent",
    "SearchHistoryArgs",
    "HISTORY_TOOLS",
    "TranscriptEvent",
    "TRANSCRIPT_EVENT",
]

EndReason = Literal["idle", "error", "cancelled"]

StopReason = Literal["end_turn", "max_tokens", "refusal"]
"""Why the model stopped its final answer of a run that ended `idle`: done, out of output tokens, or refused."""


class UsageInfo(WireModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0


class ToolCallInfo(WireModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class _Event(WireModel):
    seq: int = 0
    ts: str = ""


class Attachment(WireModel):
    """A file the person attached to a message (an editor's embedded resource): file content, kept apart from the
    words they typed, so memory never takes it for them. `text` is None for a binary file, which is only named."""

    uri: str = Field(min_length=1, max_length=4096)
    text: str | None = None
    mime_type: str | None = Field(default=None, max_length=200)


class UserEvent(_Event):
    """A person's message (or a Work instruction): `text` is what they typed; `attachments` the files they
    attached to it. `runId` names the run that answers it (absent on lines written before messages carried it)."""

    type: Literal["user"] = "user"
    text: str
    attachments: list[Attachment] | None = None
    run_id: str | None = None


class WakeEvent(_Event):
    """A message from another agent, written on the receiver's own transcript.

    `hops` counts the wakes down the chain a person's message started. With `requestId` and no `status` it
    is a question to answer; with a `status` it is the outcome of a request this agent sent. `runId` names the
    run that answers it, as on a person's message.
    """

    type: Literal["wake"] = "wake"
    text: str
    from_agent: str
    hops: int = 0
    request_id: str | None = None
    status: Literal["answered", "timeout", "failed", "refused"] | None = None
    run_id: str | None = None


class ContextEvent(_Event):
    """What a run saw beyond the cached prefix: the prompt epoch and the per-turn recall block by record id.

    The block's text is not stored: it is rendered from memory whenever the turn is replayed, so a removed
    fact leaves it. `recall` is the text that earlier versions stored; it is never replayed.
    """

    type: Literal["context"] = "context"
    run_id: str
    epoch: int = 0
    recalled: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    more_added: int = 0
    cut: int = 0
    recall: str | None = None


class AssistantEvent(_Event):
    type: Literal["assistant"] = "assistant"
    run_id: str
    text: str = ""
    tool_calls: list[ToolCallInfo] = Field(default_factory=list)
    partial: bool = False
    usage: UsageInfo | None = None


class ToolResultEvent(_Event):
    type: Literal["tool"] = "tool"
    run_id: str
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


class RunEndedEvent(_Event):
    type: Literal["ended"] = "ended"
    run_id: str
    reason: EndReason
    error: str | None = None
    usage: UsageInfo | None = None
    stop_reason: StopReason | None = None


class CompactEvent(_Event):
    """A summary that stands in for every event up to `throughSeq` when building the model's context.

    `fromSeq` is the first line it summarised (a previous summary's lines are covered by that one); the lines
    stay in the transcript, where `search_history` finds them. `extraction` says whether memory extraction
    had read every line it covers first (`covered`), or the compaction went on without waiting for the rest
    (`unfinished`: it is extracted later); absent when extraction does not run for the agent.
    """

    type: Literal["compact"] = "compact"
    summary: str
    through_seq: int
    from_seq: int | None = None
    extraction: Literal["covered", "unfinished"] | None = None


class ReceiptEvent(_Event):
    """What one run's request carried of memory, written once the request is built (after any compaction).

    `section` lists the fact ids of the memory section in its system prompt, `recall` those of every recall
    block the request carried (this turn's and the earlier turns' as replayed), `summaries` the ids of memory
    summaries it carried, `epoch` its prompt epoch, and `prefixHash` the sha256 of its frozen system prompt.
    """

    type: Literal["receipt"] = "receipt"
    run_id: str
    epoch: int
    prefix_hash: str
    section: list[str] = Field(default_factory=list)
    recall: list[str] = Field(default_factory=list)
    summaries: list[str] = Field(default_factory=list)

    def fact_ids(self) -> list[str]:
        """Every fact id the request carried, section first, each once."""
        return list(dict.fromkeys([*self.section, *self.recall]))


TranscriptEvent = Annotated[
    UserEvent
    | WakeEvent
    | ContextEvent
    | AssistantEvent
    | ToolResultEvent
    | RunEndedEvent
    | CompactEvent
    | ReceiptEvent,
    Field(discriminator="type"),
]

TRANSCRIPT_EVENT: TypeAdapter[TranscriptEvent] = TypeAdapter(TranscriptEvent)


class SearchHistoryArgs(Params):
    """Search or read your own earlier conversation, including what a compaction summarised away: give `query`
    (words that must all appear, any case) to find lines, or `fromSeq` to read the lines from that transcript
    number on. Only your own transcript is searched: messages, your replies and tool results."""

    query: str | None = Field(default=None, min_length=1, max_length=500)
    from_seq: int | None = Field(default=None, ge=1)
    limit: int = Field(default=10, ge=1, le=50, description="At most this many lines.")


HISTORY_TOOLS = {"search_history": SearchHistoryArgs}
"""The host-executed tool over the agent's own transcript, by name."""
