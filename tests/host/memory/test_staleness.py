"""Use and staleness: counts kept as derived data, lifetimes that end with a record, and proposals a person
decides (nothing removed without one)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.fold import Fact
from host.memory.staleness import contradictions
from host.memory.tools import run_memory_tool
from host.memory.trust import CLEAN
from tests.host.memory.conftest import BASE_FACT, FakeClock

USER = Evidence("user")


def _ledger_lines(agent_dir: Path) -> int:
    return len((agent_dir / "memory" / "ledger.jsonl").read_bytes().splitlines())


def _id(outcome: object) -> str:
    return outcome.records[0].id  # type: ignore[attr-defined, no-any-return]


def test_recall_and_the_section_count_uses_in_the_index_and_write_no_ledger_record(
    store: MemoryStore, agent_dir: Path
) -> None:
    async def main() -> None:
        tea = _id(await store.note("User drinks oolong tea.", evidence=USER))
        bike = _id(await store.note("User rides a blue bicycle.", evidence=USER))
        lines = _ledger_lines(agent_dir)
        await run_memory_tool(store, "memory_recall", {"query": "oolong tea"}, Evidence("agent"), provenance=CLEAN)
        store.prompt_section()
        uses = store.uses([tea, bike])
        assert (uses[tea].recalled, uses[tea].shown) == (1, 1) and uses[tea].last_used is not None
        assert (uses[bike].recalled, uses[bike].shown) == (0, 1)
        assert _ledger_lines(agent_dir) == lines, "a use is not a ledger record"

    asyncio.run(main())


def test_an_ended_lifetime_is_recorded_once_and_moves_the_epoch_while_an_unended_fact_stays(
    store: MemoryStore, clock: FakeClock
) -> None:
    async def main() -> None:
        until = (clock.current + timedelta(days=1)).isoformat()
        pass_id = _id(await store.note("User has a gym pass.", evidence=USER, valid_until=until))
        keep = _id(await store.note("User likes jazz.", evidence=USER))
        assert await store.expire_due() == []
        assert "gym pass" in store.prompt_section().text
        clock.current += timedelta(days=2)
        mark = store.epoch_mark
        assert await store.expire_due() == [pass_id]
        assert store.epoch_mark > mark
        (record,) = [r for r in store.history(pass_id) if r.op == "expire"]
        assert record.target == pass_id and record.valid_until is not None
        text = store.prompt_section().text
        assert "gym pass" not in text and keep in text
        assert [f.id for f in store.list_facts("current").facts] == [keep]
        earlier = (clock.current - timedelta(days=2)).isoformat()
        assert pass_id in [f.id for f in store.list_facts("current", as_of=earlier).facts], "valid time is kept"
        assert await store.expire_due() == [], "recorded once"

    asyncio.run(main())


def test_an_expiry_survives_a_rebuild_of_the_index_without_a_second_record(agent_dir: Path, clock: FakeClock) -> None:
    async def main(store: MemoryStore) -> str:
        until = (clock.current + timedelta(hours=1)).isoformat()
        fid = _id(await store.note("User is in Rome this week.", evidence=USER, valid_until=until))
        clock.current += timedelta(hours=2)
        await store.expire_due()
        return fid

    first = MemoryStore(agent_dir, clock=clock)
    fid = asyncio.run(main(first))
    first.close()
    (agent_dir / "memory" / "index.sqlite").unlink()
    again = MemoryStore(agent_dir, clock=clock)
    try:
        assert asyncio.run(again.expire_due()) == []
        assert [r.op for r in again.history(fid)].count("expire") == 1
    finally:
        again.close()


def test_stale_and_duplicate_facts_become_requests_to_forget_that_wait_for_a_person(
    store: MemoryStore, clock: FakeClock
) -> None:
    async def main() -> None:
        old = _id(await store.note("User once tried pottery class.", evidence=USER))
        used = _id(await store.note("User once visited Oslo in winter.", evidence=USER))
        profile = _id(await store.note("User is left-handed.", evidence=USER, tier="profile"))
        clock.current += timedelta(days=120)
        store.note_use([used], "recalled")
        dup_old = _id(await store.note("User's sister lives in Ghent, Belgium.", evidence=USER))
        dup_new = _id(await store.note("User's sister lives in Ghent Belgium now.", evidence=USER))
        fresh = _id(await store.note("User started learning Dutch.", evidence=USER))
        outcomes = await store.propose_upkeep(10)
        targets = {o.fact.replaces: o.fact for o in outcomes if o.fact is not None}
        assert set(targets) == {old, dup_old}, targets
        assert all(f.trust == "proposed" and f.op == "retract" for f in targets.values())
        assert (targets[old].reason or "").startswith("stale: never recalled or shown since")
        assert targets[dup_old].reason == f"likely duplicate of [{dup_new}], which is kept"
        current = {f.id for f in store.list_facts("current").facts}
        assert {old, used, profile, dup_old, dup_new, fresh} <= current, "nothing is removed by the pass"
        proposed = {f.id for f in store.list_facts("proposed").facts}
        assert {targets[old].id, targets[dup_old].id} == proposed
        await store.review(targets[old].id, "reject")
        assert await store.propose_upkeep(10) == [], "a fact a person has decided on is not proposed again"
        assert old in {f.id for f in store.list_facts("current").facts}

    asyncio.run(main())


def test_the_pass_writes_no_more_proposals_than_its_cap(store: MemoryStore, clock: FakeClock) -> None:
    async def main() -> None:
        await store.note_many([NoteItem(f"User mentioned hobby number {n} once.") for n in range(6)], evidence=USER)
        clock.current += timedelta(days=100)
        assert len(await store.propose_upkeep(2)) == 2
        assert len(await store.propose_upkeep(2)) == 2
        assert len(store.list_facts("proposed").facts) == 4

    asyncio.run(main())


NOW = "2026-06-01T00:00:00.000000Z"
BASE = BASE_FACT


def _fact(seq: int, text: str, key: str | None, **changes: object) -> Fact:
    return replace(BASE, id=f"m-{seq:012x}", seq=seq, text=text, sig=text.lower(), key=key, **changes)  # type: ignore[arg-type]


def test_the_older_side_of_a_contradiction_is_proposed_naming_the_newer_and_agreeing_or_unrelated_facts_are_not() -> (
    None
):
    lisbon = _fact(1, "User lives in Lisbon.", "user.home_city")
    porto = _fact(2, "User lives in Porto.", "user.home_city")
    faro = _fact(3, "User lives in Faro.", "user.home_city")
    (proposal,) = contradictions([porto, lisbon], NOW)
    assert proposal.target == lisbon
    assert proposal.reason == (
        f"contradicts the newer [{porto.id}] for user.home_city: [{lisbon.id}] and [{porto.id}] both stand"
    )
    three = contradictions([lisbon, porto, faro], NOW)
    assert [(p.target.id, faro.id in p.reason) for p in three] == [(lisbon.id, True), (porto.id, True)]

    same = _fact(4, "user lives in lisbon.", "user.home_city")
    assert contradictions([lisbon, same], NOW) == [], "the same content for one key agrees"
    assert contradictions([lisbon, _fact(5, "User drinks tea.", "user.drink")], NOW) == [], "two keys, no conflict"
    assert contradictions([_fact(6, "User likes jazz.", None), _fact(7, "User hates jazz.", None)], NOW) == []
    superseded = replace(lisbon, status="superseded", changed_by=porto.id)
    assert contradictions([superseded, porto], NOW) == [], "a superseded fact no longer stands"
    ended = replace(lisbon, valid_until="2026-03-01T00:00:00.000000Z")
    assert contradictions([ended, porto], NOW) == [], "an ended fact no longer stands"
    correction = replace(porto, op="correct", replaces=lisbon.id)
    assert contradictions([lisbon, correction], NOW) == [], "a correction beside what it corrects is a change"
    waiting = replace(porto, trust="proposed")
    assert contradictions([lisbon, waiting], NOW) == [], "a proposed fact does not stand yet"


def test_a_contradiction_becomes_one_pending_request_and_nothing_is_retracted_until_a_person_confirms(
    store: MemoryStore,
) -> None:
    async def main() -> None:
        lisbon = _id(await store.note("User lives in Lisbon.", evidence=USER, key="user.home_city"))
        porto = _id(await store.note("User lives in Porto.", evidence=USER, key="user.home_city"))
        tea = _id(await store.note("User drinks green tea.", evidence=USER, key="user.drink"))
        assert [c.key for c in store.standing().conflicts] == ["user.home_city"]
        (outcome,) = await store.propose_upkeep(5)
        request = outcome.fact
        assert request is not None and request.op == "retract" and request.trust == "proposed"
        assert request.replaces == lisbon and request.source == "tool:consolidate"
        assert request.reason is not None and porto in request.reason and lisbon in request.reason
        assert [f.id for f in store.list_facts("proposed").facts] == [request.id]
        assert await store.propose_upkeep(5) == [], "proposed once, not again each round"
        (conflict,) = store.standing().conflicts
        assert [f.id for f in conflict.facts] == [lisbon, porto], "both still stand, shown as a conflict"
        assert tea in {f.id for f in store.list_facts("current").facts}
        assert not [r for r in store.history(lisbon) if r.op == "retract" and r.trust == "confirmed"]

        await store.review(request.id, "confirm")
        assert store.standing().conflicts == ()
        assert {f.id for f in store.list_facts("current").facts} == {porto, tea}
        assert await store.propose_upkeep(5) == []

    asyncio.run(main())
