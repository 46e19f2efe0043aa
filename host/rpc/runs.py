"""Run methods: `agent.send`, `agent.cancel` and `agent.decideTool`."""

from __future__ import annotations

from host.rpc.table import ShellTable
from host.runs.approval_desk import ApprovalDesk
from host.runs.scheduler import RunManager
from protocol.models.agents import AgentCancelResult, AgentRef, AgentSendParams, AgentSendResult
from protocol.models.host import DecideToolParams

__all__ = ["register_run_methods"]


def register_run_methods(table: ShellTable, runs: RunManager, approvals: ApprovalDesk) -> None:
    """Add the run methods to `table`."""

    async def send(p: AgentSendParams) -> AgentSendResult:
        run_id, seq = await runs.send(p.agent_id, p.text)
        return AgentSendResult(run_id=run_id, seq=seq)

    async def cancel(p: AgentRef) -> AgentCancelResult:
        return AgentCancelResult(cancelled=await runs.cancel_agent(p.agent_id))

    table.add("agent.send", AgentSendParams, send)
    table.add("agent.cancel", AgentRef, cancel)
    table.add("agent.decideTool", DecideToolParams, approvals.decide)
