"""What the kernel sends the host: turn events, `tool.call` for host-executed tools, `approval.request`,
and `mcp.status`."""

from __future__ import annotations

from host.runs.approval_desk import ApprovalDesk
from host.runs.host_tools import HostTools
from host.runs.mcp_board import McpBoard
from host.runs.scheduler import RunManager
from protocol.dispatch import Router
from protocol.models.kernel import (
    ApprovalRequestParams,
    ApprovalRequestResult,
    ToolCallParams,
    ToolCallResult,
    TurnDeltaEvent,
    TurnEndedEvent,
    TurnMessageEvent,
    TurnToolEvent,
)
from protocol.models.mcp import McpStatusEvent

__all__ = ["register_kernel_calls"]


def register_kernel_calls(
    router: Router, runs: RunManager, host_tools: HostTools, approvals: ApprovalDesk, mcp: McpBoard | None = None
) -> None:
    """Add the kernel's notifications and requests to `router`; turn events go to their run's feed."""
    if mcp is not None:
        router.add("mcp.status", McpStatusEvent, mcp.status)
    router.add("turn.delta", TurnDeltaEvent, runs.deliver)
    router.add("turn.message", TurnMessageEvent, runs.deliver)
    router.add("turn.tool", TurnToolEvent, runs.deliver)
    router.add("turn.ended", TurnEndedEvent, runs.deliver)

    # A request about a run waits until what the kernel sent about it before has been recorded.
    async def tool_call(params: ToolCallParams) -> ToolCallResult:
        await runs.caught_up(params.run_id)
        return await host_tools.call(params)

    async def approval_request(params: ApprovalRequestParams) -> ApprovalRequestResult:
        await runs.caught_up(params.run_id)
        return await approvals.request(params)

    router.add("tool.call", ToolCallParams, tool_call)
    router.add("approval.request", ApprovalRequestParams, approval_request)
