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


def test_an_agent_on_the_local_model_is_warmed_after_each_kernel_start_and_a_failure_is_told(tmp_path: Path) -> None:
    """Scripted agents need no warming; a local one is warmed on creation and again after a restart."""

    def settled(p: dict[str, object]) -> bool:
        return p["state"] != "loading"

    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.wait_for("kernel.up")
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            await host.call("agent.create", {"name": "pip", "settings": {"model": {"provider": "local"}}})
            first = await host.wait_for("model.status", settled, timeout=120)
            host.kernels[0].kill()
            await host.wait_for("kernel.up", lambda p: p["restarts"] == 1)
            up = next(i for i, (m, p) in enumerate(host.events) if m == "kernel.up" and p["restarts"] == 1)
            again = await host.wait_for("model.status", settled, timeout=120, after=up)
            assert again["state"] == first["state"]
            assert {p["provider"] for m, p in host.events if m == "model.status"} == {"local"}
            if first["state"] == "failed":
                assert "llama-cpp-python" in str(first["error"])

    asyncio.run(main())
