"""A retraction that waits for review: the fact stands until a person confirms the request (issue 9)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore
from host.memory.errors import MemoryStateError
from protocol.errors import CONFLICT

HUMAN = Evidence("human")
AGENT = Evidence("agent", seq=9, tool_call_id="call-9", basis="tool:read_file")


def standing_texts(store: MemoryStore) -> list[str]:
    return [fact.text or "" for fact in store.standing().current]


async def _seed(store: MemoryStore) -> tuple[str, str]:
    cat = await store.note("The user's cat is called Miso.", evidence=HUMAN)
    gym = await store.note("The user's gym is Ironworks.", evidence=HUMAN)
    assert cat.fact is not None and gym.fact is not None
    return cat.fact.id, gym.fact.id


def test_a_requested_retraction_leaves_the_fact_standing_and_waits_in_the_queue(store: MemoryStore) -> None:
    async def main() -> None:
        cat, _ = await _seed(store)
        outcome = await store.retract(cat, evidence=AGENT, reason="the notes said so", pending=True)
        assert outcome.kind == "pending" and outcome.fact is not None
        assert standing_texts(store) == ["The user's cat is called Miso.", "The user's gym is Ironworks."]
        (waiting,) = store.list_facts("proposed").facts
        assert (waiting.id, waiting.op, waiting.replaces) == (outcome.fact.id, "retract", cat)
        again = await store.retract(cat, evidence=AGENT, pending=True)
        assert again.kind == "pending" and again.records == () and again.fact == waiting
        assert "Forget: The user's cat is called Miso." in store.view_path.read_text(encoding="utf-8")

    asyncio.run(main())


def test_a_person_confirming_the_request_retracts_the_fact_and_its_tombstone_holds(store: MemoryStore) -> None:
    async def main() -> None:
        cat, _ = await _seed(store)
        request = await store.retract(cat, evidence=AGENT, pending=True)
        assert request.fact is not None
        reviewed = await store.review(request.fact.id, "confirm")
        assert reviewed.kind == "confirmed"
        assert standing_texts(store) == ["The user's gym is Ironworks."]
        assert store.fact(cat).status == "retracted" and store.list_facts("proposed").facts == ()
        back = await store.note("The user's cat is called Miso.", evidence=Evidence("extractor", basis="user"))
        assert back.kind == "suppressed"

    asyncio.run(main())


def test_a_person_rejecting_the_request_keeps_the_fact_and_sets_no_tombstone(store: MemoryStore) -> None:
    async def main() -> None:
        cat, gym = await _seed(store)
        request = await store.retract(cat, evidence=AGENT, pending=True)
        assert request.fact is not None
        assert (await store.review(request.fact.id, "reject")).kind == "rejected"
        assert store.fact(cat).status == "live" and store.fact(cat).trust == "confirmed"
        assert store.list_facts("proposed").facts == ()
        await store.retract(gym, evidence=HUMAN)
        assert standing_texts(store) == ["The user's cat is called Miso."]

    asyncio.run(main())


def test_a_request_to_forget_is_not_edited_corrected_or_itself_forgotten(store: MemoryStore) -> None:
    async def main() -> None:
        cat, _ = await _seed(store)
        request = await store.retract(cat, evidence=AGENT, pending=True)
        assert request.fact is not None
        for attempt in (
            store.review(request.fact.id, "edit", text="The user's cat is called Rex."),
            store.correct(request.fact.id, "The user's cat is called Rex.", evidence=HUMAN),
            store.retract(request.fact.id, evidence=HUMAN),
        ):
            with pytest.raises(MemoryStateError) as caught:
                await attempt
            assert caught.value.code == CONFLICT
        assert store.fact(cat).status == "live"

    asyncio.run(main())


def test_a_waiting_request_is_rebuilt_from_the_ledger(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        cat, _ = await _seed(store)
        await store.retract(cat, evidence=AGENT, pending=True)

    asyncio.run(main())
    store.close()
    (agent_dir / "memory" / "index.sqlite").unlink()
    with MemoryStore(agent_dir) as reopened:
        assert [(f.op, f.replaces) for f in reopened.list_facts("proposed").facts] == [("retract", cat_id(reopened))]
        assert len(standing_texts(reopened)) == 2


def cat_id(store: MemoryStore) -> str:
    return next(f.id for f in store.standing().current if "Miso" in (f.text or ""))


def test_erasing_the_fact_erases_the_request_about_it(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        cat, _ = await _seed(store)
        await store.retract(cat, evidence=AGENT, pending=True)
        await store.erase(cat)
        assert store.list_facts("proposed").facts == ()
        for name in ("ledger.jsonl", "MEMORY.md", "index.sqlite"):
            assert b"Miso" not in (agent_dir / "memory" / name).read_bytes()

    asyncio.run(main())


def test_a_correction_of_a_proposed_fact_stays_proposed(store: MemoryStore) -> None:
    """Issue 9: a correction is never more trusted than the fact it corrects."""

    async def main() -> None:
        museum = await store.note("The museum opens at nine.", evidence=AGENT)
        assert museum.fact is not None and museum.kind == "proposed"
        corrected = await store.correct(museum.fact.id, "The museum opens at ten.", evidence=Evidence("agent"))
        assert corrected.kind == "proposed" and standing_texts(store) == []
        person = await store.correct(museum.fact.id, "The museum opens at eleven.", evidence=HUMAN)
        assert person.kind == "corrected" and standing_texts(store) == ["The museum opens at eleven."]

    asyncio.run(main())
