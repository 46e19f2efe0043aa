"""What every test shell shares: a router that records the host's notifications, calls, and waits.

`TestShell.wait_for` waits on a condition for the first matching notification, with a timeout, instead of
sleeping; `send_and_wait` sends a message and returns the run's `agent.ended` (`idle_turn` also insists it
ended idle).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from protocol.dispatch import Router
from protocol.peer import JsonRpcPeer

__all__ = ["EventRecorder", "TestShell"]


class EventRecorder(Router):
    """A router that records every notification, whatever its name."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Condition()

    async def dispatch(self, message: dict[str, Any] | list[dict[str, Any]]) -> Any:
        if isinstance(message, dict) and "id" not in message:
            async with self.changed:
                self.events.append((message["method"], message.get("params") or {}))
                self.changed.notify_all()
            return None
        return await super().dispatch(message)


class TestShell:
    """The shell side of a host connection; subclasses connect `peer`."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self) -> None:
        self.router = EventRecorder()
        self.peer: JsonRpcPeer | None = None

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return self.router.events

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> Any:
        assert self.peer is not None
        return await self.peer.request(method, params or {}, timeout=timeout)

    async def wait_for(
        self,
        method: str,
        where: Callable[[dict[str, Any]], bool] = lambda _: True,
        *,
        timeout: float = 30,
        after: int = 0,
    ) -> dict[str, Any]:
        """The first recorded `method` notification whose params satisfy `where` (waits for it).

        `after` skips the first that many recorded events (pass `len(host.events)` to wait for a new one).
        """
        async with asyncio.timeout(timeout), self.router.changed:
            while True:
                for name, params in self.router.events[after:]:
                    if name == method and where(params):
                        return params
                await self.router.changed.wait()

    async def send_and_wait(self, agent_id: str, text: str, *, timeout: float = 30) -> dict[str, Any]:
        """Send `text` to `agent_id` and return the run's `agent.ended` params (with `runId`)."""
        sent = await self.call("agent.send", {"agentId": agent_id, "text": text})
        return await self.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"], timeout=timeout)

    async def idle_turn(self, agent_id: str, text: str, *, timeout: float = 30) -> dict[str, Any]:
        """`send_and_wait`, failing unless the run ended idle (the failure shows the `agent.ended` params)."""
        ended = await self.send_and_wait(agent_id, text, timeout=timeout)
        assert ended["reason"] == "idle", ended
        return ended

    def texts(self, agent_id: str, run_id: str) -> str:
        """The streamed text of one run, joined from its `agent.delta` events."""
        return "".join(
            p["text"]
            for m, p in self.events
            if m == "agent.delta" and p["agentId"] == agent_id and p["runId"] == run_id
        )
