"""The frozen prompt per epoch: what bumps it, what does not, and how memory reaches the next turn."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore
from host.prompt.cache import AssembledPrompt, assemble_prompt, bump_epoch, load_frozen
from host.prompt.identity import AgentIdentity

ADA = AgentIdentity("ada", "Ada")
USER = Evidence("user")


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "agents" / "ada"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def store(agent_dir: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore(agent_dir)
    yield opened
    opened.close()


def turn(
    agent_dir: Path, store: MemoryStore | None, text: str = "hello", roster: list[tuple[str, str, str]] | None = None
) -> AssembledPrompt:
    return assemble_prompt(agent_dir, ADA, roster or [], store, text)


def test_an_explicit_note_is_in_the_very_next_turns_prompt(agent_dir: Path, store: MemoryStore) -> None:
    first = turn(agent_dir, store)
    assert "User's dog is called Rex" not in first.system
    asyncio.run(store.note("User's dog is called Rex", evidence=Evidence("agent")))
    second = turn(agent_dir, store)
    assert "User's dog is called Rex" in second.system and second.epoch == first.epoch + 1


def test_within_an_epoch_the_system_prompt_is_byte_identical(agent_dir: Path, store: MemoryStore) -> None:
    asyncio.run(store.note("User's dog is called Rex", evidence=USER))
    first, second = turn(agent_dir, store, "what about my dog?"), turn(agent_dir, store, "and the weather?")
    assert first.system.encode() == second.system.encode() and first.epoch == second.epoch


def test_a_duplicate_note_does_not_bump_the_epoch(agent_dir: Path, store: MemoryStore) -> None:
    asyncio.run(store.note("User's dog is called Rex", evidence=USER))
    first = turn(agent_dir, store)
    outcome = asyncio.run(store.note("user's dog is called rex", evidence=USER))
    assert outcome.kind == "duplicate"
    second = turn(agent_dir, store)
    assert (second.epoch, second.system) == (first.epoch, first.system)


def test_a_forgotten_fact_leaves_the_next_prompt_and_recall_while_another_stays(
    agent_dir: Path, store: MemoryStore
) -> None:
    async def main() -> None:
        gone = await store.note("User's dog is called Rex", evidence=USER)
        await store.note("User's cat is called Miso", evidence=USER)
        first = turn(agent_dir, store)
        assert "Rex" in first.system
        assert gone.fact is not None
        await store.retract(gone.fact.id, evidence=Evidence("agent"), reason="asked")
        second = turn(agent_dir, store, "what is my dog called? Rex?")
        assert "Rex" not in second.system and "Rex" not in (second.recall_block or "")
        assert "Miso" in second.system and second.epoch == first.epoch + 1
        assert "Rex" not in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_a_peers_fact_is_absent_until_a_person_confirms_it(agent_dir: Path, store: MemoryStore) -> None:
    async def main() -> None:
        proposed = await store.note("Acme's CEO is Bob Smith", evidence=Evidence("peer:bob"))
        first = turn(agent_dir, store, "who is Acme's CEO?")
        assert "Bob Smith" not in first.system and "Bob Smith" not in (first.recall_block or "")
        assert proposed.fact is not None
        await store.review(proposed.fact.id, "confirm")
        second = turn(agent_dir, store, "who is Acme's CEO?")
        assert "Bob Smith" in second.system and second.epoch == first.epoch + 1

    asyncio.run(main())


def test_a_background_addition_reaches_the_next_turn_through_the_recall_block_without_a_new_epoch(
    agent_dir: Path, store: MemoryStore
) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        first = turn(agent_dir, store)
        await store.note("User plays the cello", evidence=Evidence("extractor", basis="user"))
        second = turn(agent_dir, store, "hello again")
        assert (second.epoch, second.system) == (first.epoch, first.system)
        assert second.recall_block is not None and "User plays the cello" in second.recall_block
        assert "Added to memory since" in second.recall_block
        await store.note("User lives in Lisbon", evidence=USER)
        third = turn(agent_dir, store, "hello again")
        assert third.epoch == first.epoch + 1 and "User plays the cello" in third.system
        assert "User plays the cello" not in (third.recall_block or "")

    asyncio.run(main())


def test_the_recall_block_brings_facts_that_did_not_fit(agent_dir: Path, store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User's passport expires in March", evidence=USER, tier="log")
        for number in range(40):
            await store.note(f"User read book number {number}", evidence=USER, tier="log")
        prompt = assemble_prompt(agent_dir, ADA, [], store, "when does my passport expire?", max_lines=12)
        assert "passport" not in prompt.system
        assert "did not fit here" in prompt.system.splitlines()[-1]
        assert prompt.recall_block is not None and "User's passport expires in March" in prompt.recall_block

    asyncio.run(main())


def test_compaction_bumps_the_epoch_and_the_next_turn_renders_again(agent_dir: Path, store: MemoryStore) -> None:
    first = turn(agent_dir, store)
    assert bump_epoch(agent_dir, "compaction") == first.epoch + 1
    frozen = load_frozen(agent_dir)
    assert frozen is not None and frozen.segments is None
    second = turn(agent_dir, store)
    assert second.epoch == first.epoch + 1 and second.system == first.system
    assert turn(agent_dir, store).epoch == second.epoch


def test_a_roster_change_starts_a_new_epoch_and_its_order_does_not(agent_dir: Path, store: MemoryStore) -> None:
    first = turn(agent_dir, store, roster=[("bob", "Bob", ""), ("cy", "Cy", "")])
    assert turn(agent_dir, store, roster=[("cy", "Cy", ""), ("bob", "Bob", "")]).epoch == first.epoch
    changed = turn(agent_dir, store, roster=[("bob", "Bob", "")])
    assert changed.epoch == first.epoch + 1 and "Cy" not in changed.system


@pytest.mark.parametrize("content", [b"{not json", b'{"epoch": "x"}', b"[]", b'{"epoch": 3, "segments": [{"n": 1}]}'])
def test_a_corrupt_cache_file_means_a_live_render_not_a_crash(
    agent_dir: Path, store: MemoryStore, content: bytes
) -> None:
    asyncio.run(store.note("User likes tea", evidence=USER))
    (agent_dir / "prompt-cache.json").write_bytes(content)
    prompt = turn(agent_dir, store)
    assert "User likes tea" in prompt.system
    assert load_frozen(agent_dir) is not None


def test_memory_off_means_no_memory_section_and_no_recall_block(agent_dir: Path, store: MemoryStore) -> None:
    asyncio.run(store.note("User likes tea", evidence=USER))
    prompt = turn(agent_dir, None, "do I like tea?")
    assert prompt.recall_block is None and [s.name for s in prompt.segments] == ["identity", "roster"]
    assert "likes tea" not in prompt.system and "memory" not in prompt.system.lower()
    on = turn(agent_dir, store, "do I like tea?")
    assert "User likes tea" in on.system and on.epoch == prompt.epoch + 1
