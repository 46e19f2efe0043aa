"""Issue 10.16: a memory write's disk waits (ledger fsync, MEMORY.md) run off the event loop, and still no
reader sees half a write, an acknowledged record is durable, and a write once begun reaches its end."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryEvent, MemoryStore
from host.memory.disk import DiskWork, run_inline

USER = Evidence("user")
LATER = "2100-01-01T00:00:00Z"


class SlowDisk:
    """`os.fsync` that, once armed, holds its `nth` call off the main thread until released (at most 5 s)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, nth: int = 1) -> None:
        self._real = os.fsync
        self._nth = nth
        self._calls = 0
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()
        monkeypatch.setattr("host.memory.ledger.os.fsync", self)

    def __call__(self, fd: int) -> None:
        if self.armed and threading.current_thread() is not threading.main_thread():
            self._calls += 1
            if self._calls == self._nth:
                self.entered.set()
                self.release.wait(timeout=5)
        self._real(fd)

    async def stalled(self) -> bool:
        """Whether the held fsync has begun (waited for off the loop, so the loop keeps running)."""
        return await asyncio.to_thread(self.entered.wait, 5)


def texts(store: MemoryStore, **when: str) -> list[str]:
    return [fact.text or "" for fact in store.list_facts("all", **when).facts]


def test_the_loop_runs_and_readers_see_the_old_state_while_a_notes_fsync_waits(
    store: MemoryStore, events: list[MemoryEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = SlowDisk(monkeypatch)

    async def peek() -> tuple[list[str], list[str], int, int]:
        return texts(store), texts(store, known_at=LATER), store.last_seq, len(store.committed_ledger().splitlines())

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        view = store.view_path.read_text(encoding="utf-8")
        disk.armed = True
        async with asyncio.TaskGroup() as tasks:
            noting = tasks.create_task(store.note("User likes jazz", evidence=USER))
            try:
                assert await disk.stalled()
                assert not noting.done()
                # Another coroutine runs meanwhile and reads the memory as it was before the note: the index,
                # the ledger replayed, the head and the acknowledged bytes alike.
                assert await tasks.create_task(peek()) == (["User likes tea"], ["User likes tea"], 1, 1)
                assert store.view_path.read_text(encoding="utf-8") == view
                assert len(events) == 1
            finally:
                disk.release.set()
        assert noting.result().kind == "recorded"
        assert await peek() == (["User likes tea", "User likes jazz"], ["User likes tea", "User likes jazz"], 2, 2)
        assert "User likes jazz" in store.view_path.read_text(encoding="utf-8")
        assert [event.kind for event in events] == ["changed", "changed"]

    asyncio.run(main())


def test_memory_md_is_written_off_the_loop_after_the_fold(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second fsync of a note is the new MEMORY.md's: the fact is readable, the note not yet answered."""
    disk = SlowDisk(monkeypatch, nth=2)

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        view = store.view_path.read_text(encoding="utf-8")
        disk.armed = True
        async with asyncio.TaskGroup() as tasks:
            noting = tasks.create_task(store.note("User likes jazz", evidence=USER))
            try:
                assert await disk.stalled()
                assert not noting.done()
                assert texts(store) == ["User likes tea", "User likes jazz"]
                assert store.view_path.read_text(encoding="utf-8") == view
            finally:
                disk.release.set()
        assert noting.result().kind == "recorded"
        assert "User likes jazz" in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_a_reader_finds_no_erased_text_anywhere_while_the_erase_writes_memory_md(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger is scrubbed in the same stretch as the fold, before the erase waits on the view's fsync."""
    disk = SlowDisk(monkeypatch, nth=2)

    async def main() -> None:
        doomed = await store.note("User's locker code hint is heron", evidence=USER)
        await store.note("User likes tea", evidence=USER)
        assert doomed.fact is not None
        disk.armed = True
        async with asyncio.TaskGroup() as tasks:
            erasing = tasks.create_task(store.erase(doomed.fact.id, reason="asked"))
            try:
                assert await disk.stalled()
                assert not erasing.done()
                assert b"heron" not in store.committed_ledger()
                assert not any("heron" in (record.text or "") for record in store.history())
                assert texts(store) == ["User likes tea"]
                assert "heron" in store.view_path.read_text(encoding="utf-8")  # its rewrite is the one held
            finally:
                disk.release.set()
        assert erasing.result().kind == "erased"
        assert "heron" not in store.view_path.read_text(encoding="utf-8")
        assert texts(store) == ["User likes tea"]

    asyncio.run(main())


def test_a_note_cancelled_while_its_fsync_waits_is_stored_whole_and_the_cancel_comes_after(
    agent_dir: Path, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = SlowDisk(monkeypatch)

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        disk.armed = True
        noting = asyncio.create_task(store.note("User likes jazz", evidence=USER))
        try:
            assert await disk.stalled()
            noting.cancel()
            assert await asyncio.to_thread(disk.entered.wait, 5)  # the loop turns: the cancel reaches the write
            assert not noting.done()
        finally:
            disk.release.set()
        with pytest.raises(asyncio.CancelledError):
            await noting
        # The cancelled note reached its end: the ledger, the index and the view all have it, and the next
        # write follows it on the chain.
        assert texts(store) == ["User likes tea", "User likes jazz"]
        after = await store.note("User likes chess", evidence=USER)
        assert [record.seq for record in after.records] == [3]
        assert "User likes jazz" in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())
    store.close()
    with MemoryStore(agent_dir) as reopened:
        assert reopened.verify().ok
        assert texts(reopened) == ["User likes tea", "User likes jazz", "User likes chess"]


def test_closing_a_memory_while_a_note_waits_on_the_disk_closes_it_once_the_note_is_stored(
    agent_dir: Path, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = SlowDisk(monkeypatch)

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        disk.armed = True
        async with asyncio.TaskGroup() as tasks:
            noting = tasks.create_task(store.note("User likes jazz", evidence=USER))
            try:
                assert await disk.stalled()
                store.close()
            finally:
                disk.release.set()
        outcome = noting.result()
        assert outcome.kind == "recorded" and outcome.fact is not None and outcome.fact.text == "User likes jazz"

    asyncio.run(main())
    with MemoryStore(agent_dir) as reopened:  # the ledger lock was released when the note ended
        assert texts(reopened) == ["User likes tea", "User likes jazz"]


def test_a_write_at_opening_that_would_wait_on_the_loop_is_refused() -> None:
    async def waits() -> int:
        await asyncio.sleep(0)
        return 1

    async def inline() -> int:
        return await DiskWork()(lambda: 7)

    assert run_inline(inline()) == 7
    with pytest.raises(RuntimeError):
        run_inline(waits())
