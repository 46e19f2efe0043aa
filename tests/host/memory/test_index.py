"""The search index: log entries are read with their neighbours, erased text leaves no bytes behind."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from host.memory import Evidence, MemoryStore, NoteItem

USER = Evidence("user")
DAY = "2023-05-08"
CHAT = [
    "Caroline: I went to a support group yesterday",
    "Melanie: How did it go?",
    "Caroline: It was powerful, people shared their stories",
    "Melanie: That sounds inspiring",
    "Caroline: I might volunteer there",
    "Melanie: You would be great at it",
]


def contexts(agent_dir: Path) -> dict[int, str]:
    """Each indexed fact's words beside its own: the entry before it, then its neighbours."""
    db = sqlite3.connect(agent_dir / "memory" / "index.sqlite")
    try:
        return dict(db.execute("SELECT rowid, before || ' | ' || context FROM fts ORDER BY rowid").fetchall())
    finally:
        db.close()


def test_a_log_entry_is_found_by_the_words_next_to_it(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note_many([NoteItem(text, tier="log", valid_from=DAY) for text in CHAT], evidence=USER)
        await store.note("User's support group meets on Fridays", evidence=USER)
        hits = [h.fact.text for h in store.search("How did the support group go?", limit=3)]
        assert "Melanie: How did it go?" in hits
        assert hits[0] in (CHAT[0], "User's support group meets on Fridays")

    asyncio.run(main())


def test_a_note_is_not_read_with_its_neighbours(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        await store.note_many([NoteItem(text, valid_from=DAY) for text in CHAT[:3]], evidence=USER)
        assert set(contexts(agent_dir).values()) == {" | "}
        assert [h.fact.text for h in store.search("support group")] == [CHAT[0]]

    asyncio.run(main())


def test_contexts_kept_up_write_by_write_equal_those_of_a_rebuild(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> dict[int, str]:
        with MemoryStore(agent_dir, clock=clock) as store:
            ids = []
            for text in CHAT:
                ids.append((await store.note(text, evidence=USER, tier="log", valid_from=DAY)).records[0].id)
            await store.note("Melanie: Another day", evidence=USER, tier="log", valid_from="2023-05-09")
            await store.retract(ids[2], evidence=USER)
            await store.note("A peer says hello", evidence=Evidence("peer:bob"), tier="log", valid_from=DAY)
            await store.erase(ids[4])
            return contexts(agent_dir)

    kept_up = asyncio.run(main())
    assert all("powerful" not in context for context in kept_up.values())
    # The retracted entry's row, and the entry after it, which now follows "How did it go?" itself.
    assert sum(context.startswith("Melanie: How did it go?") for context in kept_up.values()) == 2
    assert any("How did it go" in context for context in kept_up.values())
    (agent_dir / "memory" / "index.sqlite").unlink()
    MemoryStore(agent_dir, clock=clock).close()
    assert contexts(agent_dir) == kept_up
    assert all("volunteer" not in context for context in kept_up.values())
    assert all("peer says hello" not in context for context in kept_up.values())


def test_an_erased_log_entry_leaves_no_bytes_in_its_neighbours_context(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        outcomes = await store.note_many([NoteItem(t, tier="log", valid_from=DAY) for t in CHAT], evidence=USER)
        assert outcomes[2].fact is not None
        await store.erase(outcomes[2].fact.id)
        data = (agent_dir / "memory" / "index.sqlite").read_bytes()
        assert b"people shared their stories" not in data and b"powerful" not in data
        assert b"I might volunteer there" in data
        assert store.verify().ok

    asyncio.run(main())
