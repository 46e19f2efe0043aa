"""An agent's proposed schedule does nothing until a person says yes; a Work's schedule runs as a Work run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.schedules import ManualClock
from protocol.errors import INVALID_PARAMS, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost
from tests.support.schedules import SUMMARY, T0, add_agent, advance, outcome

PROPOSES = {
    "match": r"(?m)^plan$",
    "on": "user",
    "toolCalls": [{"name": "propose_schedule", "arguments": {"everySeconds": 600, "message": "summarize"}}],
}


def test_a_proposed_schedule_never_fires_until_a_person_approves_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=ManualClock(T0)) as host:
            rules = scripted_model(PROPOSES, SUMMARY, {"match": ".", "on": "tool", "reply": "proposed"})
            await host.call("agent.create", {"name": "ann", "settings": rules})
            await host.idle_turn("ann", "plan")
            [proposed] = (await host.call("schedule.list", {"agentId": "ann"}))["schedules"]
            assert proposed["state"] == "proposed" and proposed["proposedBy"] == "ann" and proposed["nextDue"] is None
            assert await advance(host, 1800) == []  # proposed: nothing fires, nothing is recorded
            with pytest.raises(JsonRpcError) as not_active:
                await host.call("schedule.pause", {"scheduleId": proposed["scheduleId"]})
            assert not_active.value.code == INVALID_PARAMS
            approved = await host.call("schedule.approve", {"scheduleId": proposed["scheduleId"]})
            assert approved["state"] == "active" and approved["nextDue"] is not None
            [fired] = await advance(host, 600)
            assert (await outcome(host, fired["firingId"]))["outcome"] == "ran"
            page = await host.call("agent.transcript", {"agentId": "ann"})
            texts = [e["text"] for e in page["events"] if e["type"] == "user"]
            assert "proposed by you and approved by the user" in texts[-1]

    asyncio.run(main())


def test_a_works_schedule_runs_as_a_work_run_of_its_member_and_reaches_the_timeline(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=ManualClock(T0)) as host:
            await add_agent(host, "ann", {"match": r"(?m)^summarize$", "reply": "board is fine"})
            await add_agent(host, "bob")
            await host.call("work.create", {"name": "Release", "members": ["ann"]})
            with pytest.raises(JsonRpcError) as not_member:
                await host.call(
                    "schedule.add", {"agentId": "bob", "workId": "release", "everySeconds": 600, "message": "x"}
                )
            assert not_member.value.code == INVALID_PARAMS
            await host.call(
                "schedule.add", {"agentId": "ann", "workId": "release", "everySeconds": 600, "message": "summarize"}
            )
            [fired] = await advance(host, 600)
            assert fired["workId"] == "release"
            assert (await outcome(host, fired["firingId"]))["outcome"] == "ran"
            timeline = await host.call("work.timeline", {"workId": "release"})
            kinds = [(e["kind"], e["actor"]) for e in timeline["entries"]]
            assert ("dispatch", "schedule") in kinds and ("post", "ann") in kinds
            private = await host.call("agent.transcript", {"agentId": "ann"})
            assert private["events"] == []  # a Work run writes the Work's transcript, never the member's own
            assert (await host.call("budget.get", {"workId": "release"}))["today"]["requests"] >= 1

    asyncio.run(main())
