"""End to end: a Work run sees only its Work (never a member's private memory), and its board keeps revisions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import CONFLICT, JsonRpcError
from tests.support.host_process import HostProcess, scripted_model

SECRET = "Bumblefoot"
HIDDEN = "Bumble[f]oot"  # finds the secret without containing it, so the search's own record never matches


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def probe_rules(data: Path) -> dict[str, Any]:
    memory_md = f"{data}/agents/ann/memory/MEMORY.md"
    calls = [
        {"name": "memory_recall", "arguments": {"query": "childhood nickname"}},
        {"name": "grep", "arguments": {"pattern": HIDDEN, "path": str(data)}},
        {"name": "read_file", "arguments": {"path": memory_md}},
        {"name": "shell", "arguments": {"command": f"cat {memory_md}; grep -rs '{HIDDEN}' {data}; echo probed"}},
    ]
    settings = scripted_model(
        {"match": r"(?m)^probe$", "on": "user", "toolCalls": calls},
        {
            "match": r"(?m)^hand off$",
            "on": "user",
            "toolCalls": [
                {"name": "post_to_work", "arguments": {"text": "starting t-1"}},
                {
                    "name": "handoff_task",
                    "arguments": {"taskId": "t-1", "summary": "all done", "status": "done", "expectedRevision": 0},
                },
            ],
        },
        {"match": ".", "on": "tool", "reply": "done"},
    )
    settings["toolPermission"] = "always"
    return settings


def test_a_work_run_cannot_surface_a_members_private_memory_and_a_direct_run_still_can(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": probe_rules(tmp_path)})
            await host.call("memory.note", {"agentId": "ann", "text": f"The user's childhood nickname is {SECRET}."})
            work = await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            sent = await host.call(
                "work.dispatch", {"workId": work["workId"], "agentId": "ann", "instruction": "probe"}
            )
            done = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert done["reason"] == "idle"
            status = await host.call("host.status")
            assert status["kernel"]["shell"]["available"], "the shell part of this test needs bubblewrap"
            await host.wait_for("work.event", lambda p: p["entry"]["kind"] == "post" and p["entry"]["actor"] == "ann")
            direct = await host.send_and_wait("ann", "probe")
            assert direct["reason"] == "idle"

    asyncio.run(main())
    member = tmp_path / "works" / "launch" / "members" / "ann"
    work_results = [e for e in lines(member / "transcript.jsonl") if e["type"] == "tool"]
    assert {e["name"] for e in work_results} == {"memory_recall", "grep", "read_file", "shell"}
    for result in work_results:
        assert SECRET not in result["content"], result
    assert "probed" in next(e["content"] for e in work_results if e["name"] == "shell")
    assert SECRET not in (member / "prompt-cache.json").read_text(encoding="utf-8")
    assert all(SECRET not in (e.get("recall") or "") for e in lines(member / "transcript.jsonl"))
    own = lines(tmp_path / "agents" / "ann" / "transcript.jsonl")
    recall = next(e for e in own if e["type"] == "tool" and e["name"] == "memory_recall")
    assert SECRET in recall["content"]
    grep = next(e for e in own if e["type"] == "tool" and e["name"] == "grep")
    assert "agents/ann/memory/MEMORY.md" in grep["content"]
    work_grep = next(e for e in work_results if e["name"] == "grep")
    assert "agents/ann" not in work_grep["content"]


def test_a_stale_board_revision_is_refused_and_the_board_is_unchanged(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": probe_rules(tmp_path)})
            work = await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            ref = {"workId": work["workId"]}
            made = await host.call("work.taskCreate", {**ref, "title": "Write it", "expectedRevision": 0})
            assert made["revision"] == 1 and made["task"]["taskId"] == "t-1"
            with pytest.raises(JsonRpcError) as stale:
                await host.call("work.taskCreate", {**ref, "title": "Write it twice", "expectedRevision": 0})
            assert stale.value.code == CONFLICT and stale.value.data == {"revision": 1}
            with pytest.raises(JsonRpcError) as stale_move:
                await host.call(
                    "work.taskTransition", {**ref, "taskId": "t-1", "status": "done", "expectedRevision": 0}
                )
            assert stale_move.value.code == CONFLICT
            sent = await host.call("work.dispatch", {**ref, "agentId": "ann", "instruction": "hand off"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            refused = [
                p
                for m, p in host.events
                if m == "agent.tool" and p.get("name") == "handoff_task" and p["status"] == "completed"
            ]
            assert refused and refused[0]["isError"] and "revision 1" in refused[0]["content"]
            board = await host.call("work.get", ref)
            assert board["revision"] == 1
            assert [(t["title"], t["status"], t["handoffs"]) for t in board["tasks"]] == [("Write it", "todo", [])]
            moved = await host.call(
                "work.taskTransition", {**ref, "taskId": "t-1", "status": "doing", "expectedRevision": 1}
            )
            assert moved["revision"] == 2 and moved["task"]["status"] == "doing"
            timeline = await host.call("work.timeline", ref)
            kinds = [(e["kind"], e["actor"]) for e in timeline["entries"]]
            assert ("post", "ann") in kinds and ("dispatch", "person") in kinds
            assert [e["seq"] for e in timeline["entries"]] == list(range(1, len(kinds) + 1))

    asyncio.run(main())
