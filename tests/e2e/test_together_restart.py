"""End to end: a wake and a request left unanswered by a SIGKILLed host are delivered once after a restart,
and a Work written before the kill is whole after it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

LONG = {"match": r"^slow$", "on": "user", "reply": "z" * 240, "chunkChars": 3, "delayMs": 25}


def events(data: Path, agent_id: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_after_sigkill_an_unanswered_wake_and_an_open_request_are_each_delivered_once(tmp_path: Path) -> None:
    ann = scripted_model(
        {
            "match": r"^go$",
            "on": "user",
            "toolCalls": [
                {"name": "send_to_agent", "arguments": {"agentId": "bob", "message": "ping"}},
                {"name": "ask_agent", "arguments": {"agentId": "carl", "question": "pong?", "timeoutSeconds": 600}},
            ],
        },
        {"match": r"(?s)^\[answer from agent carl.*?\]\n(.*)$", "on": "wake", "reply": r"heard \1"},
        {"match": ".", "on": "tool", "reply": "done"},
    )
    bob = scripted_model(LONG, {"match": r"(?m)^ping$", "on": "wake", "reply": "got ping"})
    carl = scripted_model(LONG, {"match": r"(?m)^pong\?$", "on": "wake", "reply": "pong!"})

    async def first_life() -> None:
        host = HostProcess(tmp_path)
        async with host:
            for name, settings in (("ann", ann), ("bob", bob), ("carl", carl)):
                await host.call("agent.create", {"name": name, "settings": settings})
            for name in ("bob", "carl"):
                busy = await host.call("agent.send", {"agentId": name, "text": "slow"})
                await host.wait_for("agent.delta", lambda p, r=busy["runId"]: p["runId"] == r)
            await host.call("work.create", {"name": "Kept", "members": ["ann"]})
            await host.call("work.taskCreate", {"workId": "kept", "title": "Survive", "expectedRevision": 0})
            await host.call("work.post", {"workId": "kept", "text": "before the kill"})
            await host.send_and_wait("ann", "go")
            for name in ("bob", "carl"):
                assert len((await host.call("agent.get", {"agentId": name}))["queue"]) == 1
            assert host.process is not None
            host.process.kill()
            await host.process.wait()

    async def second_life() -> None:
        async with HostProcess(tmp_path) as host:
            await host.wait_for("agent.message", lambda p: p["agentId"] == "bob" and p["message"]["text"] == "got ping")
            await host.wait_for(
                "agent.message", lambda p: p["agentId"] == "ann" and p["message"]["text"] == "heard pong!"
            )
            await host.wait_for("agent.ended", lambda p: p["agentId"] == "ann")

    async def third_life() -> None:
        async with HostProcess(tmp_path) as host:
            status = await host.call("host.status")
            assert status["runs"] == []
            for name in ("ann", "bob", "carl"):
                assert (await host.call("agent.get", {"agentId": name}))["queue"] == []
            work = await host.call("work.get", {"workId": "kept"})
            assert work["revision"] == 1 and [t["title"] for t in work["tasks"]] == ["Survive"]
            timeline = await host.call("work.timeline", {"workId": "kept"})
            assert [e["text"] for e in timeline["entries"]][-1] == "before the kill"

    asyncio.run(first_life())
    asyncio.run(second_life())
    before = {name: len(events(tmp_path, name)) for name in ("ann", "bob", "carl")}
    asyncio.run(third_life())
    assert {name: len(events(tmp_path, name)) for name in ("ann", "bob", "carl")} == before
    assert [e["text"] for e in events(tmp_path, "bob") if e["type"] == "wake"] == ["ping"]
    assert [e["text"] for e in events(tmp_path, "carl") if e["type"] == "wake"] == ["pong?"]
    answers = [e for e in events(tmp_path, "ann") if e["type"] == "wake"]
    assert [(a["status"], a["text"]) for a in answers] == [("answered", "pong!")]
