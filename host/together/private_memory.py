"""The agent's own memory tools as a host-tool provider: offered in direct runs only, never in a Work run.

A run a peer's wake started writes with the peer as its source (`peer:<agentId>`), so what it notes is
proposed until a person reviews it; a person's message or the agent itself writes as `agent`.
"""

from __future__ import annotations

from host.runs.host_tools import HostCall
from host.runs.memory_service import MemoryService
from host.runs.scheduler import RunOrigin
from host.store.agents import Agent
from protocol.models.kernel import ToolCallParams, ToolCallResult, ToolSpec

__all__ = ["PrivateMemoryTools"]


class PrivateMemoryTools:
    def __init__(self, memory: MemoryService) -> None:
        self._memory = memory

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        return self._memory.tools(agent) if origin.work_id is None else []

    async def call(self, call: HostCall) -> ToolCallResult:
        peer = call.origin.from_agent
        params = ToolCallParams(
            run_id=call.run.run_id, tool_call_id=call.tool_call_id, name=call.name, arguments=call.arguments
        )
        return await self._memory.call_tool(params, source=f"peer:{peer}" if peer else "agent")
