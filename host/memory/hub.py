"""`MemoryHub`: the host's one registry of open memories, keyed by agent id.

The host creates one hub for its data directory. A memory is opened on first use and kept open, so its
ledger lock, index connection and projection are reused by every turn; `close_agent` releases one (before
an agent is deleted or moved), `close` releases all. Change notices of every memory go to one callback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from host.memory.erasure import Copies
from host.memory.errors import UnknownAgentError
from host.memory.lifetimes import Lifetimes
from host.memory.store import MemoryStore
from host.memory.values import EventSink

__all__ = ["MemoryHub"]

_AGENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class MemoryHub:
    """Open memories of the agents under `<data_dir>/agents/`."""

    def __init__(
        self,
        data_dir: Path,
        *,
        on_event: EventSink | None = None,
        clock: Callable[[], datetime] | None = None,
        copies: Copies | None = None,
        lifetimes: Callable[[str], Lifetimes] | None = None,
    ) -> None:
        """Args:
        data_dir: the host's data directory.
        on_event: receives every `MemoryEvent` (the host turns them into memory.changed / memory.proposed).
        clock: the time source (tests pass a fake one).
        copies: scrubs an agent's messages kept outside its directory, for an erase's conversation scrub.
        lifetimes: an agent's lifetime in days per tier as its person sets it now (its `ttl` setting).
        """
        self.agents_dir = data_dir / "agents"
        self._on_event = on_event
        self._clock = clock
        self._copies = copies
        self._lifetimes = lifetimes
        self._stores: dict[str, MemoryStore] = {}

    def agent_dir(self, agent_id: str) -> Path:
        """The directory of an existing agent.

        Raises:
            UnknownAgentError: the id is malformed or no such agent directory exists.
        """
        if not _AGENT_ID.match(agent_id) or not (self.agents_dir / agent_id).is_dir():
            raise UnknownAgentError(f"no agent {agent_id!r}")
        return self.agents_dir / agent_id

    def get(self, agent_id: str) -> MemoryStore:
        """The agent's memory, opened on first use.

        Raises:
            UnknownAgentError: no such agent.
            MemoryLockedError: another process holds this memory.
        """
        store = self._stores.get(agent_id)
        if store is None:
            store = MemoryStore(
                self.agent_dir(agent_id),
                agent_id=agent_id,
                on_event=self._on_event,
                clock=self._clock,
                copies=self._copies,
                lifetimes=self._lifetimes_of(agent_id),
            )
            self._stores[agent_id] = store
        return store

    def _lifetimes_of(self, agent_id: str) -> Callable[[], Lifetimes] | None:
        lifetimes = self._lifetimes
        return None if lifetimes is None else lambda: lifetimes(agent_id)

    def opened(self, agent_id: str) -> MemoryStore | None:
        """The agent's memory if it is open, without opening it."""
        return self._stores.get(agent_id)

    def open_agent_ids(self) -> list[str]:
        return sorted(self._stores)

    def close_agent(self, agent_id: str) -> None:
        """Close one agent's memory (releasing its ledger lock); a no-op when it is not open."""
        store = self._stores.pop(agent_id, None)
        if store is not None:
            store.close()

    def close(self) -> None:
        for agent_id in list(self._stores):
            self.close_agent(agent_id)
