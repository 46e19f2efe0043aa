"""MEMORY.md: rendered after every change; a person's edit (add, change, delete a line) becomes human events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.view import ViewLine, diff_view, parse_view

USER = Evidence("user")


def edit_view(agent_dir: Path, change: Callable[[str], str]) -> None:
    path = agent_dir / "memory" / "MEMORY.md"
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def test_parse_reads_sections_keys_and_ids() -> None:
    text = "# Memory\n\n## Profile\n\n- `user.name`: User is Sam ^m-0123456789ab\n\n## Log\n- went hiking\n"
    assert parse_view(text) == [
        ViewLine("profile", "m-0123456789ab", "user.name", "User is Sam"),
        ViewLine("log", None, None, "went hiking"),
    ]


def test_diff_names_additions_changes_and_deletions_and_nothing_else() -> None:
    before = [ViewLine("note", "m-000000000001", None, "a"), ViewLine("note", "m-000000000002", None, "b")]
    same = diff_view(before, list(before))
    assert same == []
    after = [ViewLine("note", "m-000000000001", None, "a  changed"), ViewLine("profile", None, None, "c")]
    kinds = [(e.kind, e.record_id, e.text) for e in diff_view(before, after)]
    assert kinds == [("change", "m-000000000001", "a  changed"), ("add", None, "c"), ("delete", "m-000000000002", "")]


def test_the_view_shows_standing_facts_conflicts_and_proposals_and_never_retracted_ones(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User is called Sam", evidence=USER, tier="profile", key="user.name")
        await store.note("User lives in Berlin", evidence=USER, key="user.home_city")
        await store.note("User lives in Lisbon", evidence=USER, key="user.home_city")
        gone = await store.note("User's cat is called Miso", evidence=USER)
        await store.note("Acme was founded in 1999", evidence=Evidence("peer:bob"))
        assert gone.fact is not None
        await store.retract(gone.fact.id, evidence=USER)
        lines = parse_view(store.view_path.read_text(encoding="utf-8"))
        assert [(line.section, line.text) for line in lines] == [
            ("conflicts", "User lives in Berlin"),
            ("conflicts", "User lives in Lisbon"),
            ("profile", "User is called Sam"),
            ("proposed", "Acme was founded in 1999"),
        ]

    asyncio.run(main())


def test_a_persons_edit_is_imported_as_human_events(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        tea = await store.note("User likes tea", evidence=USER)
        jazz = await store.note("User likes jazz", evidence=USER)
        rain = await store.note("User likes rain", evidence=USER)
        peer = await store.note("Acme was founded in 1999", evidence=Evidence("peer:bob"))
        assert tea.fact and jazz.fact and rain.fact and peer.fact

        def person(text: str) -> str:
            text = text.replace("User likes tea", "User likes green tea")
            text = "\n".join(line for line in text.splitlines() if "User likes jazz" not in line and "Acme" not in line)
            return text.replace("## Profile\n", "## Profile\n\n- User is called Sam\n")

        edit_view(agent_dir, person)
        outcomes = await store.import_view_edits()
        assert sorted(o.kind for o in outcomes) == ["corrected", "recorded", "rejected", "retracted"]
        assert all(r.source == "human" for o in outcomes for r in o.records)
        standing = {(f.tier, f.text) for f in store.standing().current}
        assert standing == {
            ("note", "User likes green tea"),
            ("note", "User likes rain"),
            ("profile", "User is called Sam"),
        }
        assert store.fact(peer.fact.id).trust == "rejected"
        assert "User likes green tea ^m-" in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_the_hosts_own_writes_are_not_taken_for_edits(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        await store.note("User likes jazz", evidence=USER)
        seq = store.last_seq
        assert await store.import_view_edits() == []
        assert store.last_seq == seq

    asyncio.run(main())


def test_a_secret_typed_into_the_view_is_not_stored_and_leaves_the_file(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        edit_view(agent_dir, lambda t: t.replace("## Profile\n", "## Profile\n- my password is hunter2hunter\n"))
        assert await store.import_view_edits() == []
        assert "hunter2" not in store.view_path.read_text(encoding="utf-8")
        assert b"hunter2" not in (agent_dir / "memory" / "ledger.jsonl").read_bytes()

    asyncio.run(main())


def test_edits_made_while_the_memory_was_closed_are_imported_on_open(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note("User likes tea", evidence=USER)
        store.close()
        edit_view(agent_dir, lambda t: t.replace("## Notes\n", "## Notes\n- User likes jazz\n"))
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert [f.text for f in reopened.standing().current] == ["User likes tea", "User likes jazz"]
            assert reopened.history()[-1].source == "human"

    asyncio.run(main())


def test_a_deleted_view_is_written_again_without_forgetting_anything(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        store.view_path.unlink()
        assert await store.import_view_edits() == []
        assert "User likes tea" in store.view_path.read_text(encoding="utf-8")
        assert [f.text for f in store.standing().current] == ["User likes tea"]

    asyncio.run(main())


def test_a_large_memory_shows_the_newest_entries_of_each_tier_and_counts_the_rest(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("host.memory.view_sync.VIEW_LINES", 3)

    async def main() -> None:
        await store.note_many([NoteItem(f"User read book {n}", tier="log") for n in range(8)], evidence=USER)
        await store.note("User likes tea", evidence=USER)
        text = store.view_path.read_text(encoding="utf-8")
        assert [line.text for line in parse_view(text) if line.section == "log"] == [
            "User read book 5",
            "User read book 6",
            "User read book 7",
        ]
        assert "5 older entries are not shown here" in text and "User likes tea" in text
        assert await store.import_view_edits() == []

    asyncio.run(main())
