"""Issue 24: memory over months, through the real host and kernel with a scripted model.

Old log entries reach the model through summaries of their spans, and an erase rebuilds the summary
without the erased entry (no byte of it left under the data dir) while the entry beside it stays quoted.
On a hand-moved clock: a fact whose lifetime ends leaves the next request (with an `expire` record) while
another stays, a log entry past its tier's lifetime (`ttl`) is in no request while a newer one and an old
note are, and a stale fact comes up in review through the background pass and stands until a person
decides.
"""

from __future__ import annotations

import asyncio
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from tests.e2e.test_memory_cli import _hearth
from tests.e2e.test_memory_erase import holders
from tests.support.fake_model import ChatServer, model_settings, say, system_text
from tests.support.host_process import HostProcess

OLD_TRIP = "Went hiking on Mount Tamalpais with Ines."
OLD_MEAL = "Cooked saffron risotto for the neighbours."
RECENT = "Booked the dentist for Friday."


def summary_lines(system: str) -> list[str]:
    return [line for line in system.splitlines() if re.match(r"^- \[s-\d{8}-\d+d\] ", line)]


def test_an_erased_log_entry_leaves_its_summary_and_every_file_while_its_neighbour_stays_summarised(
    tmp_path: Path,
) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            ids = {}
            for text, day in ((OLD_TRIP, "2025-03-10"), (OLD_MEAL, "2025-03-11"), (RECENT, None)):
                params = {"agentId": "ann", "text": text, "tier": "log"} | ({"validFrom": day} if day else {})
                ids[text] = (await host.call("memory.note", params))["record"]["id"]
            await host.idle_turn("ann", "Hello there")
            system = system_text(server.requests[-1].body)
            (summary,) = [line for line in summary_lines(system) if OLD_TRIP in line]
            assert OLD_MEAL in summary and ids[OLD_TRIP] in summary, summary
            assert f"- [{ids[RECENT]}] {RECENT}" in system, "a recent entry is shown in full"
            assert f"- [{ids[OLD_TRIP]}] {OLD_TRIP}" not in system, "an old one only through its summary"
            erased = await host.call("memory.erase", {"agentId": "ann", "recordId": ids[OLD_TRIP]})
            assert erased["outcome"] == "erased"
            await host.idle_turn("ann", "Anything else?")
            system = system_text(server.requests[-1].body)
            (summary,) = [line for line in summary_lines(system) if OLD_MEAL in line]
            assert "Tamalpais" not in system and ids[OLD_TRIP] not in summary, summary
            assert "1 log entry" in summary, "the summary was rebuilt from the entries that stand"

    try:
        asyncio.run(main())
    finally:
        server.stop()
    data = tmp_path / "data"
    assert holders(data, b"Tamalpais") == [], "no summary row, frozen prompt or other file keeps it"
    assert holders(data, OLD_MEAL.encode()) != []


T0 = 1_780_000_000.0  # 2026-05-28, the hand-moved clock's start
DAY = 86_400.0


def clock_env() -> dict[str, str]:
    return {**os.environ, "HEARTH_TEST_CLOCK": str(T0), "HEARTH_MEMORY_UPKEEP_SECONDS": "0.05"}


def instant(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def test_an_expired_fact_leaves_the_next_request_with_a_record_while_an_unexpired_fact_stays(tmp_path: Path) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path / "data", env=clock_env()) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            note = {"agentId": "ann", "text": "User has a gym pass this month.", "validUntil": instant(T0 + DAY)}
            gym = (await host.call("memory.note", note))["record"]["id"]
            jazz = (await host.call("memory.note", {"agentId": "ann", "text": "User likes jazz."}))["record"]["id"]
            await host.idle_turn("ann", "Hello there")
            system = system_text(server.requests[-1].body)
            assert gym in system and jazz in system
            await host.call("debug.advanceClock", {"by": 2 * DAY})
            await host.idle_turn("ann", "And now?")
            system = system_text(server.requests[-1].body)
            assert gym not in system and "gym pass" not in system, "the next request no longer carries it"
            assert jazz in system
            history = (await host.call("memory.history", {"agentId": "ann", "recordId": gym}))["records"]
            assert [r["op"] for r in history].count("expire") == 1
            current = (await host.call("memory.list", {"agentId": "ann"}))["records"]
            assert [r["id"] for r in current] == [jazz]

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_a_log_entry_past_its_tiers_lifetime_is_not_in_the_next_request_while_a_newer_one_and_an_old_note_are(
    tmp_path: Path,
) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path / "data", env=clock_env()) as host:
            settings = model_settings(server) | {"ttl": {"log": 30}}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            ids = {}
            for text, tier, days_ago in (
                ("Walked the dog along the canal.", "log", 40),
                ("Fixed the garden gate.", "log", 2),
                ("User keeps bees.", "note", 40),
            ):
                params = {"agentId": "ann", "text": text, "tier": tier, "validFrom": instant(T0 - days_ago * DAY)}
                ids[text] = (await host.call("memory.note", params))["record"]["id"]
            await host.idle_turn("ann", "Hello there")
            system = system_text(server.requests[-1].body)
            assert "canal" not in system and ids["Walked the dog along the canal."] not in system
            assert ids["Fixed the garden gate."] in system and "garden gate" in system
            assert ids["User keeps bees."] in system and "keeps bees" in system
            history = await host.call(
                "memory.history", {"agentId": "ann", "recordId": ids["Walked the dog along the canal."]}
            )
            (expired,) = [r for r in history["records"] if r["op"] == "expire"]
            assert expired["reason"].startswith("its kind's lifetime (log: 30 days) ended at 2026-05-18"), expired

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_a_stale_fact_comes_up_in_review_and_stands_until_a_person_decides(tmp_path: Path) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.start()
    data = tmp_path / "data"

    async def main() -> tuple[str, str]:
        async with HostProcess(data, env=clock_env()) as host:
            settings = model_settings(server) | {"consolidation": 5}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            await host.call("agent.create", {"name": "bob", "settings": model_settings(server)})
            old = await host.call("memory.note", {"agentId": "ann", "text": "User once tried a pottery class."})
            bobs = await host.call("memory.note", {"agentId": "bob", "text": "User once tried a pottery class."})
            after = len(host.events)
            await host.call("debug.advanceClock", {"by": 120 * DAY})
            proposed = await host.wait_for("memory.proposed", lambda p: p["agentId"] == "ann", after=after)
            (request,) = proposed["records"]
            assert request["op"] == "retract" and request["replaces"] == old["record"]["id"]
            queue = await asyncio.to_thread(_hearth, data, "review", "ann")
            assert queue.returncode == 0 and "pottery" in queue.stdout and "stale" in queue.stdout, queue
            assert request["reason"].startswith("stale: never recalled or shown")
            await host.idle_turn("ann", "Hello")  # rounds go on meanwhile: nothing is removed without a person
            assert old["record"]["id"] in system_text(server.requests[-1].body)
            listed = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            assert [r["id"] for r in listed["records"]] == [request["id"]], "proposed once, not again each round"
            bob_proposed = await host.call("memory.list", {"agentId": "bob", "view": "proposed"})
            assert bob_proposed["records"] == [], "an agent whose person set no cap gets no proposals"
            await host.call("memory.review", {"agentId": "ann", "recordId": request["id"], "decision": "confirm"})
            current = await host.call("memory.list", {"agentId": "ann"})
            assert current["records"] == []
            bob_current = await host.call("memory.list", {"agentId": "bob"})
            assert [r["id"] for r in bob_current["records"]] == [bobs["record"]["id"]]
            return old["record"]["id"], request["id"]

    try:
        asyncio.run(main())
    finally:
        server.stop()
