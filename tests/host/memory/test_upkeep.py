"""The background round: ended lifetimes (by each agent's own tier lifetimes) recorded for every agent, the
pass only for an idle agent whose person set a cap, and one agent's failure stopping no other."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from host.memory import Evidence, MemoryEvent, MemoryHub
from host.memory.upkeep import UPKEEP_SECONDS, run_upkeep, upkeep_every
from tests.host.memory.conftest import FakeClock

USER = Evidence("user")


def test_a_round_records_lifetimes_for_all_and_proposes_only_for_an_idle_agent_with_a_cap(
    tmp_path: Path, clock: FakeClock
) -> None:
    for name in ("ann", "bob", "cid"):
        (tmp_path / "agents" / name).mkdir(parents=True)
    events: list[MemoryEvent] = []
    hub = MemoryHub(tmp_path, clock=clock, on_event=events.append)

    async def main() -> None:
        until = (clock.current + timedelta(days=1)).isoformat()
        for name in ("ann", "bob", "cid"):
            await hub.get(name).note("User once tried a pottery class.", evidence=USER)
            await hub.get(name).note("User has a gym pass.", evidence=USER, valid_until=until)
        clock.current += timedelta(days=120)
        stop = asyncio.Event()
        rounds = 0

        def agents() -> list[tuple[str, int]]:
            nonlocal rounds
            rounds += 1
            if rounds == 2:
                stop.set()  # one round, then stop
            return [("nobody", 3), ("ann", 3), ("bob", 3), ("cid", 0)] if rounds == 1 else []

        async with asyncio.timeout(10):
            await run_upkeep(hub, agents, lambda agent_id: agent_id != "bob", stop, 0.01)
        for name in ("ann", "bob", "cid"):
            assert [f.text for f in hub.get(name).list_facts("current").facts] == ["User once tried a pottery class."]
            assert [r.op for r in hub.get(name).history()].count("expire") == 1, "an unknown agent stopped no one"
        proposed = {name: len(hub.get(name).list_facts("proposed").facts) for name in ("ann", "bob", "cid")}
        assert proposed == {"ann": 1, "bob": 0, "cid": 0}, "busy bob and cap-less cid get no proposals"

    try:
        asyncio.run(main())
    finally:
        hub.close()


def test_a_round_ends_facts_by_each_agents_own_lifetimes(tmp_path: Path, clock: FakeClock) -> None:
    for name in ("ann", "bob"):
        (tmp_path / "agents" / name).mkdir(parents=True)
    hub = MemoryHub(tmp_path, clock=clock, lifetimes=lambda agent_id: {"log": 30} if agent_id == "ann" else {})

    async def main() -> None:
        for name in ("ann", "bob"):
            await hub.get(name).note("Repainted the porch.", evidence=USER, tier="log")
        clock.current += timedelta(days=31)
        stop = asyncio.Event()

        def agents() -> list[tuple[str, int]]:
            if stop.is_set():
                return []
            stop.set()  # one round
            return [("ann", 0), ("bob", 0)]

        async with asyncio.timeout(10):
            await run_upkeep(hub, agents, lambda agent_id: True, stop, 0.01)
        assert hub.get("ann").list_facts("current").facts == ()
        assert [r.op for r in hub.get("ann").history()].count("expire") == 1
        assert [f.text for f in hub.get("bob").list_facts("current").facts] == ["Repainted the porch."]

    try:
        asyncio.run(main())
    finally:
        hub.close()


def test_the_round_interval_is_a_positive_number_from_the_environment_or_the_default() -> None:
    assert upkeep_every({"HEARTH_MEMORY_UPKEEP_SECONDS": "0.5"}) == 0.5
    assert upkeep_every({"HEARTH_MEMORY_UPKEEP_SECONDS": "-1"}) == UPKEEP_SECONDS
    assert upkeep_every({"HEARTH_MEMORY_UPKEEP_SECONDS": "soon"}) == UPKEEP_SECONDS
    assert upkeep_every({}) == UPKEEP_SECONDS
