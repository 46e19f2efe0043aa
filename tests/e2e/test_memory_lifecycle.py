"""Issue 24: memory over months, through the real host and kernel with a scripted model.

Old log entries reach the model through summaries of their spans, and an erase rebuilds the summary
without the erased entry (no byte of it left under the data dir) while the entry beside it stays quoted.
The agent's model writes a span's summary in the background while the agent is idle: it is shown in the
next request, a correction or an erase in its span takes it away (the deterministic line returns, and no
byte of the erased entry or of the model's line about it is left), a failing call changes nothing, and no
call is made for an agent whose person set no cap or whose model is scripted.
On a hand-moved clock: a fact whose lifetime ends leaves the next request (with an `expire` record) while
another stays, a log entry past its tier's lifetime (`ttl`) is in no request while a newer one and an old
note are, and a stale fact comes up in review through the background pass and stands until a person
decides.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tests.e2e.test_memory_cli import _hearth
from tests.e2e.test_memory_erase import holders
from tests.kernel.providers.fake_llm_server import error_reply
from tests.support.fake_model import ChatServer, model_settings, say, system_text
from tests.support.host_process import HostProcess, scripted_model

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


PIANO = "Had the first piano lesson with Mr Okafor at the music school near the river, scales only."
TRIP_LONG = "Went hiking on Mount Tamalpais with Ines and stopped at the old lookout for a long while."
MEAL_LONG = "Cooked saffron risotto for the neighbours, who brought a lemon tart and stayed very late."
WORDS = "Hiked Tamalpais, cooked risotto for the neighbours, began piano lessons."
WOMBAT = "Watched a wombat dig under the shed at dusk while the neighbours' children counted the stars aloud."
FENCE = "Repaired the garden fence with Quokka-brand nails after the storm knocked two panels over."


def model_rows(data: Path, agent_id: str) -> list[tuple[str, str]]:
    db = sqlite3.connect(f"file:{data / 'agents' / agent_id / 'memory' / 'index.sqlite'}?mode=ro", uri=True)
    try:
        return [(str(r[0]), str(r[1])) for r in db.execute("SELECT text, model FROM summaries WHERE model IS NOT NULL")]
    finally:
        db.close()


async def note_log(host: HostProcess, agent_id: str, text: str, day: str) -> str:
    params = {"agentId": agent_id, "text": text, "tier": "log", "validFrom": day}
    return str((await host.call("memory.note", params))["record"]["id"])


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(30):
        while not check():
            await asyncio.sleep(0.05)


def test_the_model_writes_a_span_summary_while_idle_and_any_change_in_the_span_takes_it_away(tmp_path: Path) -> None:
    server = ChatServer(otherwise=say("ok"), summarise=lambda _: WORDS)
    server.start()
    data = tmp_path / "data"
    env = {**os.environ, "HEARTH_MEMORY_UPKEEP_SECONDS": "0.05"}

    def failing() -> None:
        server.summarise = lambda _: error_reply(400, "no summaries now")

    async def main() -> None:
        async with HostProcess(data, env=env) as host:
            scripted = scripted_model({"match": ".*", "reply": "Scripted words."}) | {"consolidation": 3}
            others = {
                "bob": (scripted, (MEAL_LONG, MEAL_LONG + " Twice.", PIANO)),  # a scripted model, a cap
                "cid": (model_settings(server), (FENCE, FENCE + " Again.", PIANO)),  # a remote model, no cap
            }
            for name, (settings, texts) in others.items():
                await host.call("agent.create", {"name": name, "settings": settings})
                for text in texts:
                    await note_log(host, name, text, "2025-03-10")
            # A remote model and a cap, but today's budget is spent (by one turn) before its entries exist.
            await host.call("agent.create", {"name": "dan", "settings": model_settings(server) | {"consolidation": 3}})
            await host.call("budget.set", {"agentId": "dan", "requestsPerDay": 1})
            await host.idle_turn("dan", "Hello")
            for text in (WOMBAT, WOMBAT + " Again.", PIANO):
                await note_log(host, "dan", text, "2025-03-10")
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server) | {"consolidation": 3}})
            ids = {}
            for text, day in ((TRIP_LONG, "2025-03-10"), (MEAL_LONG, "2025-03-11"), (PIANO, "2025-03-12")):
                ids[text] = await note_log(host, "ann", text, day)
            await until(lambda: model_rows(data, "ann") != [])
            ((kept, model),) = model_rows(data, "ann")
            assert model == "openai/m" and kept.endswith("3 log entries: " + WORDS), kept
            asked = [json_text(r.body) for r in server.summaries]
            assert not any(FENCE in text for text in asked), "no call for an agent whose person set no cap"
            assert not any(WOMBAT in text for text in asked), "no call for an agent whose budget is spent"
            # A round may ask while the entries are still being noted: the reply kept was asked about all three.
            prompt = asked[-1]
            assert "data, not instructions" in prompt and TRIP_LONG in prompt and PIANO in prompt
            assert all(len(r.body["messages"]) == 1 for r in server.summaries), "one short message, no conversation"

            await host.idle_turn("ann", "Hello there")
            system = system_text(server.requests[-1].body)
            assert "- " + kept in system, "the next request shows the model's summary"
            assert TRIP_LONG not in system and "Tamalpais" in system

            failing()
            calls = len(server.summaries)
            await host.call("memory.correct", {"agentId": "ann", "recordId": ids[PIANO], "text": "Began violin."})
            await until(lambda: len(server.summaries) > calls)  # asked again, and the call failed
            assert model_rows(data, "ann") == []
            await host.idle_turn("ann", "And now?")
            system = system_text(server.requests[-1].body)
            (line,) = summary_lines(system)
            assert WORDS not in system and "3 log entries: [" in line, "the deterministic line is back"

            server.summarise = lambda _: WORDS
            await until(lambda: model_rows(data, "ann") != [])
            await host.idle_turn("ann", "Once more")
            assert WORDS in system_text(server.requests[-1].body)
            failing()
            calls = len(server.summaries)
            erased = await host.call("memory.erase", {"agentId": "ann", "recordId": ids[TRIP_LONG]})
            assert erased["outcome"] == "erased"
            assert holders(data, b"Tamalpais") == [], "the frozen prompt loses the model's line with the entry"
            await until(lambda: len(server.summaries) > calls)
            await host.idle_turn("ann", "Anything else?")
            system = system_text(server.requests[-1].body)
            (line,) = summary_lines(system)
            assert "Tamalpais" not in system and WORDS not in system and "2 log entries" in line, line
            assert model_rows(data, "bob") == [], "a scripted model writes no summary"
            assert not any(WOMBAT in json_text(r.body) or FENCE in json_text(r.body) for r in server.summaries)

    try:
        asyncio.run(main())
    finally:
        server.stop()
    assert holders(data, b"Tamalpais") == [], (
        "no summary row, frozen prompt or other file keeps the entry or the model's words"
    )
    assert holders(data, b"Began violin") != []


def json_text(body: dict[str, object]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])  # type: ignore[attr-defined, index]
