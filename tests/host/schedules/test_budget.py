"""Budgets: past a day's cap, scheduled and agent-started runs are skipped and a person's message still runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.schedules import ManualClock
from protocol.errors import INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost
from tests.support.schedules import SUMMARY, T0, add_agent, advance, every, outcome

SEND = {
    "match": r"(?m)^tell bob$",
    "on": "user",
    "toolCalls": [{"name": "send_to_agent", "arguments": {"agentId": "bob", "message": "hello"}}],
}
AFTER_TOOL = {"match": ".", "on": "tool", "reply": "noted"}


def test_a_spent_budget_skips_the_schedule_lets_the_persons_message_run_and_spares_other_agents(
    tmp_path: Path,
) -> None:
    clock = ManualClock(T0)

    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=clock) as host:
            await host.call("settings.set", {"timeZone": "UTC"})
            await add_agent(host, "ann")
            await add_agent(host, "bob")
            capped = await host.call("budget.set", {"agentId": "ann", "requestsPerDay": 1})
            assert capped["limits"] == {"tokensPerDay": None, "requestsPerDay": 1} and not capped["spent"]
            mine = await every(host, "ann", 3600)
            theirs = await every(host, "bob", 3600)
            first = {f["scheduleId"]: f for f in await advance(host, 3600)}
            assert (await outcome(host, first[mine]["firingId"]))["outcome"] == "ran"
            await outcome(host, first[theirs]["firingId"])
            spent = await host.call("budget.get", {"agentId": "ann"})
            # the run's one request (and memory extraction's, when it has run by now)
            assert spent["spent"] and spent["today"]["requests"] >= 1 and spent["today"]["day"] == "2027-01-15"
            second = {f["scheduleId"]: f for f in await advance(host, 3600)}
            assert (second[mine]["outcome"], second[mine]["reason"]) == ("skipped", "budget")
            assert "of its 1 model requests for today" in second[mine]["detail"]
            assert (await outcome(host, second[theirs]["firingId"]))["outcome"] == "ran"  # bob has no cap
            ended = await host.idle_turn("ann", "summarize")  # the person's own message still runs...
            warning = await host.wait_for("agent.warning", lambda p: p["runId"] == ended["runId"])
            assert warning["kind"] == "budget" and warning["agentId"] == "ann"  # ...with a warning
            clock.set(T0 + 86_400)  # the next day in UTC: the cap is fresh
            next_day = {f["scheduleId"]: f for f in await advance(host, 0)}
            assert (await outcome(host, next_day[mine]["firingId"]))["outcome"] == "ran"
        async with MemoryHost(tmp_path, schedule_clock=clock) as host:
            kept = await host.call("budget.get", {"agentId": "ann"})
            assert kept["limits"]["requestsPerDay"] == 1 and kept["today"]["requests"] >= 1 and kept["spent"]

    asyncio.run(main())


def test_no_other_agent_can_wake_an_agent_whose_budget_is_spent(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=ManualClock(T0)) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SEND, AFTER_TOOL)})
            await add_agent(host, "bob", {"match": ".", "reply": "hi"})
            await host.call("budget.set", {"agentId": "bob", "tokensPerDay": 1})
            await host.idle_turn("bob", "warm up")  # spends bob's day
            await host.idle_turn("ann", "tell bob")
            page = await host.call("agent.transcript", {"agentId": "ann"})
            result = next(e for e in page["events"] if e["type"] == "tool")
            assert result["isError"] and result["content"].startswith("refused: budget.")
            bob = await host.call("agent.transcript", {"agentId": "bob"})
            assert [e for e in bob["events"] if e["type"] == "wake"] == []

    asyncio.run(main())


def test_extraction_and_every_model_request_of_a_turn_count(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=ManualClock(T0)) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SEND, AFTER_TOOL)})
            await add_agent(host, "bob", {"match": ".", "reply": "hi"})
            await host.idle_turn("ann", "tell bob")
            used = await host.call("budget.get", {"agentId": "ann"})
            # the tool call, then the reply (and extraction's request, when it has run by now)
            assert used["today"]["requests"] >= 2 and used["today"]["tokens"] > 0

    asyncio.run(main())


def test_a_budget_names_exactly_one_agent_or_work_that_exists(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, schedule_clock=ManualClock(T0)) as host:
            await add_agent(host, "ann", SUMMARY)
            for params, code in (
                ({"agentId": "ann", "workId": "w"}, INVALID_PARAMS),
                ({}, INVALID_PARAMS),
                ({"agentId": "nobody"}, NOT_FOUND),
                ({"workId": "nowork"}, NOT_FOUND),
                ({"agentId": "ann", "requestsPerDay": 0}, INVALID_PARAMS),
            ):
                with pytest.raises(JsonRpcError) as refused:
                    await host.call("budget.set", params)
                assert refused.value.code == code, params
            assert (await host.call("budget.get", {"agentId": "ann"}))["limits"]["requestsPerDay"] is None

    asyncio.run(main())
