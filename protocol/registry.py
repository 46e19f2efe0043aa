"""Every method and event of the wire, by name: the source for `hearth schema` and the golden tests.

Each method maps to (params model, result model); each event to its model. A new message is added here
once, and the schema export and the golden-file completeness test follow.
"""

from __future__ import annotations

from pydantic import BaseModel

from protocol.models import agents, host, kernel, mcp, warmup
from protocol.models.agent_dir import AGENT_DIR_METHODS
from protocol.models.archive import ARCHIVE_METHODS
from protocol.models.base import Empty, EmptyParams
from protocol.models.knowledge import KNOWLEDGE_EVENTS, KNOWLEDGE_METHODS, KNOWLEDGE_TOOLS, SUGGESTION_TOOLS
from protocol.models.memory import MEMORY_EVENTS, MEMORY_METHODS
from protocol.models.proposals import PROPOSAL_METHODS
from protocol.models.schedules import SCHEDULE_EVENTS, SCHEDULE_METHODS, SCHEDULE_TOOLS
from protocol.models.secrets import SECRETS_METHODS
from protocol.models.together import HOST_TOOLS as TOGETHER_TOOLS
from protocol.models.transcript import HISTORY_TOOLS
from protocol.models.works import WORK_EVENTS, WORK_METHODS

__all__ = [
    "HOST_METHODS",
    "HOST_EVENTS",
    "HOST_TOOLS",
    "KERNEL_METHODS",
    "KERNEL_EVENTS",
    "KERNEL_CALLS",
    "all_messages",
]

Method = tuple[type[BaseModel], type[BaseModel]]

HOST_TOOLS: dict[str, type[BaseModel]] = {
    **TOGETHER_TOOLS,
    **SCHEDULE_TOOLS,
    **KNOWLEDGE_TOOLS,
    **SUGGESTION_TOOLS,
    **HISTORY_TOOLS,
}
"""Every host-executed tool whose arguments are a wire model, by its exact name."""

HOST_METHODS: dict[str, Method] = {
    "initialize": (host.InitializeParams, host.InitializeResult),
    "ping": (EmptyParams, Empty),
    "shutdown": (EmptyParams, Empty),
    "host.status": (EmptyParams, host.HostStatusResult),
    "settings.get": (EmptyParams, host.HostSettings),
    "settings.set": (host.SettingsSetParams, host.HostSettings),
    "agent.create": (agents.AgentCreateParams, agents.AgentInfo),
    "agent.list": (EmptyParams, agents.AgentListResult),
    "agent.get": (agents.AgentRef, agents.AgentInfo),
    "agent.update": (agents.AgentUpdateParams, agents.AgentInfo),
    "agent.delete": (agents.AgentRef, agents.AgentDeleteResult),
    "agent.send": (agents.AgentSendParams, agents.AgentSendResult),
    "agent.cancel": (agents.AgentCancelParams, agents.AgentCancelResult),
    "agent.transcript": (agents.AgentTranscriptParams, agents.AgentTranscriptResult),
    "agent.decideTool": (host.DecideToolParams, host.DecideToolResult),
    **AGENT_DIR_METHODS,
    **SECRETS_METHODS,
    **MEMORY_METHODS,
    **WORK_METHODS,
    **ARCHIVE_METHODS,
    **SCHEDULE_METHODS,
    **KNOWLEDGE_METHODS,
    **PROPOSAL_METHODS,
}

HOST_EVENTS: dict[str, type[BaseModel]] = {
    "agent.updated": host.AgentUpdatedEvent,
    "agent.started": host.AgentStartedEvent,
    "agent.delta": host.AgentDeltaEvent,
    "agent.message": host.AgentMessageEvent,
    "agent.ended": host.AgentEndedEvent,
    "agent.error": host.AgentErrorEvent,
    "agent.tool": host.AgentToolEvent,
    "kernel.down": host.KernelDownEvent,
    "kernel.up": host.KernelUpEvent,
    "host.eventsDropped": host.EventsDroppedEvent,
    "model.status": warmup.ModelStatusEvent,
    "mcp.status": mcp.McpServerStatusEvent,
    **MEMORY_EVENTS,
    **WORK_EVENTS,
    **SCHEDULE_EVENTS,
    **KNOWLEDGE_EVENTS,
}

KERNEL_METHODS: dict[str, Method] = {
    "initialize": (kernel.KernelInitializeParams, kernel.KernelInitializeResult),
    "turn.start": (kernel.TurnStartParams, kernel.TurnStartResult),
    "turn.cancel": (kernel.RunRef, kernel.TurnCancelResult),
    "summarize": (kernel.SummarizeParams, kernel.SummarizeResult),
    "session.close": (kernel.SessionCloseParams, Empty),
    "model.warm": (warmup.ModelWarmParams, warmup.ModelWarmResult),
    "mcp.close": (mcp.McpCloseParams, Empty),
    "shutdown": (EmptyParams, Empty),
}

KERNEL_EVENTS: dict[str, type[BaseModel]] = {
    "turn.delta": kernel.TurnDeltaEvent,
    "turn.message": kernel.TurnMessageEvent,
    "turn.tool": kernel.TurnToolEvent,
    "turn.ended": kernel.TurnEndedEvent,
    "mcp.status": mcp.McpStatusEvent,
}

KERNEL_CALLS: dict[str, Method] = {
    "tool.call": (kernel.ToolCallParams, kernel.ToolCallResult),
    "approval.request": (kernel.ApprovalRequestParams, kernel.ApprovalRequestResult),
}


def all_messages() -> dict[str, type[BaseModel]]:
    """Every message by its golden-file stem: `<name>.params|result|event`, kernel ones prefixed `kernel-`,
    and the arguments of each host-executed tool as `tool-<name>.arguments`."""
    messages: dict[str, type[BaseModel]] = {}
    for prefix, methods in (("", HOST_METHODS), ("kernel-", KERNEL_METHODS), ("kernel-", KERNEL_CALLS)):
        for name, (params, result) in methods.items():
            messages[f"{prefix}{name}.params"] = params
            messages[f"{prefix}{name}.result"] = result
    for prefix, events in (("", HOST_EVENTS), ("kernel-", KERNEL_EVENTS)):
        for name, event in events.items():
            messages[f"{prefix}{name}.event"] = event
    for name, arguments in HOST_TOOLS.items():
        messages[f"tool-{name}.arguments"] = arguments
    return messages
