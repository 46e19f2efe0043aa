"""Agent methods: `agent.create`, `list`, `get`, `update`, `delete` and `transcript`."""

from __future__ import annotations

from host.agent_service import AgentService
from host.rpc.table import ShellTable
from protocol.models.agents import (
    AgentCreateParams,
    AgentDeleteResult,
    AgentInfo,
    AgentListResult,
    AgentRef,
    AgentTranscriptParams,
    AgentTranscriptResult,
    AgentUpdateParams,
)
from protocol.models.base import EmptyParams

__all__ = ["register_agent_methods"]


def register_agent_methods(table: ShellTable, agents: AgentService) -> None:
    """Add the `agent.*` lifecycle methods to `table`, backed by `agents`."""

    async def create(p: AgentCreateParams) -> AgentInfo:
        return await agents.create(p.name, p.agent_id, p.settings)

    async def list_agents(_: EmptyParams) -> AgentListResult:
        return AgentListResult(agents=agents.all())

    async def get(p: AgentRef) -> AgentInfo:
        return agents.get(p.agent_id)

    async def update(p: AgentUpdateParams) -> AgentInfo:
        return await agents.update(p.agent_id, p.name, p.settings)

    async def delete(p: AgentRef) -> AgentDeleteResult:
        await agents.delete(p.agent_id)
        return AgentDeleteResult(deleted=True)

    async def transcript(p: AgentTranscriptParams) -> AgentTranscriptResult:
        events, has_more = agents.transcript_page(p.agent_id, p.before_seq, p.limit)
        return AgentTranscriptResult.model_validate({"events": events, "hasMore": has_more})

    table.add("agent.create", AgentCreateParams, create)
    table.add("agent.list", EmptyParams, list_agents)
    table.add("agent.get", AgentRef, get)
    table.add("agent.update", AgentUpdateParams, update)
    table.add("agent.delete", AgentRef, delete)
    table.add("agent.transcript", AgentTranscriptParams, transcript)
