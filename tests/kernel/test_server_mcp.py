"""The kernel server with MCP servers, over an in-memory wire: what it says when no OS sandbox works."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from kernel.server import KernelServer
from protocol.dispatch import Router
from protocol.models.host import PROTOCOL_VERSION
from protocol.models.kernel import TurnDeltaEvent, TurnEndedEvent, TurnMessageEvent, TurnToolEvent
from protocol.models.mcp import McpStatusEvent
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from sandbox import Unavailable

NOTES = str(Path(__file__).resolve().parents[1] / "support" / "mcp_notes.py")


def test_without_an_os_sandbox_no_server_starts_the_host_hears_why_and_the_turn_goes_on(tmp_path: Path) -> None:
    (tmp_path / "agents/ann/scratch").mkdir(parents=True)
    events: list[tuple[str, Any]] = []
    ended = asyncio.Event()

    async def main() -> None:
        router = Router()

        def record(name: str, model: type[Any]) -> None:
            async def handler(event: Any) -> None:
                events.append((name, event))
                if name == "turn.ended":
                    ended.set()

            router.add(name, model, handler)

        for name, model in (
            ("mcp.status", McpStatusEvent),
            ("turn.ended", TurnEndedEvent),
            ("turn.tool", TurnToolEvent),
            ("turn.delta", TurnDeltaEvent),
            ("turn.message", TurnMessageEvent),
        ):
            record(name, model)
        host_side, kernel_side = memory_transport_pair()
        kernel = KernelServer(detect_mcp_sandbox=lambda: Unavailable("bubblewrap (bwrap) is not installed"))
        serving = asyncio.create_task(kernel.serve(kernel_side))
        host = JsonRpcPeer(host_side, router, name="kernel", default_timeout=30)
        listening = asyncio.create_task(host.serve())
        info = await host.request("initialize", {"protocolVersion": PROTOCOL_VERSION})
        assert info["mcp"] == {"available": False, "reason": "bubblewrap (bwrap) is not installed"}
        rules = [
            {
                "match": "^add (.*)$",
                "on": "user",
                "toolCalls": [{"name": "mcp__notes__add", "arguments": {"text": "x"}}],
            },
            {"match": "(?s)(.*)", "on": "tool", "reply": r"TOOL SAID: \1"},
        ]
        await host.request(
            "turn.start",
            {
                "runId": "run-1",
                "session": "ann",
                "messages": [{"role": "user", "content": "add milk"}],
                "model": {"provider": "scripted", "rules": rules},
                "policy": {"dataDir": str(tmp_path), "agentId": "ann", "permission": "always"},
                "mcpServers": [{"name": "notes", "command": sys.executable, "args": [NOTES]}],
            },
        )
        async with asyncio.timeout(30):
            await ended.wait()
        statuses = [event for name, event in events if name == "mcp.status"]
        assert [(s.server, s.state) for s in statuses] == [("notes", "failed")]
        assert "bwrap" in (statuses[0].error or "")
        (result,) = [e for n, e in events if n == "turn.tool" and e.status == "completed"]
        assert result.is_error and "no tool named 'mcp__notes__add'" in (result.content or "")
        (end,) = [e for n, e in events if n == "turn.ended"]
        assert end.reason == "idle"
        await host.request("shutdown", {})
        await asyncio.wait_for(serving, 30)
        listening.cancel()

    asyncio.run(main())
