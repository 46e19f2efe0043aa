"""Chains that cannot loop: a message back to an agent the chain already reached twice is refused, for
send_to_agent and ask_agent alike, and a chain stops once its hops have used the chain's model budget."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from host.together.chains import MAX_VISITS, loop_refusal
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

AFTER_TOOL = {"match": ".", "on": "tool", "reply": "passed it on"}


def passes_to(receiver: str) -> dict[str, Any]:
    """Rules of an agent that passes every message (a person's or a peer's) on to `receiver`."""
    return scripted_model(
        {
            "match": r"(?m)^(go|pass)$",
            "toolCalls": [{"name": "send_to_agent", "arguments": {"agentId": receiver, "message": "pass"}}],
        },
        AFTER_TOOL,
    )


def tool_results(host_dir: Path, agent_id: str) -> list[str]:
    lines = (host_dir / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [e["content"] for e in map(json.loads, lines) if e["type"] == "tool"]


def test_a_path_may_reach_one_agent_twice_and_no_more() -> None:
    assert loop_refusal(("ann",), "bob") is None
    assert loop_refusal(("ann", "bob"), "ann") is None
    refused = loop_refusal(("ann", "bob", "ann", "bob"), "ann")
    assert refused is not None and refused.startswith("refused: loop.") and MAX_VISITS == 2
    assert "ann → bob → ann → bob → ann" in refused


def test_a_three_agent_loop_is_refused_at_the_sender_with_refused_loop(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("settings.set", {"maxHops": 32})  # only the loop rule may stop this chain
            for name, nxt in (("ann", "bob"), ("bob", "carl"), ("carl", "ann")):
                await host.call("agent.create", {"name": name, "settings": passes_to(nxt)})
            await host.idle_turn("ann", "go")
            refusal = await host.wait_for(
                "agent.tool", lambda p: p["status"] == "completed" and "refused: loop" in (p.get("content") or "")
            )
            assert refusal["agentId"] == "carl" and refusal["isError"]
            await host.wait_for("agent.ended", lambda p: p["runId"] == refusal["runId"])
            for name in ("ann", "bob", "carl"):
                assert (await host.call("agent.get", {"agentId": name}))["queue"] == []

    asyncio.run(main())
    # ann → bob → carl → ann → bob → carl, then carl's message to ann is refused: each agent ran twice
    assert [len(tool_results(tmp_path, name)) for name in ("ann", "bob", "carl")] == [2, 2, 2]
    assert tool_results(tmp_path, "carl")[-1].startswith("refused: loop.")
    assert not any(r.startswith("refused") for r in tool_results(tmp_path, "ann") + tool_results(tmp_path, "bob"))


def test_questions_and_answers_that_ping_pong_are_refused_and_the_request_ends_refused_loop(tmp_path: Path) -> None:
    asks = {"name": "ask_agent", "arguments": {"agentId": "bob", "question": "again?", "timeoutSeconds": 60}}
    ann = scripted_model(
        {"match": r"(?m)^go$", "on": "user", "toolCalls": [asks]},
        {"match": r"answer from agent bob", "on": "wake", "toolCalls": [asks]},
        {"match": ".", "on": "tool", "reply": "asked"},
    )
    bob = scripted_model({"match": r"(?m)^again\?$", "on": "wake", "reply": "yes"})

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("settings.set", {"maxHops": 32})
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.idle_turn("ann", "go")
            refusal = await host.wait_for(
                "agent.tool", lambda p: p["status"] == "completed" and "refused: loop" in (p.get("content") or "")
            )
            assert refusal["agentId"] == "ann"
            await host.wait_for("agent.ended", lambda p: p["runId"] == refusal["runId"])
            desk = host.server.together.desk
            refused = [r for r in desk.book.all() if r.status == "refused"]
            assert len(refused) == 1 and refused[0].reason == "loop" and refused[0].delivered
            assert refused[0].request_id in refusal["content"]
            assert sum(1 for r in desk.book.all() if r.status == "answered") == 2

    asyncio.run(main())


def test_a_chain_stops_once_its_hops_have_used_its_model_budget(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("settings.set", {"maxHops": 32, "chainBudget": 3})
            for name, nxt in (("ann", "bob"), ("bob", "carl"), ("carl", "dora"), ("dora", "ann")):
                await host.call("agent.create", {"name": name, "settings": passes_to(nxt)})
            await host.idle_turn("ann", "go")
            refusal = await host.wait_for(
                "agent.tool", lambda p: p["status"] == "completed" and "refused: budget" in (p.get("content") or "")
            )
            assert "This chain of messages has used" in refusal["content"]
            await host.wait_for("agent.ended", lambda p: p["runId"] == refusal["runId"])
            assert (await host.call("agent.get", {"agentId": "dora"}))["queue"] == []

    asyncio.run(main())
    assert not (tmp_path / "agents" / "dora" / "transcript.jsonl").exists()  # never reached its fourth agent
