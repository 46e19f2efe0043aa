"""`work.*` through a whole host in memory: members, events, errors that change nothing, delete to the trash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protocol.errors import INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

ECHO = scripted_model({"match": r"^Instruction[^\n]*\n([^\n]*)", "on": "user", "reply": r"did: \1"})


def test_members_join_and_leave_with_timeline_entries_and_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": ECHO})
            work = await host.call("work.create", {"name": "Launch", "description": "Ship it.", "members": ["ann"]})
            assert work == {**work, "workId": "launch", "members": ["ann"], "revision": 0, "tasks": []}
            await host.call("work.attach", {"workId": "launch", "agentId": "bob"})
            left = await host.call("work.detach", {"workId": "launch", "agentId": "ann"})
            assert left["members"] == ["bob"]
            updated = await host.wait_for("work.updated", lambda p: p["work"] and p["work"]["members"] == ["bob"])
            assert updated["workId"] == "launch"
            timeline = await host.call("work.timeline", {"workId": "launch"})
            assert [e["kind"] for e in timeline["entries"]] == ["created", "member", "member"]
            later = await host.call("work.timeline", {"workId": "launch", "afterSeq": 2})
            assert [e["seq"] for e in later["entries"]] == [3]
            assert (await host.call("work.list"))["works"][0]["workId"] == "launch"

    asyncio.run(main())


def test_a_dispatch_runs_in_the_work_and_posts_the_members_answer(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ECHO})
            await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            sent = await host.call("work.dispatch", {"workId": "launch", "agentId": "ann", "instruction": "outline"})
            assert sent["position"] == 0
            done = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert done["reason"] == "idle"
            post = await host.wait_for("work.event", lambda p: p["entry"]["actor"] == "ann")
            assert post["entry"]["text"] == "did: outline"

    asyncio.run(main())
    assert not (tmp_path / "agents" / "ann" / "transcript.jsonl").read_text(encoding="utf-8")
    member = (tmp_path / "works" / "launch" / "members" / "ann" / "transcript.jsonl").read_text(encoding="utf-8")
    assert "did: outline" in member


def test_bad_work_requests_are_named_errors_and_change_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ECHO})
            await host.call("agent.create", {"name": "out", "settings": ECHO})
            await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            with pytest.raises(JsonRpcError) as missing:
                await host.call("work.get", {"workId": "nope"})
            assert missing.value.code == NOT_FOUND
            with pytest.raises(JsonRpcError) as stranger:
                await host.call("work.attach", {"workId": "launch", "agentId": "ghost"})
            assert stranger.value.code == NOT_FOUND
            with pytest.raises(JsonRpcError) as outsider:
                await host.call("work.dispatch", {"workId": "launch", "agentId": "out", "instruction": "x"})
            assert outsider.value.code == INVALID_PARAMS
            with pytest.raises(JsonRpcError) as bad_id:
                await host.call("work.create", {"name": "X", "workId": "Bad Id"})
            assert bad_id.value.code == INVALID_PARAMS
            work = await host.call("work.get", {"workId": "launch"})
            assert work["members"] == ["ann"]
            assert (await host.call("agent.get", {"agentId": "out"}))["queue"] == []

    asyncio.run(main())


def test_a_deleted_work_goes_to_the_trash_and_a_deleted_agent_leaves_its_works(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": ECHO})
            await host.call("work.create", {"name": "Keep", "members": ["ann", "bob"]})
            await host.call("work.create", {"name": "Drop", "members": ["ann"]})
            await host.call("agent.delete", {"agentId": "bob"})
            assert (await host.call("work.get", {"workId": "keep"}))["members"] == ["ann"]
            assert await host.call("work.delete", {"workId": "drop"}) == {"deleted": True}
            gone = await host.wait_for("work.updated", lambda p: p["workId"] == "drop" and p["work"] is None)
            assert gone["work"] is None
            assert [w["workId"] for w in (await host.call("work.list"))["works"]] == ["keep"]

    asyncio.run(main())
    assert [p.name.startswith("work-drop-") for p in (tmp_path / "trash").iterdir()].count(True) == 1


def _member(rules: list[dict[str, object]]) -> dict[str, object]:
    settings = scripted_model(*rules, {"match": ".", "on": "tool", "reply": "done"})
    settings["toolPermission"] = "always"
    return settings


def _results(path: Path, name: str) -> list[str]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [e["content"] for e in lines if e["type"] == "tool" and e["name"] == name]


def test_work_files_and_work_memory_are_shared_in_the_work_and_absent_from_direct_runs(tmp_path: Path) -> None:
    def tool(name: str, **arguments: object) -> dict[str, object]:
        return {"name": name, "arguments": arguments}

    ann = _member(
        [
            {
                "match": r"write",
                "on": "user",
                "toolCalls": [
                    tool("write_file", path="plan.md", content="ship on friday"),
                    tool("memory_note", text="The launch is on Friday."),
                ],
            },
            {"match": r"^recall$", "on": "user", "toolCalls": [tool("memory_recall", query="launch Friday")]},
        ]
    )
    bob = _member(
        [
            {
                "match": r"read",
                "on": "user",
                "toolCalls": [tool("read_file", path="plan.md"), tool("memory_recall", query="launch Friday")],
            }
        ]
    )

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.call("work.create", {"name": "Launch", "members": ["ann", "bob"]})
            for agent_id, instruction in (("ann", "write"), ("bob", "read")):
                sent = await host.call(
                    "work.dispatch", {"workId": "launch", "agentId": agent_id, "instruction": instruction}
                )
                await host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r)
            await host.send_and_wait("ann", "recall")

    asyncio.run(main())
    work = tmp_path / "works" / "launch"
    assert (work / "scratch" / "plan.md").read_text(encoding="utf-8") == "ship on friday"
    read, recalled = (
        _results(work / "members" / "bob" / "transcript.jsonl", "read_file")[0],
        _results(work / "members" / "bob" / "transcript.jsonl", "memory_recall")[0],
    )
    assert "ship on friday" in read and "The launch is on Friday." in recalled
    assert "The launch is on Friday." in (work / "memory" / "ledger.jsonl").read_text(encoding="utf-8")
    direct = _results(tmp_path / "agents" / "ann" / "transcript.jsonl", "memory_recall")[0]
    assert direct.startswith("Nothing matched")
    private = tmp_path / "agents" / "ann" / "memory" / "ledger.jsonl"
    assert not private.exists() or "Friday" not in private.read_text(encoding="utf-8")
