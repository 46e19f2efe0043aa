"""What the kernel sends the host: turn events, `mcp.status`, `tool.call` for host tools, `approval.request`."""

from __future__ import annotations

from host.runs.approval_desk import ApprovalDesk
from host.runs.host_tools import HostTools
from host.runs.kernel_events import KernelEvents
from host.runs.mcp_board import McpBoard
from protocol.dispatch import Router
from protocol.models.kernel import (
    ApprovalRequestParams,
    ToolCallParams,
    TurnDeltaEvent,
    TurnEndedEvent,
    TurnMessageEvent,
    TurnToolEvent,
)
from protocol.models.mcp import McpStatusEvent

__all__ = ["register_kernel_calls"]


def register_kernel_calls(
    router: Router, events: KernelEvents, host_tools: HostTools, approvals: ApprovalDesk, mcp: McpBoard | None = None
) -> None:
    """Add the kernel's notifications and requests to `router`."""
    if mcp is not None:
        router.add("mcp.status", McpStatusEvent, mcp.status)
    router.add("turn.delta", TurnDeltaEvent, events.delta)
    router.add("turn.message", TurnMessageEvent, events.message)
    router.add("turn.tool", TurnToolEvent, events.tool)
    router.add("turn.ended", TurnEndedEvent, events.ended)
    router.add("tool.call", ToolCallParams, host_tools.call)
    router.add("approval.request", ApprovalRequestParams, approvals.request)
