"""MCP servers through the real host and kernel: tools, approvals, the sandbox, secrets and failures (issue 15).

The servers are written with the `mcp` package (`tests/support/mcp_*.py`) and run by the kernel inside real
bubblewrap; the model is the scripted one, or a local HTTP server speaking the OpenAI API where what the model
was sent must be inspected.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

SUPPORT = Path(__file__).resolve().parents[1] / "support"
TOOL_REPLY = {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"TOOL SAID: \1"}


def server(name: str, script: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [str(SUPPORT / script), *args], **extra}


def settings(servers: list[dict[str, Any]], *rules: dict[str, Any], permission: str = "always") -> dict[str, Any]:
    return {**scripted_model(*rules), "toolPermission": permission, "mcpServers": servers}


def state(name: str, state: str, tools: int | None = None, error: str | None = None) -> dict[str, Any]:
    """One server's entry in `agent.get`, without its stderr tail and likely cause."""
    return {"name": name, "state": state, "toolCount": tools, "error": error}


def states(info: dict[str, Any]) -> list[dict[str, Any]]:
    """`agent.get`'s server entries, without their stderr tails and likely causes."""
    return [{key: value for key, value in entry.items() if key not in ("stderrTail", "cause")} for entry in info["mcp"]]


def call(pattern: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"match": pattern, "on": "user", "toolCalls": [{"name": tool, "arguments": arguments}]}


async def turn(host: HostProcess, agent: str, text: str) -> tuple[dict[str, Any], str]:
    ended = await host.send_and_wait(agent, text, timeout=60)
    return ended, host.texts(agent, ended["runId"])


def test_notes_add_then_list_reach_the_model_and_the_transcript(tmp_path: Path) -> None:
    rules = [
        call(r"^note (.+)$", "mcp__notes__add", {"text": r"\1"}),
        {"match": r"^added note", "on": "tool", "toolCalls": [{"name": "mcp__notes__list", "arguments": {}}]},
        TOOL_REPLY,
    ]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create", {"name": "ann", "settings": settings([server("notes", "mcp_notes.py")], *rules)}
            )
            assert states(await host.call("agent.get", {"agentId": "ann"})) == [state("notes", "stopped")]
            ended, text = await turn(host, "ann", "note buy milk")
            assert ended["reason"] == "idle" and text == "TOOL SAID: 1. buy milk"
            page = await host.call("agent.transcript", {"agentId": "ann"})
            results = [(e["name"], e["content"]) for e in page["events"] if e["type"] == "tool"]
            assert results == [("mcp__notes__add", "added note 1: buy milk"), ("mcp__notes__list", "1. buy milk")]
            ready = await host.wait_for("mcp.status", lambda p: p["state"] == "ready")
            expected = {"agentId": "ann", "server": "notes", "state": "ready", "toolCount": 4}
            assert ready == {**expected, "error": None, "stderrTail": None, "cause": None}
            info = await host.call("agent.get", {"agentId": "ann"})
            assert states(info) == [state("notes", "ready", 4)]
            _, text = await turn(host, "ann", "note call Ines")
            assert text == "TOOL SAID: 1. buy milk\n2. call Ines", "one session keeps its notes between turns"
            starts = [p for m, p in host.events if m == "mcp.status" and p["state"] == "starting"]
            assert len(starts) == 1

    asyncio.run(main())


def test_each_mcp_call_is_approved_as_mcp_server_tool_and_always_and_never_are_remembered(tmp_path: Path) -> None:
    rules = [
        call(r"^note (.+)$", "mcp__notes__add", {"text": r"\1"}),
        {"match": r"^added note", "on": "tool", "toolCalls": [{"name": "mcp__notes__list", "arguments": {}}]},
        TOOL_REPLY,
    ]

    def pending(host: HostProcess) -> list[dict[str, Any]]:
        return [p for m, p in host.events if m == "agent.tool" and p["status"] == "pending"]

    async def decide(host: HostProcess, target: str, decision: str) -> None:
        asked = await host.wait_for("agent.tool", lambda p: p["status"] == "pending" and p["target"] == target)
        assert asked["action"] == "mcp"
        await host.call("agent.decideTool", {"agentId": "ann", "toolCallId": asked["toolCallId"], "decision": decision})

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            mcp = [server("notes", "mcp_notes.py")]
            await host.call("agent.create", {"name": "ann", "settings": settings(mcp, *rules, permission="ask")})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "note one"})
            await decide(host, "notes/add", "allow_always")
            await decide(host, "notes/list", "deny_always")
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"], timeout=60)
            assert host.texts("ann", sent["runId"]).startswith("TOOL SAID: denied")
            asked = len(pending(host))
            _, text = await turn(host, "ann", "note two")
            assert len(pending(host)) == asked == 2 and text.startswith("TOOL SAID: denied"), "neither is asked again"
            events = (await host.call("agent.transcript", {"agentId": "ann"}))["events"]
            assert [e["content"] for e in events if e["type"] == "tool"][-2] == "added note 2: two"
            remembered = json.loads((tmp_path / "agents/ann/tool-approvals.json").read_text(encoding="utf-8"))
            assert '"notes/add"' in json.dumps(remembered) and '"notes/list"' in json.dumps(remembered)

    asyncio.run(main())


def _bytes_outside(data: Path, agent: str) -> dict[str, bytes]:
    """Every file of the data dir except the given agent's own, by relative path."""
    return {
        str(path.relative_to(data)): path.read_bytes()
        for path in sorted(data.rglob("*"))
        if path.is_file() and not path.is_relative_to(data / "agents" / agent)
    }


def test_a_hostile_server_reaches_no_memory_no_host_file_no_other_agent_and_no_network(tmp_path: Path) -> None:
    rules = [
        call(r"^read (.+)$", "mcp__hostile__read_path", {"path": r"\1"}),
        call(r"^write (\S+)$", "mcp__hostile__write_path", {"path": r"\1", "text": "planted"}),
        call(r"^connect (\d+)$", "mcp__hostile__connect", {"port": r"\1"}),
        TOOL_REPLY,
    ]
    outside = tmp_path.parent / f"outside-{uuid.uuid4().hex}.txt"
    connections: list[bytes] = []
    connected = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(await reader.readline())
        connected.set()
        writer.close()

    async def main() -> None:
        listener = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        async with listener, HostProcess(tmp_path) as host:
            await host.call("secrets.set", {"name": "openai", "value": "sk-host-secret-canary"})
            await host.call("agent.create", {"name": "bob", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            await host.call("memory.note", {"agentId": "bob", "text": "Bob's private fact: the safe code is 2468."})
            mcp = [server("hostile", "mcp_hostile.py")]
            await host.call("agent.create", {"name": "ann", "settings": settings(mcp, *rules)})
            await host.call(
                "memory.note", {"agentId": "ann", "text": "Ann's own fact: the spare key is under the mat."}
            )
            before = _bytes_outside(tmp_path, "ann")
            assert "agents/bob/memory/ledger.jsonl" in before and "secrets.bin" in before
            for path in (
                "agents/bob/memory/ledger.jsonl",
                "agents/ann/memory/ledger.jsonl",
                "secrets.bin",
                "secrets.key",
                "settings.json",
            ):
                _, text = await turn(host, "ann", f"read {tmp_path / path}")
                assert text.startswith("TOOL SAID: READ FAILED"), (path, text)
            for target in (tmp_path / "agents/bob/scratch/planted.txt", tmp_path / "planted.txt", outside):
                await turn(host, "ann", f"write {target}")
                assert not target.exists()
            await turn(host, "ann", f"write {tmp_path / 'agents/ann/memory/planted.txt'}")
            assert not (tmp_path / "agents/ann/memory/planted.txt").exists()
            _, text = await turn(host, "ann", "write mine.txt")
            assert text.startswith("TOOL SAID: WRITE FAILED"), "its working directory is not the workspace"
            _, text = await turn(host, "ann", f"write {tmp_path / 'agents/ann/scratch/mine.txt'}")
            assert text == "TOOL SAID: WRITE OK" and (tmp_path / "agents/ann/scratch/mine.txt").exists()
            _, text = await turn(host, "ann", f"connect {port}")
            assert text.startswith("TOOL SAID: CONNECT FAILED") and connections == []
            assert _bytes_outside(tmp_path, "ann") == before

            with_network = [server("hostile", "mcp_hostile.py", network=True)]
            await host.call("agent.update", {"agentId": "ann", "settings": {"mcpServers": with_network}})
            _, text = await turn(host, "ann", f"connect {port}")
            async with asyncio.timeout(10):
                await connected.wait()
            assert text == "TOOL SAID: CONNECT OK" and connections == [b"hello from the hostile server\n"]

    asyncio.run(main())


def test_a_server_that_exits_at_start_is_reported_failed_with_its_stderr_and_the_turn_still_works(
    tmp_path: Path,
) -> None:
    broken = server("broken", "mcp_hostile.py", "--exit-at-start", secretEnv={"TOKEN": "broken-token"})

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("secrets.set", {"name": "broken-token", "value": "tok-never-shown-91c2"})
            rules = [{"match": "^hello$", "on": "user", "reply": "hello there"}]
            await host.call("agent.create", {"name": "ann", "settings": settings([broken], *rules)})
            ended, text = await turn(host, "ann", "hello")
            assert ended["reason"] == "idle" and text == "hello there"
            failed = await host.wait_for("mcp.status", lambda p: p["state"] == "failed")
            assert failed["server"] == "broken" and failed["error"] == "the server exited before it answered"
            assert "giving up at start" in failed["stderrTail"] and "[secret TOKEN withheld]" in failed["stderrTail"]
            info = await host.call("agent.get", {"agentId": "ann"})
            assert states(info) == [state("broken", "failed", error=failed["error"])]
            assert info["mcp"][0]["stderrTail"] == failed["stderrTail"], "agent.get keeps what went wrong"
            assert "tok-never-shown-91c2" not in json.dumps(host.events)

    asyncio.run(main())


def test_deleting_an_agent_stops_its_servers_and_no_other_agents(tmp_path: Path) -> None:
    rules = [call(r"^note (.+)$", "mcp__notes__add", {"text": r"\1"}), TOOL_REPLY]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call(
                    "agent.create", {"name": name, "settings": settings([server("notes", "mcp_notes.py")], *rules)}
                )
                await turn(host, name, "note first")
            await host.call("agent.delete", {"agentId": "ann"})
            await host.wait_for("mcp.status", lambda p: p["agentId"] == "ann" and p["state"] == "stopped")
            _, text = await turn(host, "bob", "note second")
            assert text == "TOOL SAID: added note 2: second", "bob's session lived on"
            assert not [
                p
                for m, p in host.events
                if m == "mcp.status" and p["agentId"] == "bob" and p["state"] != "ready" and p["state"] != "starting"
            ]

    asyncio.run(main())


def test_changing_an_agents_servers_stops_the_running_ones(tmp_path: Path) -> None:
    rules = [call(r"^note (.+)$", "mcp__notes__add", {"text": r"\1"}), TOOL_REPLY]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create", {"name": "ann", "settings": settings([server("notes", "mcp_notes.py")], *rules)}
            )
            await turn(host, "ann", "note first")
            mark = len(host.events)
            await host.call("agent.update", {"agentId": "ann", "settings": {"mcpServers": []}})
            await host.wait_for("mcp.status", lambda p: p["state"] == "stopped", after=mark)
            _, text = await turn(host, "ann", "note second")
            assert "no tool named 'mcp__notes__add'" in text

    asyncio.run(main())


def test_a_server_dying_mid_call_or_a_cancelled_call_ends_only_that_call(tmp_path: Path) -> None:
    rules = [
        call(r"^note (.+)$", "mcp__notes__add", {"text": r"\1"}),
        call(r"^crash$", "mcp__notes__crash", {}),
        call(r"^wait$", "mcp__notes__wait", {"seconds": 600}),
        TOOL_REPLY,
    ]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            notes = [server("notes", "mcp_notes.py")]
            await host.call("agent.create", {"name": "ann", "settings": settings(notes, *rules)})
            ended, text = await turn(host, "ann", "crash")
            assert ended["reason"] == "idle" and "MCP server 'notes' stopped during the call" in text
            failed = await host.wait_for("mcp.status", lambda p: p["state"] == "failed")
            assert "crashing on purpose" in failed["stderrTail"]
            _, text = await turn(host, "ann", "note after the crash")
            assert text == "TOOL SAID: added note 1: after the crash", "the next turn starts the server again"
            sent = await host.call("agent.send", {"agentId": "ann", "text": "wait"})
            await host.wait_for("agent.tool", lambda p: p["name"] == "mcp__notes__wait" and p["status"] == "started")
            await host.call("agent.cancel", {"agentId": "ann"})
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "cancelled"
            _, text = await turn(host, "ann", "note after the cancel")
            assert text == "TOOL SAID: added note 2: after the cancel", "a cancelled call leaves the session usable"

    asyncio.run(main())


def test_a_server_answering_with_a_line_that_is_not_json_rpc_ends_the_call_at_once_and_names_it(
    tmp_path: Path,
) -> None:
    """Issue 22.10: the call does not wait out the 300 s call timeout, and the error shows what the server wrote."""
    rules = [call(r"^garble$", "mcp__plain__garble", {}), call(r"^note (.+)$", "mcp__plain__add", {"text": r"\1"})]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create",
                {"name": "ann", "settings": settings([server("plain", "mcp_plain.py")], *rules, TOOL_REPLY)},
            )
            ended, text = await turn(host, "ann", "garble")
            assert ended["reason"] == "idle" and "not a JSON-RPC message" in text, text
            assert "this line is not JSON-RPC, and no answer follows" in text
            failed = await host.wait_for("mcp.status", lambda p: p["state"] == "failed")
            assert "this line is not JSON-RPC" in failed["error"]
            _, text = await turn(host, "ann", "note after the garble")
            assert text == "TOOL SAID: added note 1: after the garble", "the next turn starts the server again"

    asyncio.run(main())
