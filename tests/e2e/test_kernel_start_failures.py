"""The host stays up when its kernel cannot start: a real host server with real kernel child processes that
cannot be spawned or refuse `initialize` (issue 10 item 8). The host runs in this process, its shell in memory."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from host.supervisor import process_launcher
from tests.support.memory_host import MemoryHost

# A "kernel" that answers `initialize` with an error, then waits for its input to end.
REFUSING_KERNEL = r"""
import json, sys
line = sys.stdin.readline()
request = json.loads(line)
error = {"code": -32602, "message": "this kernel speaks protocol 0.0 only"}
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
sys.stdout.flush()
sys.stdin.read()
"""


async def _serve_with(tmp_path: Path, command: list[str], check: Callable[[MemoryHost], Awaitable[None]]) -> None:
    async with MemoryHost(tmp_path, launcher=process_launcher(command)) as host:
        await check(host)
    # Leaving shut the host down and awaited its `serve`, which would re-raise what escaped it.
    assert host.stopped


async def _downs(host: MemoryHost, count: int) -> list[dict[str, Any]]:
    await host.wait_for("kernel.down", lambda _: len(_named(host, "kernel.down")) >= count)
    return _named(host, "kernel.down")


def _named(host: MemoryHost, method: str) -> list[dict[str, Any]]:
    return [params for name, params in host.events if name == method]


def test_a_kernel_that_cannot_be_spawned_is_reported_and_retried_and_the_host_serves_on(tmp_path: Path) -> None:
    async def check(host: MemoryHost) -> None:
        downs = await _downs(host, 2)
        assert all(d["restarting"] for d in downs)
        assert all("could not be started" in d["reason"] for d in downs)
        assert await host.call("ping") == {}
        status = await host.call("host.status")
        assert status["kernel"]["state"] in ("down", "starting") and status["kernel"]["restarts"] >= 1
        await host.call("agent.create", {"name": "ann"})
        assert [a["agentId"] for a in (await host.call("agent.list"))["agents"]] == ["ann"]
        assert await host.call("agent.delete", {"agentId": "ann"}) == {"deleted": True}

    asyncio.run(_serve_with(tmp_path, [str(tmp_path / "no-such-kernel")], check))


def test_a_kernel_that_refuses_to_initialize_is_reported_with_its_reason_and_stopped(tmp_path: Path) -> None:
    async def check(host: MemoryHost) -> None:
        downs = await _downs(host, 2)
        assert "this kernel speaks protocol 0.0 only" in downs[0]["reason"]
        assert not _named(host, "kernel.up")
        assert await host.call("ping") == {}
        assert (await host.call("host.status"))["kernel"]["state"] != "up"

    asyncio.run(_serve_with(tmp_path, [sys.executable, "-c", REFUSING_KERNEL], check))
