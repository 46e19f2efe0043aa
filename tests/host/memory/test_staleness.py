"""Use and staleness: counts kept as derived data, lifetimes that end with a record, and proposals a person
decides (nothing removed without one)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.tools import run_memory_tool
from host.memory.trust import CLEAN
from tests.host.memory.conftest import FakeClock

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
