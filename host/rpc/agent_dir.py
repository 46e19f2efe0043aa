"""Agent directory methods: `agent.files`, `agent.readFile` and `agent.inspect` (read-only).

File reads run in a worker thread so a large file never stalls the host.
"""

from __future__ import annotations

import asyncio

from host.agent_dir import AgentDirectory
from host.rpc.table import ShellTable
from protocol.models.agent_dir import (
    AgentFilesParams,
    AgentFilesResult,
    AgentInspectResult,
    AgentReadFileParams,
    AgentReadFileResult,
)
from protocol.models.agents import AgentRef

__all__ = ["register_agent_dir_methods"]


def register_agent_dir_methods(table: ShellTable, directory: AgentDirectory) -> None:
    """Add the read-only agent directory methods to `table`."""

    async def files(p: AgentFilesParams) -> AgentFilesResult:
        return await asyncio.to_thread(directory.files, p.agent_id, p.path)

    async def read_file(p: AgentReadFileParams) -> AgentReadFileResult:
        return await asyncio.to_thread(directory.read, p.agent_id, p.path, p.max_bytes)

    async def inspect(p: AgentRef) -> AgentInspectResult:
        return directory.inspect(p.agent_id)

    table.add("agent.files", AgentFilesParams, files)
    table.add("agent.readFile", AgentReadFileParams, read_file)
    table.add("agent.inspect", AgentRef, inspect)
