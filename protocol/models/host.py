"""Wire models for the host's session methods and the events it sends to a shell."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from protocol.ids import Decision
from protocol.models.agents import AgentInfo, AgentStatus
from protocol.models.base import Params, WireModel
from protocol.models.handshake import (
    PROTOCOL_VERSION,
    ClientInfo,
    InitializeParams,
    InitializeResult,
    ServerInfo,
)
from protocol.models.kernel import ShellAvailability
from protocol.models.transcript import AssistantEvent, EndReason, StopReason, UsageInfo, UserEvent, WakeEvent
from protocol.models.zones import check_time_zone

__all__ = [
    "PROTOCOL_VERSION",
    "ClientInfo",
    "ServerInfo",
    "InitializeParams",
    "InitializeResult",
    "KernelState",
    "KernelStatus",
    "RunInfo",
    "HostStatusResult",
    "HostSettings",
    "SettingsSetParams",
    "AgentUpdatedEvent",
    "AgentDeltaEvent",
    "AgentStartedEvent",
    "STARTED_PREVIEW_CHARS",
    "EventsDroppedEvent",
    "AgentMessageEvent",
    "AgentEndedEvent",
    "AgentErrorEvent",
    "KernelDownEvent",
    "KernelUpEvent",
    "AgentToolEvent",
    "DecideToolParams",
    "DecideToolResult",
]

KernelState = Literal["starting", "up", "down", "stopped"]


class KernelStatus(WireModel):
    state: KernelState
    pid: int | None = None
    restarts: int = 0
    tools: list[str] = Field(default_factory=list)
    shell: ShellAvailability | None = None


class RunInfo(WireModel):
    run_id: str
    agent_id: str
    state: AgentStatus


class HostStatusResult(WireModel):
    version: str
    pid: int
    data_dir: str
    kernel: KernelStatus
    agents: int
    runs: list[RunInfo]
    max_concurrent_runs: int


class HostSettings(WireModel):
    max_concurrent_runs: int = Field(default=4, ge=1, le=64)
    shell_sandbox: Literal["auto", "off"] = "auto"
    max_hops: int = Field(
        default=4, ge=1, le=32, description="How many agents a chain of wakes may reach, the first included."
    )
    time_zone: str | None = Field(
        default=None,
        max_length=64,
        description="The person's IANA time zone (`Europe/Berlin`): schedules and budget days are read in it. "
        "Null: the system's.",
    )
    chain_budget: int = Field(
        default=200,
        ge=1,
        le=100_000,
        description="How many model requests one chain of messages may use across all its hops.",
    )

    _zone = field_validator("time_zone")(check_time_zone)


class SettingsSetParams(Params):
    max_concurrent_runs: int | None = Field(default=None, ge=1, le=64)
    shell_sandbox: Literal["auto", "off"] | None = None
    max_hops: int | None = Field(default=None, ge=1, le=32)
    time_zone: str | None = Field(default=None, min_length=1, max_length=64)
    chain_budget: int | None = Field(default=None, ge=1, le=100_000)

    _zone = field_validator("time_zone")(check_time_zone)


class AgentUpdatedEvent(WireModel):
    """An agent was created, changed or changed status; `agent` is null when it was deleted."""

    agent_id: str
    agent: AgentInfo | None


STARTED_PREVIEW_CHARS = 2000
"""How much of a message's text `agent.started` carries to every client; the transcript holds all of it."""


class AgentStartedEvent(WireModel):
    """A run began: the message it answers (a person's, or another agent's wake) is now in the transcript.

    Sent to every client, so each one shows the conversation as it grows, whoever sent the message. The
    message's text is cut to its first 2,000 characters (`truncated`, with the whole text's `textLength` in
    code points); `agent.transcript` has all of it, at the message's `seq`.
    """

    agent_id: str
    run_id: str
    message: Annotated[UserEvent | WakeEvent, Field(discriminator="type")]
    truncated: bool = False
    text_length: int

    @classmethod
    def preview(cls, agent_id: str, run_id: str, stored: dict[str, Any]) -> AgentStartedEvent:
        """The event for the transcript event `stored` (wire form), its text cut to `STARTED_PREVIEW_CHARS`."""
        text = str(stored.get("text", ""))
        cut = len(text) > STARTED_PREVIEW_CHARS
        message = {**stored, "text": text[:STARTED_PREVIEW_CHARS]} if cut else stored
        return cls.model_validate(
            {"agentId": agent_id, "runId": run_id, "message": message, "truncated": cut, "textLength": len(text)}
        )


class AgentDeltaEvent(WireModel):
    agent_id: str
    run_id: str
    text: str


class AgentMessageEvent(WireModel):
    agent_id: str
    run_id: str
    message: AssistantEvent


class AgentEndedEvent(WireModel):
    agent_id: str
    run_id: str
    reason: EndReason
    error: str | None = None
    usage: UsageInfo | None = None
    stop_reason: StopReason | None = Field(
        default=None, description="For a run that ended `idle`: why the model stopped its final answer."
    )
    error_code: int | None = Field(default=None, description="For a run that ended `error`: the code of its cause.")


class AgentErrorEvent(WireModel):
    agent_id: str | None = None
    run_id: str | None = None
    code: int
    message: str


class KernelDownEvent(WireModel):
    reason: str
    restarting: bool


class KernelUpEvent(WireModel):
    pid: int
    restarts: int


class EventsDroppedEvent(WireModel):
    """Events were not sent to this client because it fell too far behind in reading them: only the shell
    that launched the host on stdio gets this (a socket client is disconnected instead). It comes once the
    client has caught up; whatever it shows may be stale, so it re-reads it (`agent.list`, `agent.transcript`,
    ...). `agentIds` are the agents whose events were among those dropped."""

    count: int
    agent_ids: list[str]
    reason: str


class AgentToolEvent(WireModel):
    """A tool call's progress: `pending` waits for a person's decision (`agent.decideTool`)."""

    agent_id: str
    run_id: str
    tool_call_id: str
    name: str
    status: Literal["pending", "started", "completed"]
    arguments: dict[str, Any] = Field(default_factory=dict)
    action: str | None = None
    target: str | None = None
    content: str | None = None
    is_error: bool = False


class DecideToolParams(Params):
    agent_id: str
    tool_call_id: str
    decision: Decision


class DecideToolResult(WireModel):
    accepted: bool
