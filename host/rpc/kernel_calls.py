"""What the kernel sends the host: turn events, `tool.call` for host-executed tools, `approval.request`."""

from __future__ import annotations

from host.runs.approval_desk import ApprovalDesk
from host.runs.host_tools import HostTools
from host.runs.kernel_events import KernelEvents
from protocol.dispatch import Router
from protocol.models.kernel import (
    ApprovalRequestParams,
    ToolCallParams,
    TurnDeltaEvent,
    TurnEndedEvent,
    TurnMessageEvent,
    TurnToolEvent,
)

__all__ = ["register_kernel_calls"]


def register_kernel_calls(
    router: Router, events: KernelEvents, host_tools: HostTools, approvals: ApprovalDesk
) -> None:
    """Add the kernel's notifications and requests to `router`."""
    router.add("turn.delta", TurnDeltaEvent, events.delta)
    router.add("turn.message", TurnMessageEvent, events.message)
    router.add("turn.tool", TurnToolEvent, events.tool)
    router.add("turn.ended", TurnEndedEvent, events.ended)
    router.add("tool.call", ToolCallParams, host_tools.call)
    router.add("approval.request", ApprovalRequestParams, approvals.request)
