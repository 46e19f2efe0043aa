"""End to end, through `python -m host` over real pipes on a test clock (`HEARTH_TEST_CLOCK`): schedules fire
and report, a SIGKILL across two firing times is recorded by each schedule's rule, budgets and loops hold."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from host.schedules.firings import FIRINGS_FILE
from protocol.errors import METHOD_NOT_FOUND, JsonRpcError
from tests.support.host_process import HostProcess, scripted_model
from tests.support.schedules import SLOW, SUMMARY, T0, add_agent, advance, every, outcome

SLOW_SUMMARY = {"match": r"(?m)^summarize$", "on": "user", "reply": "y" * 300, "chunkChars": 2, "delayMs": 25}


def on_clock(data: Path, t: float) -> HostProcess:
    return HostProcess(data, env={"HEARTH_TEST_CLOCK": str(t)})


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def log_lines(data: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data / FIRINGS_FILE).read_text(encoding="utf-8").splitlines()]


async def settled(host: HostProcess, schedule_id: str) -> list[dict[str, Any]]:
    """The schedule's firings once none is still waiting for its outcome."""
    firings = (await host.call("schedule.firings", {"scheduleId": schedule_id}))["firings"]
    for firing in firings:
        if firing["outcome"] is None:
            await outcome(host, firing["firingId"])
    return list((await host.call("schedule.firings", {"scheduleId": schedule_id}))["firings"])


def test_a_schedule_fires_and_its_run_ends_ran_and_a_busy_agents_firing_is_skipped_busy(tmp_path: Path) -> None:
    async def main() -> None:
        async with on_clock(tmp_path, T0) as host:
            await add_agent(host, "ann", SLOW, SUMMARY)
            sid = await every(host, "ann", 600)
            [fired] = await advance(host, 600)
            done = await outcome(host, fired["firingId"])
            assert done["outcome"] == "ran"
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == done["runId"])
            assert ended["reason"] == "idle"
            busy = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            [skipped] = await advance(host, 600)
            assert (skipped["outcome"], skipped["reason"], skipped["scheduleId"]) == ("skipped", "busy", sid)
            shown = await host.call("schedule.get", {"scheduleId": sid})
            assert shown["last"]["reason"] == "busy" and shown["nextDue"] == iso(T0 + 1800)

    asyncio.run(main())


def test_a_host_killed_across_two_firing_times_records_them_by_each_schedules_rule(tmp_path: Path) -> None:
    ids: dict[str, str] = {}

    async def first_life() -> None:
        host = on_clock(tmp_path, T0)
        async with host:
            for name in ("ann", "bob"):
                await add_agent(host, name)
            await add_agent(host, "carl", SLOW_SUMMARY)
            ids["ann"] = await every(host, "ann", 600, missed="once")
            ids["bob"] = await every(host, "bob", 600, missed="skip")
            once = await host.call("schedule.add", {"agentId": "carl", "at": iso(T0 + 60), "message": "summarize"})
            ids["carl"] = once["scheduleId"]
            [fired] = await advance(host, 60)
            await host.wait_for("agent.delta", lambda p: p["runId"] == fired["runId"])  # carl's run is under way
            assert host.process is not None
            host.process.kill()
            await host.process.wait()

    async def second_life() -> None:
        async with on_clock(tmp_path, T0 + 1300) as host:  # down over T0+600 and T0+1200
            ann = await settled(host, ids["ann"])
            assert [(f["due"], f["outcome"], f["reason"]) for f in ann] == [
                (iso(T0 + 600), "skipped", "host_down"),
                (iso(T0 + 1200), "ran", None),
            ]
            bob = await settled(host, ids["bob"])
            assert [(f["outcome"], f["reason"]) for f in bob] == [("skipped", "host_down")] * 2
            [carl] = await settled(host, ids["carl"])  # the run the kill cut short ran again, to one outcome
            assert carl["outcome"] == "ran"
            assert (await host.call("schedule.get", {"scheduleId": ids["carl"]}))["state"] == "done"

    async def third_life() -> None:
        async with on_clock(tmp_path, T0 + 1300) as host:
            for sid in ids.values():
                assert all(f["outcome"] is not None for f in await settled(host, sid))
            assert (await host.call("host.status"))["runs"] == []

    asyncio.run(first_life())
    asyncio.run(second_life())
    before = len(log_lines(tmp_path))
    asyncio.run(third_life())
    lines = log_lines(tmp_path)
    assert len(lines) == before  # nothing was decided or ended twice
    ends = Counter(line["id"] for line in lines if line["op"] == "end")
    assert len(ends) == 5 and set(ends.values()) == {1}  # five firings, each with exactly one outcome


def test_a_budget_stops_scheduled_runs_and_the_persons_message_still_runs_with_a_warning(tmp_path: Path) -> None:
    async def main() -> None:
        async with on_clock(tmp_path, T0) as host:
            await add_agent(host, "ann")
            await host.call("budget.set", {"agentId": "ann", "requestsPerDay": 1})
            await every(host, "ann", 600)
            [first] = await advance(host, 600)
            assert (await outcome(host, first["firingId"]))["outcome"] == "ran"
            [second] = await advance(host, 600)
            assert (second["outcome"], second["reason"]) == ("skipped", "budget")
            ended = await host.idle_turn("ann", "summarize")
            warning = await host.wait_for("agent.warning", lambda p: p["runId"] == ended["runId"])
            assert warning["kind"] == "budget"
            assert (await host.call("budget.get", {"agentId": "ann"}))["today"]["requests"] >= 2

    asyncio.run(main())


def test_a_three_agent_loop_is_refused_with_refused_loop_at_the_sender(tmp_path: Path) -> None:
    def passes_to(receiver: str) -> dict[str, Any]:
        call = {"name": "send_to_agent", "arguments": {"agentId": receiver, "message": "pass"}}
        return scripted_model(
            {"match": r"(?m)^(go|pass)$", "toolCalls": [call]}, {"match": ".", "on": "tool", "reply": "ok"}
        )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("settings.set", {"maxHops": 32})
            for name, nxt in (("ann", "bob"), ("bob", "carl"), ("carl", "ann")):
                await host.call("agent.create", {"name": name, "settings": passes_to(nxt)})
            await host.idle_turn("ann", "go")
            refusal = await host.wait_for(
                "agent.tool", lambda p: p["status"] == "completed" and "refused: loop" in (p.get("content") or "")
            )
            assert refusal["agentId"] == "carl"
            await host.wait_for("agent.ended", lambda p: p["runId"] == refusal["runId"])
            assert (await host.call("agent.get", {"agentId": "ann"}))["queue"] == []

    asyncio.run(main())


def test_a_host_without_the_test_clock_has_no_way_to_move_time(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, env={"HEARTH_TEST_CLOCK": ""}) as host:
            with pytest.raises(JsonRpcError) as missing:
                await host.call("debug.advanceClock", {"by": 3600})
            assert missing.value.code == METHOD_NOT_FOUND

    asyncio.run(main())
