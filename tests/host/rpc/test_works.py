"""`work.*` through a whole host in memory: members, events, errors that change nothing, delete to the trash."""

from __future__ import annotations

import asyncio
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
