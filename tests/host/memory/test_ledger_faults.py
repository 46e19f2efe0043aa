"""Issue 11.3: the ledger never drops an acknowledged record: damage is kept and named, a failed append is
cut back, a write whose ledger append succeeded is acknowledged, and verify never mistakes an append in
progress for damage."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, LedgerWriteError, MemoryStore
from host.memory.ledger import DAMAGED_SUFFIX, TORN_SUFFIX
from protocol.errors import STORAGE_FAILED

USER = Evidence("user")


def ledger_path(agent_dir: Path) -> Path:
    return agent_dir / "memory" / "ledger.jsonl"


def test_a_damaged_complete_last_line_is_moved_aside_and_verify_names_it(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note("User likes tea", evidence=USER)
        await store.note("User likes jazz", evidence=USER)
        store.close()
        path = ledger_path(agent_dir)
        lines = path.read_bytes().splitlines(keepends=True)
        damaged = lines[-1].replace(b'"seq":2', b'"seq":"two"')
        path.write_bytes(b"".join(lines[:-1]) + damaged)
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert [f.text for f in reopened.standing().current] == ["User likes tea"]
            assert path.with_name("ledger.jsonl" + DAMAGED_SUFFIX).read_bytes() == damaged
            report = reopened.verify()
            assert not report.ok and report.first_bad_seq == 2
            assert report.problem is not None and "ledger.jsonl.damaged" in report.problem

    asyncio.run(main())


def test_a_torn_last_line_is_kept_aside_and_verify_passes(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note("User likes tea", evidence=USER)
        store.close()
        with open(ledger_path(agent_dir), "ab") as handle:
            handle.write(b'{"seq":2,"id":"m-')
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert reopened.verify().ok
            assert ledger_path(agent_dir).with_name("ledger.jsonl" + TORN_SUFFIX).read_bytes() == b'{"seq":2,"id":"m-\n'

    asyncio.run(main())


def test_a_failed_append_is_cut_back_and_the_next_note_is_not_appended_to_a_fragment(
    agent_dir: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        if len(data) > 64:
            real_write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note("User likes tea", evidence=USER)
        size = ledger_path(agent_dir).stat().st_size
        with monkeypatch.context() as patch:
            patch.setattr("host.memory.ledger.os.write", half_then_full)
            with pytest.raises(LedgerWriteError) as failed:
                await store.note("User likes jazz", evidence=USER)
        assert failed.value.code == STORAGE_FAILED
        assert ledger_path(agent_dir).stat().st_size == size
        await store.note("User likes rain", evidence=USER)
        store.close()
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert [f.text for f in reopened.standing().current] == ["User likes tea", "User likes rain"]
            assert reopened.verify().ok
            for line in ledger_path(agent_dir).read_bytes().splitlines():
                json.loads(line)

    asyncio.run(main())


def test_a_note_is_acknowledged_when_its_ledger_write_succeeded_though_the_view_could_not_be_written(
    agent_dir: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(path: Path, data: bytes, *, mode: int = 0o644) -> bytes | None:
        raise OSError(errno.ENOSPC, "No space left on device")

    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            with monkeypatch.context() as patch:
                patch.setattr("host.memory.view_sync.swap_bytes_atomic", no_space)
                outcome = await store.note("User likes tea", evidence=USER)
            assert outcome.kind == "recorded" and [f.text for f in store.standing().current] == ["User likes tea"]
            await store.note("User likes jazz", evidence=USER)
            assert "User likes tea" in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_verify_never_reads_a_half_appended_last_line(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    """What a worker thread sees while the owner's append is between its write and its fsync."""

    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            await store.note("User likes tea", evidence=USER)
            with open(ledger_path(agent_dir), "ab") as handle:
                handle.write(b'{"seq":2,"id":"m-0000')  # an append caught halfway
            report = await asyncio.to_thread(store.verify)
            assert report.ok and report.count == 1

    asyncio.run(main())


def test_an_erase_keeps_the_ledger_private(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            gone = await store.note("User likes tea", evidence=USER)
            await store.note("User likes jazz", evidence=USER)
            assert gone.fact is not None
            await store.erase(gone.fact.id)
            assert ledger_path(agent_dir).stat().st_mode & 0o777 == 0o600

    asyncio.run(main())
