"""The host's run events, fanned out to whoever follows an agent: one queue per follower.

The host connection's reader calls the handlers in order and must never wait on a person, so a handler only
puts the event on each follower's queue; the follower (a prompt in progress) does the slow work. Events of an
agent nobody follows are dropped. When the host connection is lost every follower hears `HostGone`, since no
end of its run will come.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from protocol.dispatch import Router
from protocol.models.host import AgentDeltaEvent, AgentEndedEvent, AgentMessageEvent, AgentToolEvent

__all__ = ["EventHub", "HostGone", "RunEvent", "Followed"]

RunEvent = AgentDeltaEvent | AgentMessageEvent | AgentToolEvent | AgentEndedEvent


@dataclass(frozen=True, slots=True)
class HostGone:
    """The host connection was lost: what a follower was waiting for will not come."""

    reason: str


Followed = RunEvent | HostGone


class EventHub:
    def __init__(self) -> None:
        self._followers: dict[str, list[asyncio.Queue[Followed]]] = {}

    def register(self, router: Router) -> None:
        """Route the host's run events into the hub."""
        router.add("agent.delta", AgentDeltaEvent, self._put)
        router.add("agent.message", AgentMessageEvent, self._put)
        router.add("agent.tool", AgentToolEvent, self._put)
        router.add("agent.ended", AgentEndedEvent, self._put)

    async def _put(self, event: RunEvent) -> None:
        for queue in self._followers.get(event.agent_id, []):
            queue.put_nowait(event)

    def host_gone(self, reason: str) -> None:
        """Tell every follower the connection is lost."""
        for queues in self._followers.values():
            for queue in queues:
                queue.put_nowait(HostGone(reason))

    @contextmanager
    def follow(self, agent_id: str) -> Iterator[asyncio.Queue[Followed]]:
        """A queue of the agent's run events from now until the block ends."""
        queue: asyncio.Queue[Followed] = asyncio.Queue()
        self._followers.setdefault(agent_id, []).append(queue)
        try:
            yield queue
        finally:
            self._followers[agent_id].remove(queue)
            if not self._followers[agent_id]:
                del self._followers[agent_id]
