"""Run methods: `agent.send`, `agent.cancel` and `agent.decideTool`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from host.rpc.table import ShellTable
from host.runs.approval_desk import ApprovalDesk
from host.together.delivery import Deliveries
from protocol.models.agents import AgentCancelParams, AgentCancelResult, AgentSendParams, AgentSendResult
from protocol.models.host import DecideToolParams

__all__ = ["register_run_methods"]


def register_run_methods(
    table: ShellTable,
    deliveries: Deliveries,
    approvals: ApprovalDesk,
    *,
    after_send: Callable[[str, str], Awaitable[None]] | None = None,
) -> None:
    """Add the run methods to `table`; `after_send(agentId, runId)` hears of each person's message once it is
    accepted (the budget's warning)."""

    async def send(p: AgentSendParams) -> AgentSendResult:
        attachments = [a.model_dump(mode="json", exclude_none=True) for a in p.attachments or []]
        run_id, seq, position = await deliveries.send(
            p.agent_id, p.text, interrupt=p.interrupt, project_root=p.project_root, attachments=attachments
        )
        if after_send is not None:
            await after_send(p.agent_id, run_id)
        return AgentSendResult(run_id=run_id, seq=seq, position=position)

    async def cancel(p: AgentCancelParams) -> AgentCancelResult:
        return AgentCancelResult(cancelled=await deliveries.cancel(p.agent_id, p.run_id))

    table.add("agent.send", AgentSendParams, send)
    table.add("agent.cancel", AgentCancelParams, cancel)
    table.add("agent.decideTool", DecideToolParams, approvals.decide)
