"""`hearth schedule AGENT add|list|pause|resume|approve|remove|history`, `hearth budget` and `hearth inspect`'s
next wake and spending, run as commands against a real host on a test clock."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.schedules import SUMMARY, T0, advance, outcome

PROPOSES = {
    "match": r"(?m)^plan$",
    "on": "user",
    "toolCalls": [{"name": "propose_schedule", "arguments": {"cron": "0 9 * * 1", "message": "weekly review"}}],
}


def hearth(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_a_person_schedules_pauses_approves_and_removes_from_the_terminal(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, env={"HEARTH_TEST_CLOCK": str(T0)}) as host:
            rules = scripted_model(PROPOSES, SUMMARY, {"match": ".", "on": "tool", "reply": "proposed"})
            await host.call("agent.create", {"name": "Ann", "settings": rules})
            added = await asyncio.to_thread(hearth, tmp_path, "schedule", "Ann", "add", "--every", "10m", "summarize")
            assert added.returncode == 0, added.stderr
            sid = re.search(r"s-[0-9a-f]{12}", added.stdout)
            assert sid is not None and "every 10m" in added.stdout
            for bad in (("--cron", "61 * * * *", "x"), ("x",), ("--every", "soon", "x")):
                refused = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "add", *bad)
                assert refused.returncode == 1 and refused.stderr.startswith("hearth: "), bad
            [fired] = await advance(host, 600)
            assert (await outcome(host, fired["firingId"]))["outcome"] == "ran"
            history = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "history", sid.group())
            assert "ran" in history.stdout and fired["runId"] in history.stdout
            listed = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "list")
            assert sid.group() in listed.stdout and "every 10m" in listed.stdout and "active" in listed.stdout
            paused = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "pause", sid.group())
            assert paused.returncode == 0 and "paused" in paused.stdout
            capped = await asyncio.to_thread(hearth, tmp_path, "budget", "ann", "--requests", "5")
            assert "cap: 5 requests" in capped.stdout and re.search(r"\d+ model requests", capped.stdout)
            await host.idle_turn("ann", "plan")
            listed = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "list")
            assert "proposed (by ann)" in listed.stdout and "approve ID" in listed.stdout
            inspected = await asyncio.to_thread(hearth, tmp_path, "inspect", "ann")
            assert "spent today" in inspected.stdout and "next wake" in inspected.stdout
            assert "none scheduled (2 schedules, 1 proposed)" in inspected.stdout  # paused and proposed: no wake
            proposed = next(s for s in (await host.call("schedule.list", {}))["schedules"] if s["state"] == "proposed")
            approved = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "approve", proposed["scheduleId"])
            assert approved.returncode == 0 and "active" in approved.stdout
            removed = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "remove", sid.group())
            assert removed.returncode == 0
            left = (await host.call("schedule.list", {"agentId": "ann"}))["schedules"]
            assert [s["scheduleId"] for s in left] == [proposed["scheduleId"]]
            missing = await asyncio.to_thread(hearth, tmp_path, "schedule", "ann", "pause", sid.group())
            assert missing.returncode == 1 and "no schedule" in missing.stderr

    asyncio.run(main())
