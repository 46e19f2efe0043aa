"""Lifetimes by tier (the `ttl` setting): a fact without an end of its own ends its tier's number of days after
it began, with an `expire` record that carries the end, and stays ended whatever the setting says later."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from host.memory import Evidence, MemoryStore
from host.memory.records import format_instant
from tests.host.memory.conftest import FakeClock

USER = Evidence("user")


def _id(outcome: object) -> str:
    return outcome.records[0].id  # type: ignore[attr-defined, no-any-return]


def _days_ago(clock: FakeClock, days: int) -> str:
    return (clock.current - timedelta(days=days)).isoformat()


def _current(store: MemoryStore) -> set[str]:
    return {f.id for f in store.list_facts("current").facts}


def test_a_log_entry_older_than_its_tiers_lifetime_expires_while_an_old_note_and_an_entry_with_its_own_end_stay(
    agent_dir: Path, clock: FakeClock
) -> None:
    store = MemoryStore(agent_dir, clock=clock, lifetimes=lambda: {"log": 30})

    async def main() -> None:
        began = _days_ago(clock, 40)
        old_log = _id(await store.note("Walked the dog along the canal.", evidence=USER, tier="log", valid_from=began))
        old_note = _id(await store.note("User keeps bees.", evidence=USER, valid_from=began))
        until = (clock.current + timedelta(days=10)).isoformat()
        own_end = _id(
            await store.note("Lent the ladder to Ravi.", evidence=USER, tier="log", valid_from=began, valid_until=until)
        )
        recent = _id(
            await store.note("Fixed the garden gate.", evidence=USER, tier="log", valid_from=_days_ago(clock, 5))
        )
        mark = store.epoch_mark

        assert await store.expire_due() == [old_log]
        (record,) = [r for r in store.history(old_log) if r.op == "expire"]
        end = format_instant(clock.current - timedelta(days=40) + timedelta(days=30))
        assert record.valid_until is not None and record.valid_until[:16] == end[:16]
        assert record.reason == f"its kind's lifetime (log: 30 days) ended at {record.valid_until}"
        assert store.epoch_mark > mark, "the next turn's frozen section is built again"
        assert _current(store) == {old_note, own_end, recent}
        assert "canal" not in store.prompt_section().text
        assert await store.expire_due() == [], "recorded once"

        clock.current += timedelta(days=11)
        assert await store.expire_due() == [own_end], "its own end, not its tier's lifetime"
        (ended,) = [r for r in store.history(own_end) if r.op == "expire"]
        assert ended.reason is not None and ended.reason.startswith("its lifetime ended at")
        assert _current(store) == {old_note, recent}, "16 days old: within the lifetime"

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_without_a_lifetime_for_its_tier_an_old_fact_stands(store: MemoryStore, clock: FakeClock) -> None:
    async def main() -> None:
        old = _id(
            await store.note("Painted the shed green.", evidence=USER, tier="log", valid_from=_days_ago(clock, 400))
        )
        assert await store.expire_due() == []
        assert _current(store) == {old}

    asyncio.run(main())


def test_a_changed_lifetime_keeps_an_ended_fact_ended_and_applies_to_the_facts_not_ended(
    agent_dir: Path, clock: FakeClock
) -> None:
    ttl: dict[str, int] = {"log": 30}
    store = MemoryStore(agent_dir, clock=clock, lifetimes=lambda: ttl)

    async def main() -> tuple[str, str]:
        old = _id(await store.note("Visited the coast.", evidence=USER, tier="log", valid_from=_days_ago(clock, 40)))
        newer = _id(await store.note("Baked rye bread.", evidence=USER, tier="log", valid_from=_days_ago(clock, 15)))
        assert await store.expire_due() == [old]
        ttl.clear()
        assert await store.expire_due() == []
        assert _current(store) == {newer}, "removing the lifetime does not bring the ended fact back"
        ttl["log"] = 10
        assert await store.expire_due() == [newer], "a shorter lifetime applies to the facts not yet ended"
        ttl["log"] = 1000
        assert await store.expire_due() == []
        assert _current(store) == set()
        return old, newer

    try:
        old, newer = asyncio.run(main())
    finally:
        store.close()
    (agent_dir / "memory" / "index.sqlite").unlink()
    rebuilt = MemoryStore(agent_dir, clock=clock, lifetimes=dict)
    try:
        assert _current(rebuilt) == set(), "the ends are in the ledger: a rebuilt index keeps them"
        earlier = _days_ago(clock, 20)
        assert old in {f.id for f in rebuilt.list_facts("current", as_of=earlier).facts}, "valid time is kept"
        assert asyncio.run(rebuilt.expire_due()) == []
    finally:
        rebuilt.close()
