"""Agents as the shell sees them: created, described, changed and deleted across every part that holds them.

An agent lives in the store (its directory), in the run manager (its status), in the kernel (its
persistent shell) and in the memory hub (its open ledger). Deleting one stops its run, closes its kernel
session and its memory, then moves its directory to the trash. Every change is announced as
`agent.updated`. A name belongs to one agent (compared as a person reads it: trimmed, any case), so a
name always reaches the agent it was given to.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from host.errors import ConflictError, NotFoundError
from host.memory import MemoryHub
from host.runs.mcp_board import McpBoard
from host.runs.scheduler import Notify, RunManager
from host.store.agents import Agent, AgentStore, BrokenAgent, apply_settings_patch
from host.supervisor import KernelSupervisor
from protocol.errors import JsonRpcError
from protocol.models.agents import AgentInfo, AgentSettings, AgentSettingsPatch
from protocol.models.base import Empty
from protocol.models.host import AgentUpdatedEvent
from protocol.models.kernel import SessionCloseParams
from protocol.models.mcp import McpCloseParams
from protocol.models.together import QueuedRun

__all__ = ["AgentService"]

logger = logging.getLogger(__name__)


class AgentService:
    """Args:
    store: the agent store.
    runs: the run manager (for status, and to stop a deleted agent's run).
    kernel: the kernel supervisor (to close a deleted agent's shell).
    hub: the memory hub (to close a deleted agent's memory).
    notify: sends events to the shell.
    on_settings: told of an agent whose settings were just set (created or updated).
    mcp: the live state of the agents' MCP servers.
    check: refuses settings that cannot work (an MCP server whose program is missing), before they are written.

    `queue` gives what waits for an agent; `before_delete` / `after_delete` hooks run around a deletion;
    `after_settings` hooks are awaited once new settings are written (before the call answers).
    """

    def __init__(
        self,
        store: AgentStore,
        runs: RunManager,
        kernel: KernelSupervisor,
        hub: MemoryHub,
        notify: Notify,
        on_settings: Callable[[Agent], None] = lambda _: None,
        *,
        mcp: McpBoard | None = None,
        check: Callable[[AgentSettings], None] = lambda _: None,
    ) -> None:
        self.store = store
        self._on_settings = on_settings
        self._runs = runs
        self._kernel = kernel
        self._hub = hub
        self._notify = notify
        self.queue: Callable[[str], list[QueuedRun]] = lambda _: []
        self.before_delete: list[Callable[[str], Awaitable[None]]] = []
        self.after_delete: list[Callable[[str], Awaitable[None]]] = []
        self.after_settings: list[Callable[[Agent], Awaitable[None]]] = []
        self._mcp = mcp or McpBoard(notify)
        self._check = check
        self._naming = asyncio.Lock()

    def info(self, agent: Agent | BrokenAgent) -> AgentInfo:
        """The wire view of an agent; a broken one carries its `error` and what of it could be read."""
        if isinstance(agent, BrokenAgent):
            settings, error = agent.settings or AgentSettings(), agent.error.message
        else:
            settings, error = agent.settings, None
        return AgentInfo(
            agent_id=agent.agent_id,
            name=agent.name,
            created_at=agent.created_at,
            status=self._runs.status(agent.agent_id),
            settings=settings,
            queue=self.queue(agent.agent_id),
            mcp=self._mcp.states(agent.agent_id, settings),
            error=error,
        )

    async def changed(self, agent_id: str) -> None:
        """Announce `agent.updated` for `agent_id` (with `agent: null` once it is gone)."""
        info = self._current(agent_id)
        await self._notify("agent.updated", AgentUpdatedEvent(agent_id=agent_id, agent=info))

    def _current(self, agent_id: str) -> AgentInfo | None:
        try:
            return self.info(self.store.entry(agent_id))
        except NotFoundError:
            return None

    def _check_name(self, name: str, agent_id: str | None = None) -> None:
        """Refuse a name another agent already has.

        Raises:
            ConflictError: with the other agent's id, so the person can tell them apart.
        """
        wanted = name.strip().casefold()
        for entry in self.store.scan():
            if entry.agent_id != agent_id and entry.name.strip().casefold() == wanted:
                raise ConflictError(
                    f"an agent is already called {entry.name!r} (id {entry.agent_id}); give this one another name",
                    data={"agentId": entry.agent_id},
                )

    async def create(self, name: str, agent_id: str | None, patch: AgentSettingsPatch | None) -> AgentInfo:
        settings = apply_settings_patch(AgentSettings(), patch)
        self._check(settings)
        async with self._naming:  # two creates of one name at once: the second sees the first
            self._check_name(name)
            # The files are written and fsynced in a worker thread: one agent's disk work never stalls the loop.
            agent = await asyncio.to_thread(self.store.create, name, agent_id, settings)
        self._on_settings(agent)
        for hook in self.after_settings:
            await hook(agent)
        await self.changed(agent.agent_id)
        return self.info(agent)

    def all(self) -> list[AgentInfo]:
        """Every agent, a broken one listed with its `error` rather than hidden."""
        return [self.info(entry) for entry in self.store.scan()]

    def get(self, agent_id: str) -> AgentInfo:
        return self.info(self.store.get(agent_id))

    async def update(self, agent_id: str, name: str | None, patch: AgentSettingsPatch | None) -> AgentInfo:
        """Change an agent; when its MCP servers changed, the running ones are stopped (the next turn starts them)."""
        before = self.store.get(agent_id)
        self._check(apply_settings_patch(before.settings, patch))
        async with self._naming:
            if name is not None:
                self._check_name(name, agent_id)
            agent = await asyncio.to_thread(self.store.update, agent_id, name, patch)
        if patch is not None:
            self._on_settings(agent)
            for hook in self.after_settings:
                await hook(agent)
        if agent.settings.mcp_servers != before.settings.mcp_servers:
            await self._close_mcp(agent_id)
        await self.changed(agent.agent_id)
        return self.info(agent)

    async def _close_mcp(self, agent_id: str) -> None:
        self._mcp.forget(agent_id)
        try:
            await self._kernel.request("mcp.close", McpCloseParams(session=agent_id), Empty, timeout=30)
        except JsonRpcError as exc:
            # A kernel that is down has no servers running; the next turn starts them from the new settings.
            logger.info("could not stop %s's MCP servers now: %s", agent_id, exc.message)

    async def delete(self, agent_id: str) -> None:
        """Stop the agent's run, close its kernel session and memory, and move its directory to the trash."""
        self.store.get(agent_id)
        for hook in self.before_delete:
            await hook(agent_id)
        await self._runs.cancel(agent_id)
        try:
            await self._kernel.request("session.close", SessionCloseParams(session=agent_id), Empty, timeout=10)
        except JsonRpcError as exc:
            logger.warning("could not close %s's kernel session: %s", agent_id, exc.message)
        self._hub.close_agent(agent_id)
        self._mcp.forget(agent_id)
        await asyncio.to_thread(self.store.delete, agent_id)
        for hook in self.after_delete:
            await hook(agent_id)
        await self.changed(agent_id)

    def transcript_page(self, agent_id: str, before_seq: int | None, limit: int) -> tuple[list[dict[str, Any]], bool]:
        self.store.get(agent_id)
        return self.store.transcript(agent_id).page(before_seq, limit)
