"""`agent.export` and `agent.import`: carry an agent to another data directory (or machine) in one file."""

from __future__ import annotations

from pathlib import Path

from host.agent_service import AgentService
from host.archive_service import ArchiveService
from host.rpc.table import ShellTable
from protocol.models.archive import AgentExportParams, AgentExportResult, AgentImportParams, AgentImportResult

__all__ = ["register_archive_methods"]


def register_archive_methods(table: ShellTable, archives: ArchiveService, agents: AgentService) -> None:
    """Add `agent.export` and `agent.import` to `table`."""

    async def export(p: AgentExportParams) -> AgentExportResult:
        return archives.export(p.agent_id, Path(p.path))

    async def import_agent(p: AgentImportParams) -> AgentImportResult:
        agent_id, records, events = archives.import_archive(Path(p.path), p.agent_id)
        await agents.changed(agent_id)
        return AgentImportResult(agent=agents.get(agent_id), records=records, events=events)

    table.add("agent.export", AgentExportParams, export)
    table.add("agent.import", AgentImportParams, import_agent)
