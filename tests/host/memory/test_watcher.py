"""The watcher imports a person's MEMORY.md edit while the host runs, and ignores the host's own writes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from host.memory import Evidence, MemoryEvent
from host.memory.hub import MemoryHub
from host.memory.watcher import watch_memory_views

USER = Evidence("user")


def test_a_persons_edit_is_imported_and_the_hosts_own_writes_are_not(
    tmp_path: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        changed = asyncio.Event()

        def on_event(event: MemoryEvent) -> None:
            changed.set()

        hub = MemoryHub(tmp_path, on_event=on_event, clock=clock)
        (tmp_path / "agents" / "ada").mkdir(parents=True)
        store = hub.get("ada")
        await store.note("User likes tea", evidence=USER)
        stop, ready = asyncio.Event(), asyncio.Event()
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(watch_memory_views(hub, stop, ready=ready, debounce_ms=50))
                async with asyncio.timeout(10):
                    await ready.wait()
                await store.note("User likes jazz", evidence=USER)
                view = store.view_path.read_text(encoding="utf-8")
                store.view_path.write_text(view.replace("## Log\n", "## Log\n\n- User went hiking\n"), encoding="utf-8")
                async with asyncio.timeout(10):
                    while "User went hiking" not in [f.text for f in store.standing().current]:
                        changed.clear()
                        await changed.wait()
                stop.set()
            assert [(r.source, r.tier) for r in store.history()] == [
                ("user", "note"),
                ("user", "note"),
                ("human", "log"),
            ]
        finally:
            hub.close()

    asyncio.run(main())
