"""Wire models for agents: their settings, the model they use, and the shell-facing agent methods."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import Params, WireModel
from protocol.models.mcp import McpServerSettings, McpServerState, check_unique_names
from protocol.models.memory import Tier
from protocol.models.together import QueuedRun
from protocol.models.transcript import Attachment, TranscriptEvent

__all__ = [
    "DEFAULT_CONTEXT_WINDOWS",
    "ToolPermission",
    "AgentStatus",
    "ScriptToolCall",
    "ScriptRule",
    "ModelSettings",
    "AgentSettings",
    "AgentSettingsPatch",
    "AgentInfo",
    "AgentCreateParams",
    "AgentRef",
    "AgentListResult",
    "AgentUpdateParams",
    "AgentDeleteResult",
    "AgentSendParams",
    "AgentSendResult",
    "AgentCancelParams",
    "AgentCancelResult",
    "AgentTranscriptParams",
    "AgentTranscriptResult",
]


ToolPermission = Literal["ask", "always", "never"]

DEFAULT_CONTEXT_WINDOWS = {"local": 8192, "openai": 128_000, "anthropic": 200_000, "scripted": 8192}
"""A model's context window in tokens when its settings give none, by provider."""
AgentStatus = Literal["idle", "queued", "running"]


class ScriptToolCall(WireModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptRule(WireModel):
    """A scripted-model rule: when `match` (a regex) finds the latest message, reply.

    `\\1` / `\\g<name>` in `reply` and in string tool arguments are replaced by the match's groups.
    """

    match: str
    on: Literal["any", "user", "wake", "tool"] = "any"
    reply: str = ""
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)
    chunk_chars: int = Field(default=8, ge=1)
    delay_ms: int = Field(default=0, ge=0, le=60_000)


class ModelSettings(WireModel):
    """Which model an agent uses. `apiKeySecret` names a secret; the value never travels to the shell."""

    provider: Literal["local", "openai", "anthropic", "scripted"] = "local"
    name: str = ""
    base_url: str | None = None
    api_key_secret: str | None = None
    context_window: int | None = Field(default=None, ge=256)
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    rules: list[ScriptRule] = Field(default_factory=list)


Extraction = Literal["auto", "off"] | Annotated[int, Field(ge=1, le=1000)]
"""Background memory extraction: `auto` after each turn worth it, `off`, or at most once every N turns."""

Lifetimes = dict[Tier, Annotated[int, Field(ge=1, le=36_500)]]
"""Days a fact of each tier stands when it has no `validUntil` of its own (tiers left out: no limit)."""


class AgentSettings(WireModel):
    model: ModelSettings = Field(default_factory=ModelSettings)
    instructions: str = ""
    memory: bool = True
    tool_permission: ToolPermission = "ask"
    network: bool = False
    extraction: Extraction = "auto"
    mcp_servers: list[McpServerSettings] = Field(default_factory=list)
    approval_timeout: int = Field(
        default=300,
        ge=5,
        le=86_400,
        description="Seconds a tool call's question waits while no client that can answer is attached; then "
        "it is denied, and the tool's result says why.",
    )
    consolidation: int = Field(
        default=0,
        ge=0,
        le=100,
        description="The most requests to forget (likely duplicates, stale facts) the background memory pass may "
        "propose in one round while the agent is idle, for a person's review, and apart the most calls to the "
        "agent's (remote) model for summaries of old log entries it may make in that round; 0: the pass is off.",
    )
    ttl: Lifetimes = Field(
        default_factory=dict,
        description="Days a fact of each tier (`profile`, `note`, `log`) stands from its validFrom (or when it was "
        "noted) when it has no validUntil of its own, 1..36500; then it expires (an `expire` record, no review). "
        "A tier left out has no limit; empty: none has.",
    )
    knowledge: bool = Field(
        default=True,
        description="Documents a person admits (`knowledge.add`), searched by the agent's knowledge tools. Off: "
        "no tool, no watcher, no indexing; what was admitted stays until it is removed.",
    )

    _unique_mcp_names = field_validator("mcp_servers")(check_unique_names)


class AgentSettingsPatch(Params):
    """Only the fields given are changed."""

    model: ModelSettings | None = None
    instructions: str | None = None
    memory: bool | None = None
    tool_permission: ToolPermission | None = None
    network: bool | None = None
    extraction: Extraction | None = None
    mcp_servers: list[McpServerSettings] | None = Field(default=None, description="Replaces the whole list.")
    approval_timeout: int | None = Field(default=None, ge=5, le=86_400)
    knowledge: bool | None = None
    consolidation: int | None = Field(default=None, ge=0, le=100)
    ttl: Lifetimes | None = Field(default=None, description="Replaces the whole mapping.")

    _unique_mcp_names = field_validator("mcp_servers")(check_unique_names)


class AgentInfo(WireModel):
    agent_id: str
    name: str
    created_at: str
    status: AgentStatus = "idle"
    settings: AgentSettings
    queue: list[QueuedRun] = Field(default_factory=list, description="Runs waiting behind the current one.")
    mcp: list[McpServerState] = Field(default_factory=list, description="The state of each configured MCP server.")
    error: str | None = Field(
        default=None,
        description="Set when one of the agent's files cannot be read (named here); the other fields are then what "
        "could be read, with defaults for the rest, and its runs fail until the file is mended.",
    )


class AgentCreateParams(Params):
    name: str = Field(min_length=1, max_length=200)
    agent_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    settings: AgentSettingsPatch | None = None


class AgentRef(Params):
    agent_id: str = Field(min_length=1, max_length=200)


class AgentListResult(WireModel):
    agents: list[AgentInfo]


class AgentUpdateParams(Params):
    agent_id: str
    name: str | None = Field(default=None, min_length=1, max_length=200)
    settings: AgentSettingsPatch | None = None


class AgentDeleteResult(WireModel):
    deleted: bool


class AgentSendParams(Params):
    """A person's message. To a busy agent it is queued; `interrupt` cancels the running turn first."""

    agent_id: str
    text: str = Field(
        description="What the person typed; empty only when the message is its attachments alone.",
    )
    attachments: list[Attachment] | None = Field(
        default=None,
        max_length=100,
        description=(
            "Files the person attached (an editor's embedded resources): shown to the model as file content, "
            "apart from the typed words, so a fact resting on them is proposed, not confirmed."
        ),
    )
    interrupt: bool = False
    project_root: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description=(
            "An absolute directory this run may read (file tools and grep) and write with a person's yes, "
            "such as an editor's project; it may not hold or lie inside the data dir."
        ),
    )

    @model_validator(mode="after")
    def _says_something(self) -> AgentSendParams:
        if not self.text and not self.attachments:
            raise ValueError("a message needs text or an attachment")
        return self


class AgentSendResult(WireModel):
    """`position` 0: the run started and `seq` is its user message; n: n runs go first, and the message is
    written to the transcript (with its `seq`) when its run starts."""

    run_id: str
    seq: int | None
    position: int = 0


class AgentCancelParams(Params):
    """Without `runId`, the running turn is cancelled (what waits behind it then runs); with one, that run."""

    agent_id: str = Field(min_length=1, max_length=200)
    run_id: str | None = None


class AgentCancelResult(WireModel):
    cancelled: bool


class AgentTranscriptParams(Params):
    agent_id: str
    before_seq: int | None = Field(default=None, ge=0)
    limit: int = Field(default=100, ge=1, le=1000)


class AgentTranscriptResult(WireModel):
    events: list[TranscriptEvent]
    has_more: bool
