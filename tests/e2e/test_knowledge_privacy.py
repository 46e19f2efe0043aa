"""An agent's knowledge is its own, and a Work's is its members' in Work runs (issue 26): another agent
reaches none of it by any tool (file tools, grep, the shell, its own knowledge tools), and neither does a
direct run reach a Work's; the owner's twin of each search finds what it should."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.fake_model import ChatServer, call, model_settings, say
from tests.support.host_process import HostProcess
from tests.support.knowledge_host import admit, tool_names, tool_results

CANARY = "thalassocrat"
PATTERN = "thalasso[c]rat"  # finds the canary without holding it (the attempts are in mallory's own transcript)


async def _agent(host: HostProcess, server: ChatServer, agent_id: str) -> None:
    settings = model_settings(server, toolPermission="always")
    await host.call("agent.create", {"name": agent_id, "agentId": agent_id, "settings": settings})


def _tool_events(data: Path, agent: str, name: str) -> list[dict[str, Any]]:
    import json

    path = data / "agents" / agent / "transcript.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [e for e in events if e["type"] == "tool" and e["name"] == name]


def test_another_agent_reaches_no_part_of_an_agents_knowledge_by_any_tool(tmp_path: Path) -> None:
    data = tmp_path / "data"
    private, other = tmp_path / "private", tmp_path / "other"
    private.mkdir()
    other.mkdir()
    (private / "plan.md").write_text(f"# Plan\n\nThe {CANARY} ledger is kept in the vault.\n", encoding="utf-8")
    (other / "notes.md").write_text("# Notes\n\nMallory's notes about tea.\n", encoding="utf-8")
    index = data / "agents" / "alice" / "knowledge" / "index.sqlite"
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": str(index)}),
        ("list_dir", {"path": str(index.parent)}),
        ("grep", {"pattern": PATTERN, "path": str(index.parent), "output_mode": "content"}),
        ("grep", {"pattern": PATTERN, "path": str(data / "agents"), "output_mode": "content"}),
        ("glob", {"pattern": "**/*.sqlite", "path": str(data / "agents" / "alice")}),
        ("shell", {"command": f"cat {index}; grep -r '{PATTERN}' {data / 'agents'}"}),
        ("knowledge_search", {"query": "the ledger kept in the vault"}),
    ]
    server = ChatServer()
    for number, (tool, args) in enumerate(attempts):
        server.script(call(tool, args, f"m{number}"), say("done"))
    server.script(call("knowledge_search", {"query": f"{CANARY} ledger"}, "own"), say("found it"))
    server.start()

    async def main() -> None:
        async with HostProcess(data) as host:
            for name in ("alice", "mallory"):
                await _agent(host, server, name)
            await admit(host, {"agentId": "alice"}, str(private))
            await admit(host, {"agentId": "mallory"}, str(other))
            for number in range(len(attempts)):
                await host.idle_turn("mallory", f"attempt {number}")
            await host.idle_turn("alice", "look it up")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    leaks = []
    for tool, _ in attempts:
        for event in _tool_events(data, "mallory", tool):
            if CANARY in event["content"] or "plan.md" in event["content"]:
                leaks.append(f"{tool}: {event['content'][:300]}")
    assert leaks == []
    assert len(_tool_events(data, "mallory", "read_file")) == 1
    assert _tool_events(data, "mallory", "read_file")[0]["content"].startswith("denied:")
    [own] = _tool_events(data, "alice", "knowledge_search")
    assert CANARY in own["content"] and f"{private / 'plan.md'}:3" in own["content"]


def test_a_works_knowledge_is_searched_in_its_members_work_runs_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shared, own = tmp_path / "shared", tmp_path / "own"
    shared.mkdir()
    own.mkdir()
    (shared / "brief.md").write_text(f"# Brief\n\nThe launch codename is {CANARY}.\n", encoding="utf-8")
    (own / "diary.md").write_text("# Diary\n\nAnn walked the dog.\n", encoding="utf-8")
    server = ChatServer()
    query = {"query": f"launch codename {CANARY}"}
    server.script(call("knowledge_search", query, "work"), say("The codename is in the brief."))
    server.script(call("knowledge_search", query, "direct"), say("Not in my documents."))
    server.script(say("I have no documents."))
    server.start()

    async def main() -> None:
        async with HostProcess(data) as host:
            for name in ("ann", "bo"):
                await _agent(host, server, name)
            work = await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            await admit(host, {"workId": work["workId"]}, str(shared))
            await admit(host, {"agentId": "ann"}, str(own))
            sent = await host.call("work.dispatch", {"workId": work["workId"], "agentId": "ann", "instruction": "go"})
            done = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert done["reason"] == "idle"
            await host.idle_turn("ann", "what is the launch codename?")
            await host.idle_turn("bo", "what is the launch codename?")
            hits = (await host.call("knowledge.search", {"agentId": "ann", **query}))["hits"]
            assert [h["path"] for h in hits] == []  # ann's own base never holds the Work's documents

    try:
        asyncio.run(main())
    finally:
        server.stop()
    work_run, direct, bo = server.chats()[1], server.chats()[3], server.chats()[4]
    assert CANARY in " ".join(tool_results(work_run)) and "brief.md:3" in " ".join(tool_results(work_run))
    assert "brief.md" not in " ".join(tool_results(direct)) and "No passage" in " ".join(tool_results(direct))
    assert not tool_names(bo) & {"knowledge_search", "knowledge_read"}
    assert CANARY not in str(bo)
