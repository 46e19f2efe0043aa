"""The index is derived: deleted, corrupt or stale, it is rebuilt from the ledger and nothing is lost."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore

USER = Evidence("user")


def fill(agent_dir: Path, clock: Callable[[], datetime]) -> tuple[list[str], str]:
    async def main() -> tuple[list[str], str]:
        with MemoryStore(agent_dir, clock=clock) as store:
            await store.note("User lives in Berlin", evidence=USER, key="user.home_city")
            await store.note("User lives in Lisbon", evidence=USER, key="user.home_city")
            tea = await store.note("User likes tea", evidence=USER)
            await store.note("Acme was founded in 1999", evidence=Evidence("tool:web_search"))
            gone = await store.note("User's cat is called Miso", evidence=USER)
            assert gone.fact is not None and tea.fact is not None
            await store.retract(gone.fact.id, evidence=USER)
            return [f.id for f in store.list_facts("all").facts], tea.fact.id

    return asyncio.run(main())


def snapshot(store: MemoryStore) -> tuple[object, ...]:
    standing = store.standing()
    return (
        [f.id for f in standing.current],
        [[f.id for f in c.facts] for c in standing.conflicts],
        [f.id for f in store.list_facts("proposed").facts],
        [h.fact.id for h in store.search("tea Lisbon Berlin")],
        store.epoch_mark,
    )


@pytest.mark.parametrize("damage", ["delete", "garbage"])
def test_a_lost_or_damaged_index_is_rebuilt_and_loses_nothing(
    agent_dir: Path, clock: Callable[[], datetime], damage: str
) -> None:
    fill(agent_dir, clock)
    store = MemoryStore(agent_dir, clock=clock)
    before = snapshot(store)
    store.close()
    index = agent_dir / "memory" / "index.sqlite"
    if damage == "delete":
        index.unlink()
    else:
        index.write_bytes(b"this is not a database" * 100)
    with MemoryStore(agent_dir, clock=clock) as store:
        assert snapshot(store) == before


def test_an_index_behind_the_ledger_folds_only_the_new_records(
    agent_dir: Path, clock: Callable[[], datetime], caplog: pytest.LogCaptureFixture
) -> None:
    fill(agent_dir, clock)
    index = agent_dir / "memory" / "index.sqlite"
    behind = index.read_bytes()
    asyncio.run(_note_once(agent_dir, clock))
    index.write_bytes(behind)
    caplog.set_level(logging.INFO, logger="host.memory.checkpoint")
    with MemoryStore(agent_dir, clock=clock) as store:
        assert "User likes jazz" in [f.text for f in store.standing().current]
        assert [h.fact.text for h in store.search("jazz")] == ["User likes jazz"]
    assert "rebuilt" not in caplog.text


def test_an_index_from_another_ledger_is_rebuilt(
    tmp_path: Path, agent_dir: Path, clock: Callable[[], datetime], caplog: pytest.LogCaptureFixture
) -> None:
    fill(agent_dir, clock)
    other = tmp_path / "agents" / "bob"
    other.mkdir()
    asyncio.run(_note_once(other, clock))
    (agent_dir / "memory" / "index.sqlite").write_bytes((other / "memory" / "index.sqlite").read_bytes())
    caplog.set_level(logging.INFO, logger="host.memory.checkpoint")
    with MemoryStore(agent_dir, clock=clock) as store:
        assert "User likes jazz" not in [f.text for f in store.standing().current]
        assert "User likes tea" in [f.text for f in store.standing().current]
    assert "rebuilt" in caplog.text


async def _note_once(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    with MemoryStore(agent_dir, clock=clock) as store:
        await store.note("User likes jazz", evidence=USER)
