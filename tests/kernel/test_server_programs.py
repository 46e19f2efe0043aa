"""The kernel resolves rg once, at start, and never runs one an agent can write (issue 9).

A real `KernelServer` is driven over in-memory streams as the host drives it: `initialize`, then a
`turn.start` whose scripted model asks for a grep under `toolPermission: always`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from kernel.server import KernelServer
from kernel.tools import find_rg
from protocol.dispatch import Router
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair

RULES = [
    {"match": "^grep$", "on": "user", "toolCalls": [{"name": "grep", "arguments": {"pattern": "needle"}}]},
    {"match": "(?s)^(.*)$", "on": "tool", "reply": r"TOOL: \1"},
]


class _Host(Router):
    """The host's side: records the kernel's notifications."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.ended = asyncio.Event()

    async def dispatch(self, message: Any = None, *, raw: str | None = None) -> Any:
        if isinstance(message, dict) and "id" not in message and "method" in message:
            self.events.append((message["method"], message.get("params") or {}))
            if message["method"] == "turn.ended":
                self.ended.set()
            return None
        return await super().dispatch(message, raw=raw)


async def _grep_once(server: KernelServer, data: Path, before_turn: Any = None) -> str:
    host_side, kernel_side = memory_transport_pair()
    host = _Host()
    peer = JsonRpcPeer(host_side, host, name="kernel")
    async with asyncio.timeout(30), asyncio.TaskGroup() as tasks:
        tasks.create_task(server.serve(kernel_side))
        serving = tasks.create_task(peer.serve())
        await peer.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "shellSandbox": "off"})
        if before_turn is not None:
            before_turn()
        await peer.request(
            "turn.start",
            {
                "runId": "run-1",
                "session": "ada",
                "messages": [{"role": "user", "content": "grep"}],
                "model": {"provider": "scripted", "rules": RULES},
                "tools": {"local": ["grep"]},
                "policy": {"dataDir": str(data), "agentId": "ada", "permission": "always"},
            },
        )
        await host.ended.wait()
        await peer.request("shutdown", {})
        serving.cancel()
    (result,) = [p for m, p in host.events if m == "turn.tool" and p["status"] == "completed"]
    return str(result["content"])


def _world(tmp_path: Path) -> tuple[Path, Path, Path]:
    data = tmp_path / "data"
    scratch = data / "agents" / "ada" / "scratch"
    scratch.mkdir(parents=True)
    (scratch / "a.txt").write_text("a needle\n", encoding="utf-8")
    marker = tmp_path / "ran"
    fake = data / "agents" / "bob" / "scratch" / "rg"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    fake.chmod(0o755)
    return data, fake, marker


def test_an_rg_inside_the_data_dir_is_refused_and_never_runs(tmp_path: Path) -> None:
    data, fake, marker = _world(tmp_path)
    content = asyncio.run(_grep_once(KernelServer(rg=str(fake)), data))
    assert "grep is refused" in content and not marker.exists()
    assert asyncio.run(_grep_once(KernelServer(), data)) == "a.txt"


def test_rg_is_resolved_once_so_a_link_changed_later_is_not_followed(tmp_path: Path) -> None:
    data, fake, marker = _world(tmp_path)
    real = find_rg()
    assert real is not None
    link = tmp_path / "bin" / "rg"
    link.parent.mkdir()
    os.symlink(real, link)

    def retarget() -> None:
        link.unlink()
        os.symlink(fake, link)

    content = asyncio.run(_grep_once(KernelServer(rg=str(link)), data, before_turn=retarget))
    assert content == "a.txt" and not marker.exists()
