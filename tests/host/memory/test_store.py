"""The store's write rules: duplicates, conflicts, trust, tombstones, review, correction, the gate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryEvent, MemoryStore
from host.memory.errors import MemoryStateError, RecordNotFoundError, SensitiveContentError
from protocol.errors import CONFLICT, NOT_FOUND, SENSITIVE_CONTENT

USER = Evidence("user")
AGENT = Evidence("agent", seq=4, tool_call_id="call-1")
EXTRACTOR = Evidence("extractor", seq=5, basis="user")


def standing_texts(store: MemoryStore) -> list[str]:
    return [fact.text or "" for fact in store.standing().current]


def test_explicit_note_stands_at_once_and_a_duplicate_writes_nothing(store: MemoryStore) -> None:
    async def main() -> None:
        first = await store.note("User lives in Lisbon.", evidence=AGENT, key="user.home_city")
        again = await store.note("user lives in lisbon", evidence=AGENT, key="user.home_city")
        assert (first.kind, again.kind) == ("recorded", "duplicate")
        assert again.fact is not None and first.fact is not None and again.fact.id == first.fact.id
        assert again.records == ()
        assert store.last_seq == 1
        assert standing_texts(store) == ["User lives in Lisbon."]

    asyncio.run(main())


def test_the_same_text_at_another_valid_time_is_a_new_record(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("Ada: thanks!", evidence=USER, tier="log", valid_from="2023-05-08")
        later = await store.note("Ada: thanks!", evidence=USER, tier="log", valid_from="2023-06-01")
        assert later.kind == "recorded"
        assert store.last_seq == 2

    asyncio.run(main())


def test_two_live_candidates_for_one_key_are_a_conflict_not_the_later_one(store: MemoryStore) -> None:
    async def main() -> None:
        berlin = await store.note("User lives in Berlin", evidence=USER, key="user.home_city")
        lisbon = await store.note("User lives in Lisbon", evidence=USER, key="user.home_city")
        await store.note("User likes tea", evidence=USER)
        assert berlin.fact is not None and lisbon.fact is not None
        assert [f.id for f in lisbon.related] == [berlin.fact.id]
        standing = store.standing()
        assert standing.current == tuple(f for f in standing.current if f.text == "User likes tea")
        [conflict] = standing.conflicts
        assert conflict.key == "user.home_city"
        assert [f.id for f in conflict.facts] == [berlin.fact.id, lisbon.fact.id]

    asyncio.run(main())


def test_one_candidate_for_a_key_is_current_and_a_correction_resolves_a_conflict(store: MemoryStore) -> None:
    async def main() -> None:
        berlin = await store.note("User lives in Berlin", evidence=USER, key="user.home_city")
        lisbon = await store.note("User lives in Lisbon", evidence=USER, key="user.home_city")
        assert berlin.fact is not None and lisbon.fact is not None
        await store.retract(berlin.fact.id, evidence=USER, reason="moved away")
        standing = store.standing()
        assert standing.conflicts == ()
        assert [f.id for f in standing.current] == [lisbon.fact.id]

    asyncio.run(main())


@pytest.mark.parametrize(
    "evidence", [Evidence("peer:bob"), Evidence("tool:web_search"), Evidence("agent", basis="file")]
)
def test_a_fact_from_a_peer_tool_or_file_is_proposed_and_not_standing(store: MemoryStore, evidence: Evidence) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        outcome = await store.note("The CEO of Acme is Bob", evidence=evidence)
        assert outcome.kind == "proposed"
        assert standing_texts(store) == ["User likes tea"]
        assert [f.text for f in store.list_facts("proposed").facts] == ["The CEO of Acme is Bob"]

    asyncio.run(main())


def test_a_confirmed_proposal_stands(store: MemoryStore) -> None:
    async def main() -> None:
        outcome = await store.note("The CEO of Acme is Bob", evidence=Evidence("peer:bob"))
        assert outcome.fact is not None
        reviewed = await store.review(outcome.fact.id, "confirm")
        assert reviewed.kind == "confirmed"
        assert standing_texts(store) == ["The CEO of Acme is Bob"]
        assert store.list_facts("proposed").facts == ()

    asyncio.run(main())


def test_an_edited_proposal_stands_in_its_edited_words(store: MemoryStore) -> None:
    async def main() -> None:
        outcome = await store.note("The CEO of Acme is Bob", evidence=Evidence("tool:web_search"))
        assert outcome.fact is not None
        edited = await store.review(outcome.fact.id, "edit", text="The CEO of Acme is Bob Smith", key="acme.ceo")
        assert edited.kind == "edited"
        assert standing_texts(store) == ["The CEO of Acme is Bob Smith"]
        again = await store.note("The CEO of Acme is Bob", evidence=Evidence("tool:web_search"))
        assert again.kind == "suppressed"

    asyncio.run(main())


def test_reviewing_a_fact_that_is_not_proposed_is_a_conflict(store: MemoryStore) -> None:
    async def main() -> None:
        outcome = await store.note("User likes tea", evidence=USER)
        assert outcome.fact is not None
        with pytest.raises(MemoryStateError) as caught:
            await store.review(outcome.fact.id, "confirm")
        assert caught.value.code == CONFLICT

    asyncio.run(main())


def test_a_retracted_fact_proposed_again_is_suppressed_and_the_suppression_is_in_the_ledger(
    store: MemoryStore,
) -> None:
    async def main() -> None:
        kept = await store.note("User likes tea", evidence=USER)
        gone = await store.note("User's cat is called Miso", evidence=USER)
        assert gone.fact is not None and kept.fact is not None
        await store.retract(gone.fact.id, evidence=USER, reason="asked to forget")
        for source in (EXTRACTOR, Evidence("peer:bob"), Evidence("agent")):
            outcome = await store.note("users cat is called miso!", evidence=source)
            assert outcome.kind == "suppressed"
            assert [f.id for f in outcome.related] == [gone.fact.id]
        suppressions = [r for r in store.history() if r.op == "suppress"]
        assert [r.source for r in suppressions] == ["extractor", "peer:bob", "agent"]
        assert all(r.text is None and r.sig == gone.fact.sig for r in suppressions)
        assert standing_texts(store) == ["User likes tea"]

    asyncio.run(main())


@pytest.mark.parametrize("evidence", [Evidence("user"), Evidence("human")])
def test_the_user_or_a_person_can_assert_a_retracted_fact_again(store: MemoryStore, evidence: Evidence) -> None:
    async def main() -> None:
        gone = await store.note("User's cat is called Miso", evidence=USER)
        assert gone.fact is not None
        await store.retract(gone.fact.id, evidence=USER)
        back = await store.note("User's cat is called Miso", evidence=evidence)
        assert back.kind == "recorded"
        assert standing_texts(store) == ["User's cat is called Miso"]

    asyncio.run(main())


def test_the_agent_may_reassert_a_forgotten_fact_only_when_it_says_the_user_asked(store: MemoryStore) -> None:
    async def main() -> None:
        gone = await store.note("User's cat is called Miso", evidence=USER)
        assert gone.fact is not None
        await store.retract(gone.fact.id, evidence=USER)
        assert (await store.note("User's cat is called Miso", evidence=AGENT)).kind == "suppressed"
        back = await store.note("User's cat is called Miso", evidence=AGENT, reassert=True)
        assert back.kind == "recorded"
        assert back.records[0].reassert

    asyncio.run(main())


def test_a_rejected_proposal_is_not_proposed_again(store: MemoryStore) -> None:
    async def main() -> None:
        first = await store.note("User's favourite colour is green", evidence=Evidence("peer:bob"))
        assert first.fact is not None
        await store.review(first.fact.id, "reject", reason="not true")
        assert (await store.note("User's favourite colour is green", evidence=EXTRACTOR)).kind == "suppressed"
        other = await store.note("User's favourite colour is blue", evidence=Evidence("peer:bob"))
        assert other.kind == "proposed"

    asyncio.run(main())


def test_retracting_a_fact_retracts_its_copies_in_other_tiers(store: MemoryStore) -> None:
    async def main() -> None:
        profile = await store.note("User is vegetarian", evidence=USER, tier="profile")
        await store.note("User is vegetarian", evidence=USER, tier="note", key="user.diet")
        await store.note("User likes tea", evidence=USER)
        assert profile.fact is not None
        outcome = await store.retract(profile.fact.id, evidence=USER)
        assert len(outcome.related) == 1
        assert standing_texts(store) == ["User likes tea"]

    asyncio.run(main())


def test_a_correction_without_a_date_supersedes_the_wrong_record(store: MemoryStore) -> None:
    async def main() -> None:
        wrong = await store.note("User's sister is Ann", evidence=USER, key="user.sister")
        assert wrong.fact is not None
        fixed = await store.correct(wrong.fact.id, "User's sister is Anna", evidence=AGENT)
        assert fixed.kind == "corrected"
        assert standing_texts(store) == ["User's sister is Anna"]
        assert store.fact(wrong.fact.id).status == "superseded"
        with pytest.raises(MemoryStateError):
            await store.correct(wrong.fact.id, "User's sister is Annie", evidence=AGENT)

    asyncio.run(main())


def test_correcting_to_the_same_words_changes_nothing(store: MemoryStore) -> None:
    async def main() -> None:
        fact = await store.note("User likes tea", evidence=USER)
        assert fact.fact is not None
        outcome = await store.correct(fact.fact.id, "user likes tea.", evidence=AGENT)
        assert outcome.kind == "unchanged"
        assert store.last_seq == 1

    asyncio.run(main())


def test_an_unknown_record_is_not_found(store: MemoryStore) -> None:
    async def main() -> None:
        for act in (
            store.retract("m-000000000000", evidence=USER),
            store.correct("m-000000000000", "x", evidence=USER),
            store.erase("m-000000000000"),
        ):
            with pytest.raises(RecordNotFoundError) as caught:
                await act
            assert caught.value.code == NOT_FOUND

    asyncio.run(main())


def test_a_secret_is_refused_on_every_write_path_and_nothing_is_stored(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        kept = await store.note("User's order number is 4111 1111 1111 1112", evidence=USER)
        assert kept.kind == "recorded"
        size = (agent_dir / "memory" / "ledger.jsonl").stat().st_size
        proposed = await store.note("A fact from a peer", evidence=Evidence("peer:bob"))
        assert proposed.fact is not None and kept.fact is not None
        secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
        attempts = [
            store.note(f"The API key is {secret}", evidence=USER),
            store.correct(kept.fact.id, f"token: {secret}", evidence=USER),
            store.retract(kept.fact.id, evidence=USER, reason=f"key {secret}"),
            store.review(proposed.fact.id, "edit", text="User's card is 4111 1111 1111 1111"),
            store.erase(kept.fact.id, reason="password: hunter22"),
        ]
        size = (agent_dir / "memory" / "ledger.jsonl").stat().st_size
        for attempt in attempts:
            with pytest.raises(SensitiveContentError) as caught:
                await attempt
            assert caught.value.code == SENSITIVE_CONTENT
            assert secret not in caught.value.message
        assert (agent_dir / "memory" / "ledger.jsonl").stat().st_size == size
        for name in ("ledger.jsonl", "MEMORY.md", "index.sqlite"):
            data = (agent_dir / "memory" / name).read_bytes()
            assert secret.encode() not in data and b"4111 1111 1111 1111\n" not in data

    asyncio.run(main())


def test_changes_are_announced_and_proposals_are_announced_for_review(
    store: MemoryStore, events: list[MemoryEvent]
) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        await store.note("User likes tea", evidence=USER)
        await store.note("The CEO of Acme is Bob", evidence=Evidence("peer:bob"))
        kinds = [(e.kind, e.op, e.epoch_bumped) for e in events]
        assert kinds == [("changed", "assert", True), ("changed", "assert", False), ("proposed", "assert", False)]
        assert [f.text for f in events[-1].facts] == ["The CEO of Acme is Bob"]

    asyncio.run(main())
