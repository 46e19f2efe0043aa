"""Teammate tools through a whole host in memory: trust of what a wake led to, one new agent per turn, stop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

DONE = {"match": ".", "on": "tool", "reply": "done"}
SLOW = {"match": r"^slow$", "on": "user", "reply": "z" * 300, "chunkChars": 3, "delayMs": 20}
BRIEF = {"match": r"^brief$", "on": "user", "reply": "y" * 300, "chunkChars": 3, "delayMs": 4}


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def tool_results(data: Path, agent_id: str, name: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == "tool" and e["name"] == name]


def test_a_fact_noted_in_a_run_a_peer_woke_is_proposed_with_the_peer_as_source_and_a_users_is_not(
    tmp_path: Path,
) -> None:
    ann = scripted_model(
        {"match": r"^tell (.*)$", "on": "user", "toolCalls": [call("send_to_agent", agentId="bob", message=r"\1")]},
        DONE,
    )
    note = call("memory_note", text=r"\1")
    bob = scripted_model(
        {"match": r"(?m)^note (.*)$", "on": "wake", "toolCalls": [note]},
        {"match": r"^note (.*)$", "on": "user", "toolCalls": [note]},
        DONE,
    )

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.send_and_wait("ann", "tell note The office moved to Leeds.")
            await host.wait_for("agent.ended", lambda p: p["agentId"] == "bob")
            await host.send_and_wait("bob", "note The user drinks green tea.")
            proposed = await host.call("memory.list", {"agentId": "bob", "view": "proposed"})
            current = await host.call("memory.list", {"agentId": "bob", "view": "current"})
            assert [(r["text"], r["source"]) for r in proposed["records"]] == [
                ("The office moved to Leeds.", "peer:ann")
            ]
            assert [r["text"] for r in current["records"]] == ["The user drinks green tea."]

    asyncio.run(main())


def test_an_agent_creates_at_most_one_teammate_per_turn_and_is_told_why(tmp_path: Path) -> None:
    maker = scripted_model(
        {
            "match": r"^hire (\w+) and (\w+)$",
            "on": "user",
            "toolCalls": [call("create_agent", name=r"\1"), call("create_agent", name=r"\2")],
        },
        DONE,
    )

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "boss", "settings": maker})
            await host.send_and_wait("boss", "hire Helper and Extra")
            names = [a["name"] for a in (await host.call("agent.list"))["agents"]]
            assert names == ["boss", "Helper"]
            helper = await host.call("agent.get", {"agentId": "helper"})
            assert helper["settings"]["model"]["provider"] == "scripted"
            await host.send_and_wait("boss", "hire Third and Fourth")
            assert len((await host.call("agent.list"))["agents"]) == 3

    asyncio.run(main())
    results = tool_results(tmp_path, "boss", "create_agent")
    assert [r["isError"] for r in results] == [False, True, False, True]
    assert "one teammate per turn" in results[1]["content"]


def test_stop_agent_cancels_the_turn_drops_what_waited_and_leaves_other_agents_alone(tmp_path: Path) -> None:
    boss = scripted_model(
        {"match": r"^stop (\w+)$", "on": "user", "toolCalls": [call("stop_agent", agentId=r"\1")]}, DONE
    )
    worker = scripted_model(SLOW, BRIEF, {"match": r"^say (.*)$", "reply": r"\1"})

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "boss", "settings": boss})
            for name in ("w1", "w2"):
                await host.call("agent.create", {"name": name, "settings": worker})
            busy = await host.call("agent.send", {"agentId": "w1", "text": "slow"})
            waiting = await host.call("agent.send", {"agentId": "w1", "text": "say later"})
            other = await host.call("agent.send", {"agentId": "w2", "text": "brief"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            await host.send_and_wait("boss", "stop w1")
            ends = {p["runId"]: p["reason"] for m, p in host.events if m == "agent.ended"}
            assert ends[busy["runId"]] == "cancelled" and ends[waiting["runId"]] == "cancelled"
            assert (await host.call("agent.get", {"agentId": "w1"}))["queue"] == []
            done = await host.wait_for("agent.ended", lambda p: p["runId"] == other["runId"])
            assert done["reason"] == "idle"

    asyncio.run(main())
    lines = (tmp_path / "agents" / "w1" / "transcript.jsonl").read_text(encoding="utf-8")
    assert "say later" not in lines


def test_read_agent_transcript_shows_a_peers_replies_but_not_its_memory(tmp_path: Path) -> None:
    reader = scripted_model(
        {"match": r"^read$", "on": "user", "toolCalls": [call("read_agent_transcript", agentId="keeper")]}, DONE
    )
    keeper = scripted_model(
        {"match": r"^hello$", "on": "user", "toolCalls": [call("memory_recall", query="vault")]}, DONE
    )

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "reader", "settings": reader})
            await host.call("agent.create", {"name": "keeper", "settings": keeper})
            await host.call("memory.note", {"agentId": "keeper", "text": "The vault is behind the blue door."})
            await host.send_and_wait("keeper", "hello")
            await host.send_and_wait("reader", "read")

    asyncio.run(main())
    assert "blue door" in tool_results(tmp_path, "keeper", "memory_recall")[0]["content"]
    seen = tool_results(tmp_path, "reader", "read_agent_transcript")[0]["content"]
    assert "the user: hello" in seen and "[used tools: memory_recall]" in seen
    assert "blue door" not in seen and "vault" not in seen


def test_check_agent_tells_the_peers_state_queue_and_the_open_requests_between_them(tmp_path: Path) -> None:
    asker = scripted_model(
        {"match": r"^ask$", "on": "user", "toolCalls": [call("ask_agent", agentId="busy", question="status?")]},
        {"match": r"^check$", "on": "user", "toolCalls": [call("check_agent", agentId="busy")]},
        {"match": r"^check me$", "on": "user", "toolCalls": [call("check_agent", agentId="asker")]},
        DONE,
    )

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "asker", "settings": asker})
            await host.call("agent.create", {"name": "busy", "settings": scripted_model(SLOW)})
            running = await host.call("agent.send", {"agentId": "busy", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == running["runId"])
            await host.send_and_wait("asker", "ask")
            await host.send_and_wait("asker", "check")
            await host.send_and_wait("asker", "check me")
            await host.call("agent.cancel", {"agentId": "busy"})

    asyncio.run(main())
    checked, own = tool_results(tmp_path, "asker", "check_agent")
    assert "busy (busy) is running, with 1 run(s) waiting." in checked["content"]
    assert "Your open requests to it: q-" in checked["content"] and not checked["isError"]
    assert own["isError"] and "your own id" in own["content"]


def test_the_bound_on_waiting_messages_lets_a_sender_send_again_once_the_receiver_has_read_them(
    tmp_path: Path,
) -> None:
    """The per-receiver bound counts what is in the inbox now, not what was ever sent."""
    flood = [call("send_to_agent", agentId="bob", message=f"note {n}") for n in range(9)]
    ann = scripted_model(
        {"match": r"^flood$", "on": "user", "toolCalls": flood},
        {"match": r"^once more$", "on": "user", "toolCalls": [call("send_to_agent", agentId="bob", message="note 9")]},
        DONE,
    )
    bob = scripted_model(SLOW, {"match": r"(?m)^note (\d+)$", "on": "wake", "reply": r"read \1"})

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            busy = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            await host.send_and_wait("ann", "flood")
            read = await host.wait_for("agent.message", lambda p: p["message"]["text"] == "read 7", timeout=60)
            await host.wait_for("agent.ended", lambda p: p["runId"] == read["runId"])
            assert (await host.call("agent.get", {"agentId": "bob"}))["queue"] == []
            await host.send_and_wait("ann", "once more")
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "read 9")

    asyncio.run(main())
    results = tool_results(tmp_path, "ann", "send_to_agent")
    assert [r["isError"] for r in results] == [False] * 8 + [True, False]
    assert "8 of your messages and questions are already in bob's inbox" in results[8]["content"]
