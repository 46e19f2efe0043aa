"""Wire models for carrying an agent: `agent.export` writes one archive, `agent.import` makes an agent of it.

The archive holds the agent's profile, settings, transcript and memory ledger, and a signature of this
installation; never secrets and never derived files (index, MEMORY.md, prompt cache), which are rebuilt on
import. An imported agent starts with safe settings: whatever its archive's settings would grant (a model
and the secret it uses, `toolPermission: always`, network, MCP servers) is listed in `requested` and is in
effect only once a person adopts it with `agent.adoptSettings`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo, ModelSettings, ToolPermission
from protocol.models.base import Params, WireModel
from protocol.models.mcp import McpServerSettings

__all__ = [
    "GRANT_ID_PATTERN",
    "GrantKind",
    "SettingsGrant",
    "AgentExportParams",
    "AgentExportResult",
    "AgentImportParams",
    "AgentImportResult",
    "AgentAdoptSettingsParams",
    "AgentAdoptSettingsResult",
    "ARCHIVE_METHODS",
]

GRANT_ID_PATTERN = r"^(model|toolPermission|network|mcp:[a-z0-9-]{1,40})$"
"""A requested grant's id: `model`, `toolPermission`, `network`, or `mcp:<server name>`."""

GrantKind = Literal["model", "toolPermission", "network", "mcpServer"]


class SettingsGrant(WireModel):
    """One thing an imported archive's settings asked for that would grant a power; not in effect until adopted.

    Exactly one of `model`, `toolPermission`, `mcpServer` is set for those kinds; `network` carries none.
    """

    id: str = Field(pattern=GRANT_ID_PATTERN)
    kind: GrantKind
    summary: str = Field(description="What adopting it would allow, in a sentence a person can judge.")
    secrets: list[str] = Field(default_factory=list, description="The names of stored secrets it would use.")
    model: ModelSettings | None = None
    tool_permission: ToolPermission | None = None
    mcp_server: McpServerSettings | None = None


class AgentExportParams(Params):
    """`path` is where the host writes the archive; an existing file is never replaced. `withKnowledge` adds the
    agent's knowledge (its sources and chunks, no vectors; imported paused); without it none is carried."""

    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    path: str = Field(min_length=1)
    with_knowledge: bool = False


class AgentExportResult(WireModel):
    path: str
    bytes: int
    records: int
    events: int


class AgentImportParams(Params):
    """`agentId` gives the imported agent another id than the one it was exported with."""

    path: str = Field(min_length=1)
    agent_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)


class AgentImportResult(WireModel):
    """`signed`: the archive carries this installation's signature over exactly what it holds, so its facts keep
    their trust. Otherwise `reason` says why not, and every standing fact of the archive is a proposal waiting
    for a person's review (`proposed` of them; `leftOut` were not carried: secrets or malformed)."""

    agent: AgentInfo
    records: int
    events: int
    signed: bool
    reason: str | None = None
    proposed: int = 0
    left_out: int = 0
    requested: list[SettingsGrant] = Field(
        default_factory=list,
        description="What the archive's settings asked for; none of it is in effect until adopted.",
    )


class AgentAdoptSettingsParams(Params):
    """Put in effect what an imported archive's settings asked for, by grant id; with no ids, list what waits.

    Each grant is checked as `agent.update` checks settings (an MCP server's program and secrets must exist).
    """

    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    grants: list[str] = Field(default_factory=list, max_length=100)


class AgentAdoptSettingsResult(WireModel):
    agent: AgentInfo
    adopted: list[SettingsGrant]
    pending: list[SettingsGrant] = Field(description="What still waits for a person's word.")


ARCHIVE_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent.export": (AgentExportParams, AgentExportResult),
    "agent.import": (AgentImportParams, AgentImportResult),
    "agent.adoptSettings": (AgentAdoptSettingsParams, AgentAdoptSettingsResult),
}
