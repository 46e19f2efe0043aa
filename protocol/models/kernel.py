"""Wire models between the host and the kernel: turns, summaries, and the kernel's calls back.

The kernel knows a `runId` and an opaque `session` key, never an agent. `ModelSpec.apiKey` is resolved
by the host from its secrets for one call and is never logged or echoed. A turn (or a summary) may send
only the messages after a `MessagePrefix` the kernel holds for its session: the first `count` of the list
the session's last turn was sent, named by the chain hash (`chain_hashes`) of the last of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from protocol.ids import Decision
from protocol.models.agents import ScriptRule
from protocol.models.base import Params, WireModel
from protocol.models.mcp import McpServerSpec
from protocol.models.policy import ApprovalRule, SandboxPolicy
from protocol.models.transcript import EndReason, StopReason, ToolCallInfo, UsageInfo

__all__ = [
    "ChatMessage",
    "MessagePrefix",
    "chain_hashes",
    "ModelSpec",
    "ToolSpec",
    "ToolSet",
    "ShellAvailability",
    "KernelInitializeParams",
    "KernelInitializeResult",
    "TurnStartParams",
    "TurnStartResult",
    "RunRef",
    "TurnCancelResult",
    "SummarizeParams",
    "SummarizeResult",
    "SessionCloseParams",
    "TurnDeltaEvent",
    "TurnMessageEvent",
    "TurnToolEvent",
    "TurnEndedEvent",
    "ToolCallParams",
    "ToolCallResult",
    "ApprovalRequestParams",
    "ApprovalRequestResult",
]


class ChatMessage(WireModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCallInfo] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    cache_breakpoint: bool = False


def chain_hashes(messages: Sequence[ChatMessage], previous: str = "") -> list[str]:
    """The chain hash after each of `messages`, following `previous` (the hash before the first; "" at the start).

    Each link is sha256 over the previous link and the message's JSON, so two lists with the same link at
    position i hold the same first i + 1 messages (up to sha256), and a link is computed once per message.
    """
    links = []
    for message in messages:
        previous = hashlib.sha256(previous.encode("ascii") + message.model_dump_json().encode("utf-8")).hexdigest()
        links.append(previous)
    return links


class MessagePrefix(WireModel):
    """Messages the kernel already holds for a session: the first `count` of the list its last turn was sent."""

    count: int = Field(ge=1)
    hash: str = Field(description="The chain hash (`chain_hashes`) after the last of those messages.")


class ModelSpec(WireModel):
    provider: str
    name: str = ""
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    key_name: str | None = None
    context_window: int = 8192
    max_output_tokens: int = 1024
    temperature: float | None = None
    rules: list[ScriptRule] = Field(default_factory=list)


class ToolSpec(WireModel):
    name: str
    description: str
    input_schema: dict[str, Any]


class ToolSet(WireModel):
    """`local` names the kernel's own tools to offer; `host` are tools the host executes (`tool.call`)."""

    local: list[str] = Field(default_factory=list)
    host: list[ToolSpec] = Field(default_factory=list)


class ShellAvailability(WireModel):
    available: bool
    reason: str = ""


class KernelInitializeParams(Params):
    protocol_version: str
    shell_sandbox: Literal["auto", "off"] = "auto"


class KernelInitializeResult(WireModel):
    name: str
    version: str
    tools: list[ToolSpec]
    shell: ShellAvailability
    mcp: ShellAvailability | None = Field(default=None, description="Whether MCP servers can be sandboxed here.")


class TurnStartParams(Params):
    """One run. Without a `policy` the kernel offers no local tools at all (they cannot be confined).

    With a `prefix`, `messages` follow the messages it names; a kernel that does not hold them answers
    UNKNOWN_PREFIX and the host sends the whole list. The kernel keeps each session's whole list for the next.
    """

    run_id: str
    session: str
    messages: list[ChatMessage]
    prefix: MessagePrefix | None = None
    model: ModelSpec
    tools: ToolSet = Field(default_factory=ToolSet)
    policy: SandboxPolicy | None = None
    approvals: list[ApprovalRule] = Field(default_factory=list)
    max_steps: int = Field(default=24, ge=1, le=200)
    mcp_servers: list[McpServerSpec] = Field(default_factory=list, description="Started lazily, each sandboxed.")


class TurnStartResult(WireModel):
    accepted: bool


class RunRef(Params):
    run_id: str


class TurnCancelResult(WireModel):
    cancelled: bool


class SummarizeParams(Params):
    """One model call for text only. `tools`, when given, are listed exactly as a turn lists them (so the
    provider's cache serves the same prefix) but none of them runs. With a `session` and a `prefix`,
    `messages` follow that session's held messages, as in `turn.start`; a summary's list is not kept."""

    messages: list[ChatMessage]
    session: str | None = None
    prefix: MessagePrefix | None = None
    model: ModelSpec
    max_output_tokens: int | None = Field(default=None, ge=1)
    tools: ToolSet | None = None


class SummarizeResult(WireModel):
    text: str
    usage: UsageInfo


class SessionCloseParams(Params):
    session: str


class TurnDeltaEvent(WireModel):
    run_id: str
    text: str


class TurnMessageEvent(WireModel):
    """One completed assistant message (a turn may hold several, between tool calls)."""

    run_id: str
    text: str
    tool_calls: list[ToolCallInfo] = Field(default_factory=list)
    partial: bool = False
    usage: UsageInfo | None = None


class TurnToolEvent(WireModel):
    run_id: str
    tool_call_id: str
    name: str
    status: Literal["started", "completed"]
    arguments: dict[str, Any] = Field(default_factory=dict)
    content: str | None = None
    is_error: bool = False


class TurnEndedEvent(WireModel):
    run_id: str
    reason: EndReason
    error: str | None = None
    error_code: int | None = None
    usage: UsageInfo | None = None
    stop_reason: StopReason | None = None


class ToolCallParams(Params):
    run_id: str
    tool_call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolCallResult(WireModel):
    content: str
    is_error: bool = False


class ApprovalRequestParams(Params):
    run_id: str
    tool_call_id: str
    name: str
    action: str
    target: str
    summary: str = ""


class ApprovalRequestResult(WireModel):
    decision: Decision
