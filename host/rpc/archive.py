"""`agent.export`, `agent.import` and `agent.adoptSettings`: carry an agent to another data directory (or machine)
in one file, and put in effect what its archive's settings asked for once a person says yes."""

from __future__ import annotations

from pathlib import Path

from host.agent_service import AgentService
from host.archive_service import ArchiveService
from host.rpc.table import ShellTable
from protocol.models.archive import (
    AgentAdoptSettingsParams,
    AgentAdoptSettingsResult,
    AgentExportParams,
    AgentExportResult,
    AgentImportParams,
    AgentImportResult,
)

__all__ = ["register_archive_methods"]


def register_archive_methods(table: ShellTable, archives: ArchiveService, agents: AgentService) -> None:
    """Add `agent.export`, `agent.import` and `agent.adoptSettings` to `table`."""

    async def export(p: AgentExportParams) -> AgentExportResult:
        return await archives.export(p.agent_id, Path(p.path), p.with_knowledge)

    async def import_agent(p: AgentImportParams) -> AgentImportResult:
        done = await archives.import_archive(Path(p.path), p.agent_id)
        await agents.changed(done.agent_id)
        return AgentImportResult(
            agent=agents.get(done.agent_id),
            records=done.records,
            events=done.events,
            signed=done.signed,
            reason=done.reason,
            proposed=done.proposed,
            left_out=done.left_out,
            requested=list(done.requested),
        )

    async def adopt(p: AgentAdoptSettingsParams) -> AgentAdoptSettingsResult:
        agent, adopted, pending = await archives.adopt(p.agent_id, p.grants)
        return AgentAdoptSettingsResult(agent=agent, adopted=adopted, pending=pending)

    table.add("agent.export", AgentExportParams, export)
    table.add("agent.import", AgentImportParams, import_agent)
    table.add("agent.adoptSettings", AgentAdoptSettingsParams, adopt)
