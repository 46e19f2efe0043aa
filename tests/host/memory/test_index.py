"""The search index: log entries are read with their neighbours, erased text leaves no bytes behind, and the
recent log is read only as far as its entries fit."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.fold import Fact
from host.memory.index_queries import IndexQueries
from host.memory.records import format_instant
from tests.host.memory.conftest import FakeClock

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


class CountingCursor(sqlite3.Cursor):
    """A cursor that counts the rows it hands out, however they are fetched."""

    rows = 0

    def __next__(self) -> Any:
        row = super().__next__()
        CountingCursor.rows += 1
        return row

    def fetchone(self) -> Any:
        row = super().fetchone()
        CountingCursor.rows += row is not None
        return row

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        rows = super().fetchmany(size or self.arraysize)
        CountingCursor.rows += len(rows)
        return rows

    def fetchall(self) -> list[Any]:
        rows = super().fetchall()
        CountingCursor.rows += len(rows)
        return rows


class CountingConnection(sqlite3.Connection):
    """A connection whose statements run on counting cursors."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor(CountingCursor).execute(sql, parameters)


class FirstFew:
    """A `fits` that accepts the first `n` entries, as a section with room for only a few does."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __call__(self, fact: Fact) -> bool:
        self.left -= 1
        return self.left >= 0


def test_the_recent_log_stops_reading_at_the_first_entry_that_does_not_fit(agent_dir: Path, clock: FakeClock) -> None:
    store = MemoryStore(agent_dir, clock=clock)
    items = [NoteItem(f"Entry {n}: walked to the market and back.", tier="log") for n in range(1000)]
    try:
        asyncio.run(store.note_many(items, evidence=USER))
    finally:
        store.close()
    path = agent_dir / "memory" / "index.sqlite"
    db = sqlite3.connect(path, factory=CountingConnection)
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    db.set_progress_handler(step, 1)  # every virtual machine instruction: how much of the table SQLite reads
    queries = IndexQueries(db)
    instant = format_instant(datetime(2100, 1, 1))

    def read(fits: Callable[[Fact], bool]) -> tuple[list[Fact], int, int]:
        nonlocal steps
        CountingCursor.rows, steps = 0, 0
        taken = queries.recent_log("", instant, 1000, fits)
        return taken, CountingCursor.rows, steps

    try:
        every, every_rows, every_steps = read(lambda fact: True)
        few, few_rows, few_steps = read(FirstFew(5))
    finally:
        db.close()
    assert len(every) == every_rows == 1000, "the counting sees every row a full read takes"
    assert [f.text for f in few] == [f.text for f in every[:5]], "the newest first"
    assert few_rows == 6, "the five that fit and the first that does not, no more"
    assert few_steps * 20 < every_steps, "SQLite reads only the rows taken, in the day index's order"


def test_a_commit_the_database_refuses_leaves_no_transaction_open(tmp_path: Path) -> None:
    # A full disk can refuse the COMMIT itself; a deferred constraint is a way to make a COMMIT fail on demand.
    # The transaction must not stay open: every later write on the connection would be refused.
    from host.memory.index import MemoryIndex

    index = MemoryIndex(tmp_path / "index.sqlite")
    try:
        db = index._db
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        db.execute("CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        try:
            with index.transaction():
                index.set_meta(lost="1")
                db.execute("INSERT INTO child VALUES (7)")
        except sqlite3.IntegrityError:
            pass
        else:
            raise AssertionError("the COMMIT was expected to be refused")
        assert not db.in_transaction
        assert index.meta("lost") is None, "nothing of the refused transaction stands"
        with index.transaction():
            index.set_meta(next="1")
        assert index.meta("next") == "1", "the next write goes through"
    finally:
        index.close()
