"""Issue 24: a SIGKILL while a compaction's extraction is in flight costs no fact and leaves no false claim.

Through the real host and kernel with a scripted model: the extraction a compaction sends first (for the lines
it is about to summarise) is held by the model until the test has killed the host. The transcript then has no
`compact` event at all (so none claims `covered`), memory holds nothing the held request would have added, and
the next host, on the same data dir, delivers the unanswered message again, extracts the dropped lines before
it compacts them and says `covered` only then; memory's ledger verifies, through the host and the CLI. A fact
said just before a SIGKILL that no extraction reached (every 10 turns) is extracted by the next host's first
compaction, though turns after the restart started that host's extraction mark past it. And a compaction that
went on before its extraction finished (`unfinished`), then a crash (a crash image taken at that instant): the
next host's compaction extracts the lines the earlier one left, and nothing said in them is lost.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

from host.recovery import HOST_STOPPED
from tests.e2e.test_memory_compaction import LOCKER, _events, _talk
from tests.kernel.providers.fake_llm_server import Recorded, Reply
from tests.support.archives import hearth_async
from tests.support.crash_image import crash_image, restarted
from tests.support.fake_model import NO_OPERATIONS, ChatServer, model_settings, say
from tests.support.host_process import HostProcess
from tests.support.memory_host import MemoryHost

LOCKER_FACT = "The user's locker number is 4711"


class HeldFirstExtraction(ChatServer):
    """Chat turns and summaries get "ok"; the first extraction waits for `release` (the test kills the host
    meanwhile), every one notes the locker when its lines show it. `summarized` is set once a compaction's
    summary request has come (its reply goes back at once)."""

    def __init__(self) -> None:
        super().__init__(self._extract, otherwise=say("ok"))
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.summarized = threading.Event()

    def _next(self, recorded: Recorded) -> Reply:
        if "<conversation>" in json.dumps(recorded.body):
            self.summarized.set()
        return super()._next(recorded)

    def _extract(self, recorded: Recorded) -> str:
        if not self.arrived.is_set():
            self.arrived.set()
            self.release.wait(60)
        found = re.search(r"\[seq (\d+) · user\] My locker number is (\d+)", recorded.body["messages"][-1]["content"])
        if found is None:
            return NO_OPERATIONS
        op = {"op": "assert", "text": f"The user's locker number is {found[2]}", "seq": int(found[1]), "source": "user"}
        return json.dumps({"operations": [op]})


def _settings(server: ChatServer) -> dict[str, Any]:
    settings = model_settings(server, extraction=10)  # no extraction after a turn: only the compaction's
    settings["model"]["contextWindow"] = 1000
    return settings


async def _talk_until_held(host: HostProcess, server: HeldFirstExtraction) -> str:
    """The locker, then long notes until a compaction's extraction reaches the model; the held run's text."""
    await host.idle_turn("ann", LOCKER)
    for i in range(8):
        text = f"note {i} " + "words " * 100
        sent = await host.call("agent.send", {"agentId": "ann", "text": text})
        ended = asyncio.ensure_future(host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r))
        held = asyncio.ensure_future(asyncio.to_thread(server.arrived.wait, 60))
        done, _ = await asyncio.wait({ended, held}, return_when=asyncio.FIRST_COMPLETED)
        if held in done and held.result():
            ended.cancel()
            return text
        held.cancel()
        assert ended.result()["reason"] == "idle"
    raise AssertionError("no compaction asked for an extraction")


def test_a_sigkill_mid_compaction_extraction_claims_nothing_and_the_next_host_extracts_the_dropped_lines(
    tmp_path: Path,
) -> None:
    server = HeldFirstExtraction()
    server.start()

    async def killed() -> str:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _settings(server)})
            await host.call("agent.create", {"name": "bob", "settings": model_settings(server, memory=False)})
            held_text = await _talk_until_held(host, server)
            # The summary is answered while the extraction is held: a compaction that did not wait for its
            # extraction would write its event now, before three turns of another agent have gone through.
            assert await asyncio.to_thread(server.summarized.wait, 60)
            for i in range(3):
                await host.idle_turn("bob", f"hello {i}")
            assert host.process is not None
            host.process.kill()  # SIGKILL, the extraction request still unanswered
            await host.process.wait()
            return held_text

    async def restarted(held_text: str) -> dict[str, Any]:
        async with HostProcess(tmp_path) as host:
            # The message the killed run never answered runs again first; its turn compacts.
            ended = await host.wait_for("agent.ended", lambda p: p["agentId"] == "ann", timeout=60)
            assert ended["reason"] == "idle", ended
            records = (await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"]
            verified = await host.call("memory.verify", {"agentId": "ann"})
            cli = await hearth_async(tmp_path, "memory", "ann", "verify")
            return {"records": records, "verified": verified, "cli": cli, "held": held_text}

    try:
        held_text = asyncio.run(killed())
        assert len(server.extractions) == 1 and len(server.extractions[0].body["messages"]) == 1, (
            "the one extraction was the compaction's, sent alone"
        )
        before = _events(tmp_path, "ann")
        assert not [e for e in before if e["type"] == "compact"], "no compaction was written, so none claims covered"
        ledger = tmp_path / "agents/ann/memory/ledger.jsonl"
        assert not ledger.exists() or b"4711" not in ledger.read_bytes(), "the held extraction added nothing"
        server.release.set()
        found = asyncio.run(restarted(held_text))
    finally:
        server.release.set()
        server.stop()

    events = _events(tmp_path, "ann")
    locker = next(e for e in events if e["type"] == "user" and e["text"] == LOCKER)
    (closed,) = [e for e in events[len(before) :] if e["type"] == "ended" and e.get("error") == HOST_STOPPED]
    assert closed["reason"] == "error", "the killed run is closed honestly"
    assert [e["text"] for e in events if e["type"] == "user"].count(held_text) == 2, "its message came again, once"
    (compact,) = [e for e in events if e["type"] == "compact"]
    assert compact["extraction"] == "covered"
    assert compact["fromSeq"] <= locker["seq"] <= compact["throughSeq"]
    extractions_after = [r for r in server.extractions[1:] if LOCKER in json.dumps(r.body, ensure_ascii=False)]
    assert extractions_after, "the next host sent the dropped lines to extraction before it compacted them"
    facts = {r["text"]: r for r in found["records"]}
    assert set(facts) == {LOCKER_FACT}, facts
    assert facts[LOCKER_FACT]["evidence"]["seq"] == locker["seq"]
    assert found["verified"]["ok"] is True
    assert found["cli"].returncode == 0, found["cli"].stderr


def test_lines_from_before_a_sigkill_that_no_extraction_reached_are_extracted_by_the_next_compaction(
    tmp_path: Path,
) -> None:
    server = HeldFirstExtraction()
    server.release.set()  # nothing is held here

    async def before_the_kill() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _settings(server)})
            await host.idle_turn("ann", LOCKER)  # extraction every 10 turns: not yet
            assert host.process is not None
            host.process.kill()
            await host.process.wait()

    async def after_the_kill() -> list[dict[str, Any]]:
        async with HostProcess(tmp_path) as host:
            # Turns that end first start this host's extraction mark after the locker, then a compaction drops it.
            for i in range(6):
                await host.idle_turn("ann", f"note {i} " + "words " * 100)
            return list((await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"])

    server.start()
    try:
        asyncio.run(before_the_kill())
        records = asyncio.run(after_the_kill())
    finally:
        server.stop()
    events = _events(tmp_path, "ann")
    locker = next(e for e in events if e["type"] == "user" and e["text"] == LOCKER)
    compact = next(e for e in events if e["type"] == "compact")
    assert compact["fromSeq"] <= locker["seq"] <= compact["throughSeq"], "the compaction dropped the locker"
    assert compact["extraction"] == "covered"
    assert [r["text"] for r in records] == [LOCKER_FACT], "what it claims covered is in memory"
    assert any(LOCKER in json.dumps(r.body, ensure_ascii=False) for r in server.extractions), (
        "the lines from before the restart were sent to extraction before the compaction dropped them"
    )


def test_a_compaction_that_went_on_before_its_extraction_and_a_crash_then_still_loses_no_fact(tmp_path: Path) -> None:
    server = HeldFirstExtraction()
    server.start()
    image = tmp_path / "image"

    async def crashed() -> None:
        async with MemoryHost(tmp_path / "data") as host:
            host.server.memory.extractor.cover_wait = 0.5  # the compaction goes on while the model holds it
            await host.call("agent.create", {"name": "ann", "settings": _settings(server)})
            await _talk(host, "ann", 6)
            compact = next(e for e in _events(tmp_path / "data", "ann") if e["type"] == "compact")
            assert compact["extraction"] == "unfinished"
            # A SIGKILL now: the compaction is written, the extraction it went on without never answered.
            restarted(crash_image(tmp_path / "data", image))
            server.release.set()

    async def after_the_crash() -> list[dict[str, Any]]:
        async with HostProcess(image) as host:
            for i in range(6):  # until the next compaction
                await host.idle_turn("ann", f"more {i} " + "words " * 100)
            return list((await host.call("memory.list", {"agentId": "ann", "view": "current"}))["records"])

    try:
        asyncio.run(crashed())
        records = asyncio.run(after_the_crash())
    finally:
        server.release.set()
        server.stop()
    compacts = [e["extraction"] for e in _events(image, "ann") if e["type"] == "compact"]
    assert compacts[0] == "unfinished" and compacts[-1] == "covered", compacts
    assert [r["text"] for r in records] == [LOCKER_FACT], "the lines the first one left unfinished were extracted"
