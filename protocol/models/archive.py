"""Wire models for carrying an agent: `agent.export` writes one archive, `agent.import` makes an agent of it.

The archive holds the agent's profile, settings, transcript and memory ledger; never secrets and never
derived files (index, MEMORY.md, prompt cache), which are rebuilt on import.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo
from protocol.models.base import Params, WireModel

__all__ = [
    "AgentExportParams",
    "AgentExportResult",
    "AgentImportParams",
    "AgentImportResult",
    "ARCHIVE_METHODS",
]


class AgentExportParams(Params):
    """`path` is where the host writes the archive; an existing file is never replaced."""

    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    path: str = Field(min_length=1)


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
    agent: AgentInfo
    records: int
    events: int


ARCHIVE_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent.export": (AgentExportParams, AgentExportResult),
    "agent.import": (AgentImportParams, AgentImportResult),
}
