"""Schedules in a whole host on a hand-moved clock: every firing ends with one outcome, shown and recorded."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from host.schedules import ManualClock
from host.schedules.firings import FIRINGS_FILE, Firing, FiringLog, firing_id
from host.together.inbox import INBOX_FILE, InboxItem
from protocol.errors import INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.memory_host import MemoryHost
from tests.support.schedules import SLOW, SUMMARY, T0, add_agent, advance, every, outcome


def host_on(tmp_path: Path) -> MemoryHost:
    return MemoryHost(tmp_path, schedule_clock=ManualClock(T0))


def log_lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / FIRINGS_FILE).read_text(encoding="utf-8").splitlines()]


def test_a_due_schedule_runs_its_message_and_its_firing_ends_ran_with_that_run(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            sid = await every(host, "ann", label="hourly")
            assert await advance(host, 1800) == []  # not due yet: nothing fires early
            [fired] = await advance(host, 1800)
            assert fired["outcome"] is None and fired["scheduleId"] == sid
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == fired["runId"])
            assert ended["reason"] == "idle"
            done = await outcome(host, fired["firingId"])
            assert done["outcome"] == "ran" and done["runId"] == fired["runId"]
            listed = (await host.call("schedule.list", {"agentId": "ann"}))["schedules"]
            assert listed[0]["last"]["outcome"] == "ran" and listed[0]["nextDue"] is not None
            page = await host.call("agent.transcript", {"agentId": "ann"})
            message = next(e for e in page["events"] if e["type"] == "user")
            assert message["text"].startswith(f'[scheduled run "hourly" ({sid})') and message["text"].endswith(
                "summarize"
            )

    asyncio.run(main())
    assert [(line["op"], line.get("outcome")) for line in log_lines(tmp_path)] == [("fire", None), ("end", "ran")]


def test_a_firing_while_the_agent_works_is_skipped_busy_and_one_that_queues_runs_after(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann", SLOW, SUMMARY)
            skip = await every(host, "ann", 600)
            queue = await every(host, "ann", 600, whenBusy="queue")
            busy = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            fired = {f["scheduleId"]: f for f in await advance(host, 600)}
            assert fired[skip]["outcome"] == "skipped" and fired[skip]["reason"] == "busy"
            assert fired[queue]["outcome"] is None
            done = await outcome(host, fired[queue]["firingId"])
            assert done["outcome"] == "ran"
            first = await host.wait_for("agent.ended", lambda p: p["runId"] == busy["runId"])
            assert first["reason"] == "idle"  # the person's run was not disturbed

    asyncio.run(main())


def test_a_failing_run_ends_its_firing_failed_with_the_error(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann", {"match": "^never$", "on": "user", "reply": "x"})
            await every(host, "ann", 600)
            [fired] = await advance(host, 600)
            done = await outcome(host, fired["firingId"])
            assert done["outcome"] == "failed" and "no rule matches" in done["detail"]

    asyncio.run(main())


def test_a_paused_schedule_does_not_fire_and_resuming_does_not_catch_up(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            await add_agent(host, "bob")
            paused = await every(host, "ann", 600)
            kept = await every(host, "bob", 600)
            assert (await host.call("schedule.pause", {"scheduleId": paused}))["nextDue"] is None
            for _ in range(3):
                fired = await advance(host, 600)
                assert [f["scheduleId"] for f in fired] == [kept]  # bob's still fires: pausing one touches no other
                await outcome(host, fired[0]["firingId"])
            resumed = await host.call("schedule.resume", {"scheduleId": paused})
            assert resumed["state"] == "active"
            assert await host.call("schedule.firings", {"scheduleId": paused}) == {"firings": []}
            later = await advance(host, 600)
            assert paused in {f["scheduleId"] for f in later}
            for firing in later:
                await outcome(host, firing["firingId"])
            with pytest.raises(JsonRpcError) as again:
                await host.call("schedule.resume", {"scheduleId": paused})
            assert again.value.code == INVALID_PARAMS

    asyncio.run(main())


def test_a_removed_schedule_never_fires_and_a_one_off_fires_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            gone = await every(host, "ann", 600)
            once = await host.call(
                "schedule.add", {"agentId": "ann", "at": "2027-01-15T08:30:00+00:00", "message": "summarize"}
            )
            assert (await host.call("schedule.remove", {"scheduleId": gone})) == {"removed": True}
            [fired] = await advance(host, 3600)
            assert fired["scheduleId"] == once["scheduleId"]
            await outcome(host, fired["firingId"])
            assert (await host.call("schedule.get", {"scheduleId": once["scheduleId"]}))["state"] == "done"
            assert await advance(host, 7200) == []
            with pytest.raises(JsonRpcError) as missing:
                await host.call("schedule.get", {"scheduleId": gone})
            assert missing.value.code == NOT_FOUND

    asyncio.run(main())


def test_a_watched_folder_that_did_not_change_skips_the_firing_unchanged(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            notes = tmp_path / "agents" / "ann" / "scratch" / "notes"
            notes.mkdir(parents=True)
            (notes / "a.md").write_text("one", encoding="utf-8")
            await every(host, "ann", 600, watch="notes")
            [first] = await advance(host, 600)
            assert (await outcome(host, first["firingId"]))["outcome"] == "ran"
            [second] = await advance(host, 600)
            assert (second["outcome"], second["reason"]) == ("skipped", "unchanged")
            (notes / "b.md").write_text("two", encoding="utf-8")
            [third] = await advance(host, 600)
            assert (await outcome(host, third["firingId"]))["outcome"] == "ran"

    asyncio.run(main())


@pytest.mark.parametrize(
    "bad",
    [
        {"everySeconds": 600, "cron": "0 8 * * *"},
        {},
        {"cron": "61 * * * *"},
        {"at": "2020-01-01T08:00:00+00:00"},
        {"everySeconds": 10},
        {"everySeconds": 600, "watch": "../other"},
        {"everySeconds": 600, "whenBusy": "sometimes"},
    ],
)
def test_a_bad_schedule_is_refused_with_invalid_params_and_nothing_is_written(
    tmp_path: Path, bad: dict[str, Any]
) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            with pytest.raises(JsonRpcError) as refused:
                await host.call("schedule.add", {"agentId": "ann", "message": "summarize", **bad})
            assert refused.value.code == INVALID_PARAMS
            with pytest.raises(JsonRpcError) as unknown:
                await host.call("schedule.add", {"agentId": "nobody", "message": "m", "everySeconds": 600})
            assert unknown.value.code == NOT_FOUND
            assert (await host.call("schedule.list", {}))["schedules"] == []

    asyncio.run(main())


def test_deleting_an_agent_removes_its_schedules_and_keeps_the_others(tmp_path: Path) -> None:
    async def main() -> None:
        async with host_on(tmp_path) as host:
            await add_agent(host, "ann")
            await add_agent(host, "bob")
            await every(host, "ann", 600)
            kept = await every(host, "bob", 600)
            await host.call("agent.delete", {"agentId": "ann"})
            assert [s["scheduleId"] for s in (await host.call("schedule.list", {}))["schedules"]] == [kept]
            fired = await advance(host, 600)
            assert [f["scheduleId"] for f in fired] == [kept]
            await outcome(host, fired[0]["firingId"])

    asyncio.run(main())


def test_after_a_crash_a_firing_with_its_outcome_never_runs_again_and_one_never_delivered_runs_once(
    tmp_path: Path,
) -> None:
    """The two windows a SIGKILL can leave: an outcome written but its inbox item still there, and a run decided
    (its `fire` line written) whose item never reached the inbox."""
    clock = ManualClock(T0)
    ids: dict[str, str] = {}

    async def first_life() -> None:
        async with MemoryHost(tmp_path, schedule_clock=clock) as host:
            await add_agent(host, "ann")
            await add_agent(host, "bob")
            ids["ann"] = await every(host, "ann", 600)
            ids["bob"] = await every(host, "bob", 600)

    def crash_image() -> None:
        due = T0 + 600
        ann = Firing(firing_id(ids["ann"], due), ids["ann"], "ann", None, due, due, run_id="run-0000000000a1")
        bob = Firing(firing_id(ids["bob"], due), ids["bob"], "bob", None, due, due, run_id="run-0000000000b1")
        FiringLog(tmp_path).append([("fire", ann), ("end", replace(ann, outcome="ran")), ("fire", bob)])
        item = InboxItem("run-0000000000a1", "schedule", "summarize", firing_id=ann.firing_id)
        (tmp_path / "agents" / "ann" / INBOX_FILE).write_text(json.dumps({"items": [asdict(item)]}), encoding="utf-8")

    async def second_life() -> None:
        clock.set(T0 + 610)
        async with MemoryHost(tmp_path, schedule_clock=clock) as host:
            [bob] = (await host.call("schedule.firings", {"scheduleId": ids["bob"]}))["firings"]
            done = bob if bob["outcome"] is not None else await outcome(host, bob["firingId"])
            assert done["outcome"] == "ran"
            assert (await host.call("agent.get", {"agentId": "ann"}))["queue"] == []
            ann = await host.call("agent.transcript", {"agentId": "ann"})
            assert [e for e in ann["events"] if e["type"] == "user"] == []  # its firing had ended: not run again

    asyncio.run(first_life())
    crash_image()
    asyncio.run(second_life())
    ends = [line["id"] for line in log_lines(tmp_path) if line["op"] == "end"]
    assert sorted(ends) == sorted({*ends}) and len(ends) == 2  # one outcome each
