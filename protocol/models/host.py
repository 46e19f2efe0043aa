"""Wire models for the host's session methods and the events it sends to a shell."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from protocol.ids import Decision
from protocol.models.agents import AgentInfo, AgentStatus
from protocol.models.base import Params, WireModel
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
    "AgentMessageEvent",
    "AgentEndedEvent",
    "AgentErrorEvent",
    "KernelDownEvent",
    "KernelUpEvent",
    "AgentToolEvent",
    "DecideToolParams",
    "DecideToolResult",
]

PROTOCOL_VERSION = "2026-11-01"


class ClientInfo(WireModel):
    name: str
    version: str = ""


class ServerInfo(WireModel):
    name: str
    version: str


class InitializeParams(Params):
    """`token` is required on the host's Unix socket (it is in `<data>/host.endpoint`); stdio needs none."""

    client: ClientInfo
    protocol_version: str
    token: str | None = None


class InitializeResult(WireModel):
    server: ServerInfo
    protocol_version: str
    capabilities: dict[str, bool]


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


class AgentStartedEvent(WireModel):
    """A run began: the message it answers (a person's, or another agent's wake) is now in the transcript.

    Sent to every client, so each one shows the conversation as it grows, whoever sent the message.
    """

    agent_id: str
    run_id: str
    message: Annotated[UserEvent | WakeEvent, Field(discriminator="type")]


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
