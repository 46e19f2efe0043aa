"""The live state of every agent's MCP servers, as the kernel reports it, for `agent.get` and `mcp.status`.

The kernel's `mcp.status` names a session (the agent id) and a server; the board keeps the latest state of
each and passes the event on to the shell as `mcp.status` with the agent's id. A configured server the kernel
has not reported is `stopped`. When the kernel goes down every server is stopped with it; a deleted agent's or
a reconfigured agent's entries are forgotten. A failure keeps its stderr tail and likely cause until the next
report. Nothing here holds a secret: stderr tails arrive withheld.
"""

from __future__ import annotations

from host.runs.scheduler import Notify
from protocol.models.agents import AgentSettings
from protocol.models.mcp import McpServerState, McpServerStatusEvent, McpStatusEvent

__all__ = ["McpBoard"]


class McpBoard:
    """Args:
    notify: sends an event to the shell.
    """

    def __init__(self, notify: Notify) -> None:
        self._notify = notify
        self._states: dict[tuple[str, str], McpServerState] = {}

    async def status(self, event: McpStatusEvent) -> None:
        """The kernel's `mcp.status`: remember it, and tell the shell."""
        state = McpServerState(
            name=event.server,
            state=event.state,
            tool_count=event.tool_count,
            error=event.error,
            stderr_tail=event.stderr_tail,
            cause=event.cause,
        )
        self._states[(event.session, event.server)] = state
        await self._notify(
            "mcp.status",
            McpServerStatusEvent(
                agent_id=event.session,
                server=event.server,
                state=event.state,
                tool_count=event.tool_count,
                error=event.error,
                stderr_tail=event.stderr_tail,
                cause=event.cause,
            ),
        )

    def states(self, agent_id: str, settings: AgentSettings) -> list[McpServerState]:
        """The state of each server the agent has configured, in its settings' order."""
        return [
            self._states.get((agent_id, server.name)) or McpServerState(name=server.name)
            for server in settings.mcp_servers
        ]

    def forget(self, agent_id: str) -> None:
        """Drop what is known of the agent's servers (deleted, or its servers were reconfigured and stopped)."""
        for key in [key for key in self._states if key[0] == agent_id]:
            del self._states[key]

    def kernel_down(self) -> None:
        """The kernel, and every server with it, is gone."""
        for key, state in self._states.items():
            if state.state != "failed":
                self._states[key] = McpServerState(name=state.name, error="the kernel stopped")
