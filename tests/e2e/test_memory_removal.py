"""Issue 11.1: a removed fact leaves everything the model sees on the very next turn, and an erased one the disk.

Through the real host and kernel, with a local fake OpenAI server capturing every request: the extractor
adds two facts in the background, so the next turn shows them in its recall block; then one is retracted
(or erased) and the very next request must not carry it anywhere, while the other is still there.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.kernel.providers.fake_llm_server import Recorded
from tests.support.fake_model import ChatServer, model_settings, say
from tests.support.host_process import HostProcess

CAT = "The user's cat is called Miso."
TEA = "The user drinks oolong tea every morning."


def memory_server(*facts: str) -> ChatServer:
    """Answers chat turns with "ok"; the first extraction asserts the given facts, later ones nothing."""
    pending = list(facts)

    def extract(_: Recorded) -> str:
        operations = [{"op": "assert", "text": text, "seq": 1, "source": "user"} for text in pending]
        pending.clear()
        return json.dumps({"operations": operations})

    return ChatServer(extract, otherwise=say("ok"))


async def wait_for_asserts(host: HostProcess, count: int) -> None:
    """Wait until `count` assert notices have arrived (the extractor writes one per fact)."""
    seen = 0
    for _ in range(count):
        await host.wait_for("memory.changed", lambda p: p["op"] == "assert", after=seen)
        seen = (
            next(
                i for i, (m, p) in enumerate(host.events) if i >= seen and m == "memory.changed" and p["op"] == "assert"
            )
            + 1
        )


async def facts_reach_a_recall_block(host: HostProcess, server: ChatServer) -> dict[str, str]:
    """Turn 1 lets the extractor add both facts; turn 2 shows them in its recall block. Returns text → id."""
    await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
    # The user's own words support both facts (the extractor's facts from them are confirmed), but never
    # in the fact's own phrasing, so "called Miso" can only come from memory.
    await host.idle_turn("ann", "Miso is my cat's name, and I drink oolong tea every morning.")
    await wait_for_asserts(host, 2)
    await host.idle_turn("ann", "What do you know about my mornings and my pets?")
    current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
    ids = {record["text"]: record["id"] for record in current["records"]}
    assert set(ids) == {CAT, TEA}
    shown = [m for m in server.requests[-1].body["messages"] if m["role"] == "user"][-1]["content"]
    recall = shown.split("<memory-recall>", 1)[-1]
    assert "<memory-recall>" in shown and "called Miso" in recall and "oolong" in recall, shown
    return ids


@pytest.mark.parametrize("removal", ["memory.retract", "memory.erase"])
def test_a_removed_fact_is_in_no_part_of_the_very_next_request_and_the_other_fact_stays(
    tmp_path: Path, removal: str
) -> None:
    server = memory_server(CAT, TEA)
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            ids = await facts_reach_a_recall_block(host, server)
            await host.call(removal, {"agentId": "ann", "recordId": ids[CAT], "reason": "no cat"})
            before = len(server.requests)
            await host.idle_turn("ann", "Tell me again what you remember.")
            (after,) = server.requests[before:]
            sent = json.dumps(after.body, ensure_ascii=False)
            assert "called Miso" not in sent, "a removed fact must leave the very next request"
            assert "oolong" in sent, "the fact beside it stays"
            await host.idle_turn("ann", "And once more?")
            assert all("called Miso" not in json.dumps(r.body) for r in server.requests[before:])

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_an_erased_fact_leaves_no_byte_under_the_agent_directory_and_the_ledger_stays_private(tmp_path: Path) -> None:
    server = memory_server(CAT, TEA)
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            ids = await facts_reach_a_recall_block(host, server)
            await host.call("memory.erase", {"agentId": "ann", "recordId": ids[CAT]})
            await host.idle_turn("ann", "Anything else?")
            verified = await host.call("memory.verify", {"agentId": "ann"})
            assert verified["ok"], verified

    try:
        asyncio.run(main())
    finally:
        server.stop()
    agent_dir = tmp_path / "agents/ann"
    files = [path for path in agent_dir.rglob("*") if path.is_file()]
    assert any(path.name == "transcript.jsonl" for path in files) and len(files) > 4
    for path in files:
        data = path.read_bytes()
        assert b"called Miso" not in data, f"erased text left in {path.relative_to(agent_dir)}"
    assert any(b"oolong" in path.read_bytes() for path in files if path.name == "ledger.jsonl")
    assert (agent_dir / "memory/ledger.jsonl").stat().st_mode & 0o777 == 0o600


def test_an_erase_also_removes_recall_text_an_earlier_version_stored_in_the_transcript(tmp_path: Path) -> None:
    """Transcripts written before recall blocks were kept as ids hold the block's text; an erase takes it out."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann"})
            noted = await host.call("memory.note", {"agentId": "ann", "text": CAT})
            await host.call("memory.note", {"agentId": "ann", "text": TEA})
        legacy = [
            {"seq": 1, "ts": "2026-01-01T00:00:00.000Z", "type": "user", "text": "Tell me about my pets."},
            {
                "seq": 2,
                "ts": "2026-01-01T00:00:00.000Z",
                "type": "context",
                "runId": "r-old",
                "epoch": 1,
                "recall": f"Recalled from memory for this message:\n- [{noted['record']['id']}] {CAT}\n- {TEA}",
            },
            # The run ended: a run left open would be closed at the next start ("the host stopped").
            {"seq": 3, "ts": "2026-01-01T00:00:01.000Z", "type": "ended", "runId": "r-old", "reason": "idle"},
        ]
        transcript = tmp_path / "agents/ann/transcript.jsonl"
        transcript.write_text("".join(json.dumps(e) + "\n" for e in legacy), encoding="utf-8")
        async with HostProcess(tmp_path) as host:
            await host.call("memory.erase", {"agentId": "ann", "recordId": noted["record"]["id"]})
            page = await host.call("agent.transcript", {"agentId": "ann"})
            assert [e["seq"] for e in page["events"]] == [1, 2, 3] and page["events"][0]["text"] == legacy[0]["text"]

    asyncio.run(main())
    for path in (tmp_path / "agents/ann").rglob("*"):
        if path.is_file():
            assert b"Miso" not in path.read_bytes(), f"erased text left in {path.name}"
