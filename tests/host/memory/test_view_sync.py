"""Issue 11.2: MEMORY.md as a three-way merge. A person's edit is never lost; nothing is retracted that
nobody removed; a file that does not parse is kept aside, never imported."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryEvent, MemoryStore, NoteItem
from host.memory.view import parse_view, read_frame, render_view, select_view
from host.memory.view_sync import KEPT_SUFFIX

USER = Evidence("user")


def ops(store: MemoryStore, op: str) -> list[str]:
    return [r.id for r in store.history() if r.op == op]


def kept(agent_dir: Path) -> list[Path]:
    return sorted((agent_dir / "memory").glob(f"MEMORY.md{KEPT_SUFFIX}*"))


def test_a_view_states_its_position_and_rebuilds_from_the_ledger_to_the_same_body(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        await store.note("User lives in Oslo", evidence=USER, key="user.home_city")
        frame = read_frame(store.view_path.read_text(encoding="utf-8"))
        assert frame is not None
        position, body = frame
        assert position.seq == store.last_seq
        assert store._view.base(position) == body

    asyncio.run(main())


def test_an_editor_saving_an_old_copy_keeps_the_note_the_host_added_meanwhile(store: MemoryStore) -> None:
    """Issue 11.2: an editor loaded the file, the host added a note, the editor saved: the note stays."""

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        loaded = store.view_path.read_text(encoding="utf-8")
        added = await store.note("User likes jazz", evidence=USER)
        store.view_path.write_text(loaded.replace("## Notes\n\n", "## Notes\n\n- User likes rain\n"), encoding="utf-8")
        await store.import_view_edits()
        texts = sorted(f.text or "" for f in store.standing().current)
        assert texts == ["User likes jazz", "User likes rain", "User likes tea"]
        assert ops(store, "retract") == []
        assert added.fact is not None and "User likes jazz" in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_a_deletion_in_an_old_copy_retracts_only_what_the_person_deleted(store: MemoryStore) -> None:
    async def main() -> None:
        tea = await store.note("User likes tea", evidence=USER)
        await store.note("User likes rain", evidence=USER)
        loaded = store.view_path.read_text(encoding="utf-8")
        await store.note("User likes jazz", evidence=USER)
        edited = "\n".join(line for line in loaded.splitlines() if "User likes tea" not in line) + "\n"
        store.view_path.write_text(edited, encoding="utf-8")
        await store.import_view_edits()
        assert tea.fact is not None and ops(store, "retract") and store.fact(tea.fact.id).status == "retracted"
        assert sorted(f.text or "" for f in store.standing().current) == ["User likes jazz", "User likes rain"]

    asyncio.run(main())


def test_a_render_first_imports_an_edit_saved_before_it(store: MemoryStore) -> None:
    """Every re-render imports a pending edit first: a note arriving after the edit does not overwrite it."""

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        text = store.view_path.read_text(encoding="utf-8")
        store.view_path.write_text(text.replace("## Notes\n\n", "## Notes\n\n- User likes rain\n"), encoding="utf-8")
        await store.note("User likes jazz", evidence=USER)  # no watcher ran in between
        assert sorted(f.text or "" for f in store.standing().current) == [
            "User likes jazz",
            "User likes rain",
            "User likes tea",
        ]

    asyncio.run(main())


@pytest.mark.parametrize(
    "content",
    [b"", b"# Memory\n\n## Notes\n\n- nothing else\n", b"\x89PNG\r\n\x1a\n\x00\x00binary", b"\xff\xfe\xfd garbled"],
    ids=["empty", "no-frame", "binary", "not-utf8"],
)
def test_a_file_that_does_not_parse_is_kept_aside_and_nothing_is_retracted(
    agent_dir: Path, clock: Callable[[], datetime], content: bytes
) -> None:
    events: list[MemoryEvent] = []

    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock, on_event=events.append) as store:
            await store.note_many([NoteItem("User likes tea"), NoteItem("User likes jazz")], evidence=USER)
            store.view_path.write_bytes(content)
            assert await store.import_view_edits() == []
            assert ops(store, "retract") == [] and len(store.standing().current) == 2
            (aside,) = kept(agent_dir)
            assert aside.read_bytes() == content and aside.stat().st_mode & 0o777 == 0o600
            assert "User likes tea" in store.view_path.read_text(encoding="utf-8")
            (told,) = [e for e in events if e.kind == "set_aside"]
            assert told.kept_as == aside.name and told.problem

    asyncio.run(main())


def test_a_truncated_file_is_kept_aside(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        await store.note_many([NoteItem(f"User fact number {n}") for n in range(10)], evidence=USER)
        text = store.view_path.read_text(encoding="utf-8")
        store.view_path.write_text(text[: len(text) // 2], encoding="utf-8")
        await store.import_view_edits()
        assert ops(store, "retract") == [] and len(store.standing().current) == 10 and len(kept(agent_dir)) == 1

    asyncio.run(main())


def test_a_binary_view_at_open_is_kept_aside_and_the_memory_opens(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note("User likes tea", evidence=USER)
        store.close()
        (agent_dir / "memory" / "MEMORY.md").write_bytes(b"\x00\x01\x02")
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert [f.text for f in reopened.standing().current] == ["User likes tea"]
            assert len(kept(agent_dir)) == 1
        MemoryStore(agent_dir, clock=clock).close()  # the ledger lock was released: it opens again

    asyncio.run(main())


def test_a_crash_after_the_view_was_written_but_before_it_was_recorded_retracts_nothing(
    agent_dir: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11.2: lines pushed out of the window were read as a person's deletions after a SIGKILL."""
    monkeypatch.setattr("host.memory.view_sync.VIEW_LINES", 5)

    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note_many([NoteItem(f"User fact number {n}") for n in range(8)], evidence=USER)
        older = store.view_path.read_text(encoding="utf-8")
        await store.note_many([NoteItem(f"User later fact {n}") for n in range(4)], evidence=USER)
        with store._index.transaction():
            store._index.set_meta(view_text=older)  # the index never learnt of the last write
        store.close()
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert ops(reopened, "retract") == [] and len(reopened.standing().current) == 12

    asyncio.run(main())


def test_the_view_chosen_from_the_index_equals_the_view_rebuilt_from_the_ledger(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("host.memory.view_sync.VIEW_LINES", 4)
    chance = random.Random(7)

    async def main() -> None:
        ids: list[str] = []
        for n in range(40):
            tier = chance.choice(["profile", "note", "log"])
            key = chance.choice([None, None, "user.city", "user.job"])
            evidence = USER if chance.random() < 0.8 else Evidence("peer:bob")
            out = await store.note(
                f"Fact {n} about {chance.choice(['tea', 'rain', 'jazz'])}", evidence=evidence, tier=tier, key=key
            )
            ids += [out.fact.id] if out.fact else []
            if n % 7 == 6:
                await store.retract(chance.choice(ids), evidence=USER)
        selection, instant = store.view_selection(4)
        rebuilt = select_view(store.facts_through(store.last_seq), instant, 4)
        assert render_view("a", rebuilt.standing, list(rebuilt.proposed), rebuilt.hidden) == render_view(
            "a", selection.standing, list(selection.proposed), selection.hidden
        )
        assert parse_view(store.view_path.read_text(encoding="utf-8"))

    asyncio.run(main())


def test_the_hosts_own_view_is_not_written_again_when_only_the_time_moved(store: MemoryStore) -> None:
    """A rewrite would wake the watcher, which would rewrite it again: an endless loop of writes."""

    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        written = store.view_path.read_bytes()
        inode = store.view_path.stat().st_ino
        for _ in range(3):  # each pass reads a later time from the clock
            assert await store.import_view_edits() == []
        assert store.view_path.read_bytes() == written and store.view_path.stat().st_ino == inode

    asyncio.run(main())
