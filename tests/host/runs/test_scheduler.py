"""The run scheduler, driven in memory: queueing, concurrency, busy agents, cancels, one end per run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import NOT_FOUND, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

ECHO = {"match": r"^say (.*)$", "reply": r"\1"}
SLOW = {"match": r"^slow$", "reply": "x" * 400, "chunkChars": 4, "delayMs": 5}


def _events(data: Path, agent_id: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_two_agents_run_at_once_and_each_run_ends_once_in_its_own_transcript(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(ECHO)})
            ended = await asyncio.gather(host.send_and_wait("ann", "say a"), host.send_and_wait("bob", "say b"))
            assert [e["reason"] for e in ended] == ["idle", "idle"]
            assert host.texts("ann", ended[0]["runId"]) == "a" and host.texts("bob", ended[1]["runId"]) == "b"

    asyncio.run(main())
    for agent_id in ("ann", "bob"):
        types = [e["type"] for e in _events(tmp_path, agent_id)]
        assert types == ["user", "context", "receipt", "assistant", "ended"]


async def _two_slow_runs_in_one_slot(host: MemoryHost) -> tuple[dict[str, Any], dict[str, Any]]:
    """With one run at a time, ann's slow run starts and bob's waits: their `agent.send` answers."""
    await host.call("settings.set", {"maxConcurrentRuns": 1})
    for name in ("ann", "bob"):
        await host.call("agent.create", {"name": name, "settings": scripted_model(SLOW)})
    a = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
    b = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
    return a, b


def test_past_the_concurrency_limit_a_run_waits_and_starts_when_a_slot_frees(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            a, b = await _two_slow_runs_in_one_slot(host)
            status = await host.call("host.status")
            assert {r["agentId"]: r["state"] for r in status["runs"]} == {"ann": "running", "bob": "queued"}
            assert (await host.call("agent.get", {"agentId": "bob"}))["status"] == "queued"
            await host.wait_for("agent.ended", lambda p: p["runId"] == b["runId"])
            order = [p["runId"] for m, p in host.events if m == "agent.ended"]
            assert order == [a["runId"], b["runId"]]

    asyncio.run(main())


def test_a_second_send_waits_outside_the_transcript_and_a_cancel_by_run_id_drops_only_it(tmp_path: Path) -> None:
    """Issue 12: the queued message is written when its run starts, so a dropped one leaves no line."""

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW, ECHO)})
            await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            dropped = await host.call("agent.send", {"agentId": "ann", "text": "say dropped"})
            kept = await host.call("agent.send", {"agentId": "ann", "text": "say kept"})
            assert (dropped["position"], kept["position"]) == (1, 2)
            assert [e["type"] for e in _events(tmp_path, "ann")].count("user") == 1
            assert await host.call("agent.cancel", {"agentId": "ann", "runId": dropped["runId"]}) == {"cancelled": True}
            gone = await host.wait_for("agent.ended", lambda p: p["runId"] == dropped["runId"])
            assert gone["reason"] == "cancelled"
            info = await host.call("agent.get", {"agentId": "ann"})
            assert [(q["runId"], q["position"]) for q in info["queue"]] == [(kept["runId"], 1)]
            await host.call("agent.cancel", {"agentId": "ann"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == kept["runId"] and p["reason"] == "idle")

    asyncio.run(main())
    users = [e["text"] for e in _events(tmp_path, "ann") if e["type"] == "user"]
    assert users == ["slow", "say kept"]


def test_an_interrupting_send_cancels_the_running_turn_and_runs_before_what_waited(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW, ECHO)})
            first = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            waiting = await host.call("agent.send", {"agentId": "ann", "text": "say later"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == first["runId"])
            urgent = await host.call("agent.send", {"agentId": "ann", "text": "say now", "interrupt": True})
            assert urgent["position"] == 0 and isinstance(urgent["seq"], int)
            await host.wait_for("agent.ended", lambda p: p["runId"] == waiting["runId"])
            ends = [(p["runId"], p["reason"]) for m, p in host.events if m == "agent.ended"]
            assert ends == [(first["runId"], "cancelled"), (urgent["runId"], "idle"), (waiting["runId"], "idle")]

    asyncio.run(main())
    users = [e["text"] for e in _events(tmp_path, "ann") if e["type"] == "user"]
    assert users == ["slow", "say now", "say later"]


def test_a_queued_run_cancelled_ends_at_once_and_never_reaches_the_kernel(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            a, b = await _two_slow_runs_in_one_slot(host)
            assert await host.call("agent.cancel", {"agentId": "bob"}) == {"cancelled": True}
            ended_b = await host.wait_for("agent.ended", lambda p: p["runId"] == b["runId"])
            assert ended_b["reason"] == "cancelled"
            ended_a = await host.wait_for("agent.ended", lambda p: p["runId"] == a["runId"])
            assert ended_a["reason"] == "idle"
            assert not [p for m, p in host.events if m == "agent.delta" and p["runId"] == b["runId"]]

    asyncio.run(main())
    assert [e["type"] for e in _events(tmp_path, "bob")] == ["user", "ended"]


def test_a_running_run_cancelled_keeps_its_streamed_text_as_a_partial_message(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == sent["runId"])
            assert await host.call("agent.cancel", {"agentId": "ann"}) == {"cancelled": True}
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "cancelled"
            assert await host.call("agent.cancel", {"agentId": "ann"}) == {"cancelled": False}

    asyncio.run(main())
    events = _events(tmp_path, "ann")
    partial = [e for e in events if e["type"] == "assistant"]
    assert len(partial) == 1 and partial[0]["partial"] is True and partial[0]["text"].startswith("xxxx")
    assert [e["type"] for e in events].count("ended") == 1


def test_cancel_and_send_for_an_unknown_agent_are_not_found(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            for method, params in (
                ("agent.cancel", {"agentId": "ghost"}),
                ("agent.send", {"agentId": "ghost", "text": "hi"}),
            ):
                with pytest.raises(JsonRpcError) as missing:
                    await host.call(method, params)
                assert missing.value.code == NOT_FOUND

    asyncio.run(main())
    assert not (tmp_path / "agents" / "ghost").exists()


def test_a_model_error_ends_the_run_with_error_and_an_agent_error_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            ended = await host.send_and_wait("ann", "no rule matches this")
            assert ended["reason"] == "error" and "no rule matches" in ended["error"]
            error = await host.wait_for("agent.error", lambda p: p["runId"] == ended["runId"])
            assert error["agentId"] == "ann"
            assert (await host.send_and_wait("ann", "say again"))["reason"] == "idle"

    asyncio.run(main())
