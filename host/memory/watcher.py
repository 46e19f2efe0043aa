"""Watch every agent's MEMORY.md and import a person's edits as `human` events.

The host runs `watch_memory_views` in its task group for the life of the process. The host's own writes
of MEMORY.md also wake the watcher; the store recognises them (the file equals what it last wrote) and
does nothing. Edits made while the host was down are imported when a memory is opened. A failure with one
agent's file is logged and never ends the watch of the others.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from watchfiles import Change, awatch

from host.memory.errors import MemoryStoreError
from host.memory.hub import MemoryHub

__all__ = ["watch_memory_views"]

logger = logging.getLogger(__name__)

_VIEW = "MEMORY.md"


def _agent_of(path: str, agents_dir: Path) -> str | None:
    candidate = Path(path)
    if candidate.name != _VIEW or candidate.parent.name != "memory":
        return None
    agent_dir = candidate.parent.parent
    return agent_dir.name if agent_dir.parent == agents_dir else None


async def watch_memory_views(
    hub: MemoryHub, stop_event: asyncio.Event, *, ready: asyncio.Event | None = None, debounce_ms: int = 200
) -> None:
    """Import MEMORY.md edits until `stop_event` is set.

    Args:
        hub: the host's memory hub (memories are opened on demand).
        stop_event: set it to stop watching.
        ready: set once the watch is in place (tests wait on it before editing).
        debounce_ms: how long changes are gathered before they are handled.
    """
    agents_dir = hub.agents_dir
    agents_dir.mkdir(parents=True, exist_ok=True)
    watcher = awatch(
        agents_dir, stop_event=stop_event, debounce=debounce_ms, step=50, yield_on_timeout=True, rust_timeout=200
    )
    first = True
    async for changes in watcher:
        if first and ready is not None:
            ready.set()
        first = False
        touched = {
            agent_id
            for change, path in changes
            if change != Change.deleted or Path(path).name == _VIEW
            if (agent_id := _agent_of(path, agents_dir)) is not None
        }
        for agent_id in sorted(touched):
            try:
                await hub.get(agent_id).import_view_edits()
            except MemoryStoreError as exc:
                logger.warning("MEMORY.md of %s was not imported: %s", agent_id, exc.message)
            except Exception:  # one agent's failure must never stop the watch of every other agent
                logger.exception("MEMORY.md of %s could not be handled", agent_id)
