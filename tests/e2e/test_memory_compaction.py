"""Issue 24.1: nothing said before a compaction escapes memory. Through the real host and kernel: a fact said
only in turns a compaction then summarises away is extracted first (the scripted model is told to compact a
small window, and extraction runs every 10 turns), the `compact` event says so; memory off or extraction off
runs none of it; a held extraction bounds the wait, the compaction says it went on, and the fact still lands."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

from tests.kernel.providers.fake_llm_server import Recorded, Reply, error_reply
from tests.support.fake_model import EXTRACTION_MARK, NO_OPERATIONS, ChatServer, model_settings, say
from tests.support.host_process import HostProcess, scripted_model
from tests.support.memory_host import MemoryHost

LOCKER = "My locker number is 4711 at the climbing gym."
BIKE = "The user's bike is red"
EXTRACT_LOCKER = {
    # Only with the current memory shown: the person's earlier note is among the facts the extractor sees.
    "match": r"You keep the long-term memory.*Current facts:\n- \[m-[^\]]+\] The user's bike is red.*"
    r"\[seq (\d+) · user\] My locker number is (\d+)",
    "reply": '{"operations": [{"op": "assert", "text": "The user\'s locker number is \\2", "seq": \\1, '
    '"source": "user"}]}',
}
RULES = [
    EXTRACT_LOCKER,
    {"match": "You keep the long-term memory", "reply": NO_OPERATIONS},
    {"match": "<conversation>", "reply": "SUMMARY: the user sent many long notes."},
    {"match": "locker", "on": "user", "reply": "Noted."},
    {"match": "^note (\\d+)", "on": "user", "reply": "noted \\1"},
]


def _settings(**extra: Any) -> dict[str, Any]:
    settings = scripted_model(*RULES)
    settings["model"]["contextWindow"] = 1000
    settings.update(extra)
    return settings


def _events(data_dir: Path, agent: str) -> list[dict[str, Any]]:
    lines = (data_dir / "agents" / agent / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


async def _talk(host: HostProcess | MemoryHost, agent: str, notes: int) -> None:
    await host.idle_turn(agent, LOCKER)
    for i in range(notes):
        await host.idle_turn(agent, f"note {i} " + "words " * 100)


def test_a_fact_said_only_in_turns_a_compaction_drops_is_in_memory_afterwards(tmp_path: Path) -> None:
    async def main() -> list[dict[str, Any]]:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _settings(extraction=10)})
            await host.call("memory.note", {"agentId": "ann", "text": BIKE})
            await _talk(host, "ann", 6)
            listing = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            return list(listing["records"])

    found = {r["text"]: r for r in asyncio.run(main())}
    assert set(found) == {"The user's locker number is 4711", BIKE}, "the earlier note stands beside it"
    locker_fact = found["The user's locker number is 4711"]
    assert locker_fact["trust"] == "confirmed" and locker_fact["source"] == "extractor"
    events = _events(tmp_path, "ann")
    locker = next(e for e in events if e["type"] == "user" and e["text"] == LOCKER)
    compact = next(e for e in events if e["type"] == "compact")
    assert compact["extraction"] == "covered"
    assert compact["fromSeq"] <= locker["seq"] <= compact["throughSeq"], "the compact event says what it covers"
    assert "4711" not in compact["summary"], "the summary dropped it: only memory kept it"
    assert locker_fact["evidence"]["seq"] == locker["seq"]
    assert len([e for e in events if e["type"] == "user"]) < 10, "no every-10-turns extraction ran before it"


def test_memory_off_or_extraction_off_runs_no_extraction_before_a_compaction(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "off", "settings": _settings(memory=False)})
            await host.call("agent.create", {"name": "never", "settings": _settings(extraction="off")})
            await host.call("agent.create", {"name": "ten", "settings": _settings(extraction=10)})
            await host.call("memory.note", {"agentId": "ten", "text": BIKE})
            for agent in ("off", "never", "ten"):
                await _talk(host, agent, 6)
            never = await host.call("memory.list", {"agentId": "never", "view": "all"})
            assert never["records"] == []
            ten = await host.call("memory.list", {"agentId": "ten", "view": "all"})
            assert len(ten["records"]) == 2, "the agent beside them did extract"

    asyncio.run(main())
    for agent in ("off", "never"):
        compacts = [e for e in _events(tmp_path, agent) if e["type"] == "compact"]
        assert compacts and all("extraction" not in e or e["extraction"] is None for e in compacts)
    assert (
        not (tmp_path / "agents/off/memory/ledger.jsonl").exists()
        or not (tmp_path / "agents/off/memory/ledger.jsonl").read_text()
    )


class HeldExtractions(ChatServer):
    """Chat turns and summaries get "ok"; an extraction waits for `release`, then notes the locker if it saw it."""

    def __init__(self) -> None:
        super().__init__(self._extract, otherwise=say("ok"))
        self.release = threading.Event()

    def _extract(self, recorded: Recorded) -> str:
        self.release.wait(30)
        prompt = recorded.body["messages"][-1]["content"]
        found = re.search(r"\[seq (\d+) · user\] My locker number is (\d+)", prompt)
        if found is None:
            return NO_OPERATIONS
        op = {"op": "assert", "text": f"The user's locker number is {found[2]}", "seq": int(found[1]), "source": "user"}
        return json.dumps({"operations": [op]})


def test_a_compaction_waits_a_bounded_time_says_it_went_on_and_the_fact_still_lands(tmp_path: Path) -> None:
    server = HeldExtractions()
    server.start()

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            host.server.memory.extractor.cover_wait = 0.5
            settings = model_settings(server, extraction=10)
            settings["model"]["contextWindow"] = 1000
            await host.call("agent.create", {"name": "ann", "settings": settings})
            await _talk(host, "ann", 6)
            compact = next(e for e in _events(tmp_path, "ann") if e["type"] == "compact")
            assert compact["extraction"] == "unfinished"
            assert not (await host.call("memory.list", {"agentId": "ann", "view": "all"}))["records"]
            server.release.set()
            await host.wait_for("memory.extracted", lambda p: p["agentId"] == "ann" and p["operations"] == 1)
            listing = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert [r["text"] for r in listing["records"]] == ["The user's locker number is 4711"]

    try:
        asyncio.run(main())
    finally:
        server.release.set()
        server.stop()
    assert EXTRACTION_MARK in json.dumps(server.extractions[0].body)


def _cover_only(recorded: Recorded) -> str | Reply:
    """The background extraction (the turn's prefix replayed) fails; the one sent alone before a compaction works."""
    messages = recorded.body["messages"]
    if len(messages) > 1:
        return error_reply(400, "the extraction request was refused")
    found = re.search(r"\[seq (\d+) · user\] My locker number is (\d+)", messages[-1]["content"])
    if found is None:
        return NO_OPERATIONS
    op = {"op": "assert", "text": f"The user's locker number is {found[2]}", "seq": int(found[1]), "source": "user"}
    return json.dumps({"operations": [op]})


def test_lines_whose_extraction_failed_are_extracted_before_a_compaction_drops_them(tmp_path: Path) -> None:
    server = ChatServer(_cover_only, otherwise=say("ok"))
    server.start()

    async def main() -> list[dict[str, Any]]:
        async with HostProcess(tmp_path) as host:
            settings = model_settings(server)  # extraction after every turn worth it
            settings["model"]["contextWindow"] = 1000
            await host.call("agent.create", {"name": "ann", "settings": settings})
            await host.idle_turn("ann", LOCKER)
            await host.idle_turn("ann", "I am planting tomatoes and basil in the garden this spring.")
            for i in range(6):
                await host.idle_turn("ann", f"note {i} " + "words " * 100)
            return list((await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"])

    try:
        records = asyncio.run(main())
    finally:
        server.stop()
    failed = [r for r in server.extractions if len(r.body["messages"]) > 1]
    assert failed, "the background extractions were tried, and failed"
    assert [r["text"] for r in records] == ["The user's locker number is 4711"]
    compact = next(e for e in _events(tmp_path, "ann") if e["type"] == "compact")
    assert compact["extraction"] == "covered"
