"""The agent methods through the host's RPC layer, in memory: create, list, get, update, delete, transcript."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protocol.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND, JsonRpcError
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

ECHO = {"match": r"^say (.*)$", "reply": r"\1"}


def test_an_agent_is_created_listed_changed_and_each_change_is_announced(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            created = await host.call("agent.create", {"name": "Research Bot"})
            assert created["agentId"] == "research-bot" and created["status"] == "idle"
            assert created["settings"]["toolPermission"] == "ask"
            await host.wait_for("agent.updated", lambda p: p["agentId"] == "research-bot")
            patch = {"agentId": "research-bot", "name": "Researcher", "settings": {"memory": False}}
            updated = await host.call("agent.update", patch)
            assert updated["name"] == "Researcher" and updated["settings"]["memory"] is False
            got = await host.call("agent.get", {"agentId": "research-bot"})
            assert got == updated
            listed = await host.call("agent.list")
            assert [a["agentId"] for a in listed["agents"]] == ["research-bot"]

    asyncio.run(main())


def test_a_taken_id_is_a_conflict_and_a_bad_id_is_invalid_params(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "agentId": "ann"})
            with pytest.raises(JsonRpcError) as taken:
                await host.call("agent.create", {"name": "other", "agentId": "ann"})
            assert taken.value.code == CONFLICT
            with pytest.raises(JsonRpcError) as bad:
                await host.call("agent.create", {"name": "x", "agentId": "../escape"})
            assert bad.value.code == INVALID_PARAMS
            assert (await host.call("agent.get", {"agentId": "ann"}))["name"] == "ann"

    asyncio.run(main())
    assert sorted(p.name for p in (tmp_path / "agents").iterdir()) == ["ann"]


def test_a_name_belongs_to_one_agent_whatever_its_case(tmp_path: Path) -> None:
    """Issue 25.9: two agents could share a name, and then the name reached neither."""

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "Researcher"})
            await host.call("agent.create", {"name": "Writer"})
            for call in (
                ("agent.create", {"name": " researcher "}),
                ("agent.create", {"name": "RESEARCHER", "agentId": "other"}),
                ("agent.update", {"agentId": "writer", "name": "researcher"}),
            ):
                with pytest.raises(JsonRpcError) as taken:
                    await host.call(*call)
                assert taken.value.code == CONFLICT
                assert taken.value.data == {"agentId": "researcher"}
            # An agent may change the case of its own name.
            renamed = await host.call("agent.update", {"agentId": "researcher", "name": "RESEARCHER"})
            assert renamed["name"] == "RESEARCHER"
            listed = await host.call("agent.list")
            assert [(a["agentId"], a["name"]) for a in listed["agents"]] == [
                ("researcher", "RESEARCHER"),
                ("writer", "Writer"),
            ]

    asyncio.run(main())


def test_deleting_an_agent_moves_it_to_the_trash_and_leaves_the_other(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(ECHO)})
            await host.send_and_wait("ann", "say hi")
            assert await host.call("agent.delete", {"agentId": "ann"}) == {"deleted": True}
            await host.wait_for("agent.updated", lambda p: p["agentId"] == "ann" and p["agent"] is None)
            for method in ("agent.get", "agent.transcript", "agent.delete"):
                with pytest.raises(JsonRpcError) as gone:
                    await host.call(method, {"agentId": "ann"})
                assert gone.value.code == NOT_FOUND
            assert (await host.send_and_wait("bob", "say still here"))["reason"] == "idle"

    asyncio.run(main())
    trashed = list((tmp_path / "trash").iterdir())
    assert len(trashed) == 1 and (trashed[0] / "transcript.jsonl").read_text(encoding="utf-8").count("say hi") == 1
    assert (tmp_path / "agents" / "bob" / "transcript.jsonl").is_file()


def test_the_transcript_pages_backwards_from_the_newest_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            for i in range(3):
                await host.send_and_wait("ann", f"say {i}")
            newest = await host.call("agent.transcript", {"agentId": "ann", "limit": 4})
            assert newest["hasMore"] is True and [e["seq"] for e in newest["events"]] == [12, 13, 14, 15]
            older = await host.call("agent.transcript", {"agentId": "ann", "beforeSeq": 12, "limit": 100})
            assert older["hasMore"] is False and [e["seq"] for e in older["events"]] == list(range(1, 12))

    asyncio.run(main())
