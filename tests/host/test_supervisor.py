"""Kernel supervision, driven in memory: a kernel that dies mid-turn is reported, replaced, and its run ended."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protocol.errors import KERNEL_UNAVAILABLE
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

SLOW = {"match": r"^slow$", "reply": "x" * 400, "chunkChars": 4, "delayMs": 5}
ECHO = {"match": r"^say (.*)$", "reply": r"\1"}


def test_a_kernel_that_dies_mid_turn_ends_the_run_restarts_and_serves_the_next_turn(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.wait_for("kernel.up")
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW, ECHO)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == sent["runId"])
            host.kernels[0].kill()
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "error" and "kernel stopped unexpectedly" in ended["error"]
            error = await host.wait_for("agent.error", lambda p: p["runId"] == sent["runId"])
            assert error["code"] == KERNEL_UNAVAILABLE
            down = await host.wait_for("kernel.down")
            assert down["restarting"] is True
            up = await host.wait_for("kernel.up", lambda p: p["restarts"] == 1)
            assert up["restarts"] == 1 and len(host.kernels) == 2
            status = await host.call("host.status")
            assert status["kernel"]["state"] == "up" and status["kernel"]["restarts"] == 1
            assert (await host.send_and_wait("ann", "say back"))["reason"] == "idle"

    asyncio.run(main())


def test_shutdown_asks_the_kernel_to_stop_and_the_host_stops_after_it(tmp_path: Path) -> None:
    async def main() -> None:
        host = MemoryHost(tmp_path)
        async with host:
            await host.wait_for("kernel.up")
            kernel = host.kernels[0]
        assert host.stopped
        async with asyncio.timeout(5):
            assert await kernel.wait() == 0, "the kernel ended on its own shutdown, not by being killed"
        assert not [m for m, _ in host.events if m == "kernel.down"]

    asyncio.run(main())


def test_the_tools_the_kernel_offers_are_known_to_the_host_once_it_is_up(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.wait_for("kernel.up")
            status = await host.call("host.status")
            tools = set(status["kernel"]["tools"])
            assert {"grep", "glob", "read_file", "list_dir", "write_file", "edit_file"} <= tools
            assert ("shell" in tools) is status["kernel"]["shell"]["available"]

    asyncio.run(main())
