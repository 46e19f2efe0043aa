"""The handshake (issue 10, item 6): a protocol version the host does not speak is refused, no event
reaches a connection before it has initialized, and the kernel reads `starting` until its tools are known.

The host runs in this process with a real kernel served in memory behind a gate, so the test decides
when the kernel comes up.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from host.app import HostServer
from host.config import HostConfig
from protocol.dispatch import Router
from protocol.errors import INVALID_PARAMS, NOT_INITIALIZED, JsonRpcError
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from tests.support.memory_kernel import gated_launcher

INIT = {"client": {"name": "tests"}, "protocolVersion": PROTOCOL_VERSION}


class _Events(Router):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.arrived = asyncio.Condition()

    async def dispatch(self, message: dict[str, Any] | list[dict[str, Any]]) -> Any:
        if isinstance(message, dict) and "id" not in message and "method" in message:
            async with self.arrived:
                self.seen.append(message["method"])
                self.arrived.notify_all()
            return None
        return await super().dispatch(message)

    async def wait_for(self, method: str) -> None:
        async with asyncio.timeout(10), self.arrived:
            await self.arrived.wait_for(lambda: method in self.seen)


@asynccontextmanager
async def _host(tmp_path: Path, gate: asyncio.Event) -> AsyncIterator[tuple[HostServer, JsonRpcPeer, _Events]]:
    server = HostServer(HostConfig(data_dir=tmp_path, kernel_launcher=gated_launcher(gate), listen=False))
    shell_side, host_side = memory_transport_pair()
    events = _Events()
    peer = JsonRpcPeer(shell_side, events, name="shell", default_timeout=10)
    async with asyncio.TaskGroup() as tasks:
        serving = tasks.create_task(server.serve(host_side))
        reading = tasks.create_task(peer.serve())
        yield server, peer, events
        gate.set()
        await peer.request("shutdown", {})
        async with asyncio.timeout(20):
            await serving
        reading.cancel()


def test_an_unknown_protocol_version_is_refused_naming_the_one_spoken(tmp_path: Path) -> None:
    async def main() -> None:
        async with _host(tmp_path, asyncio.Event()) as (_, peer, _events):
            with pytest.raises(JsonRpcError) as refused:
                await peer.request("initialize", {**INIT, "protocolVersion": "1999-01-01"})
            assert refused.value.code == INVALID_PARAMS
            assert refused.value.data == {"supported": [PROTOCOL_VERSION], "requested": "1999-01-01"}
            assert PROTOCOL_VERSION in refused.value.message
            # Refused means not initialized; the right version then works.
            with pytest.raises(JsonRpcError) as early:
                await peer.request("agent.list", {})
            assert early.value.code == NOT_INITIALIZED
            await peer.request("initialize", INIT)
            assert (await peer.request("agent.list", {}))["agents"] == []

    asyncio.run(main())


def test_the_kernel_is_starting_right_after_initialize_and_kernel_up_follows_with_its_tools(tmp_path: Path) -> None:
    async def main() -> None:
        gate = asyncio.Event()
        async with _host(tmp_path, gate) as (_, peer, events):
            await peer.request("initialize", INIT)
            status = await peer.request("host.status", {})
            assert status["kernel"]["state"] == "starting" and status["kernel"]["tools"] == []
            gate.set()
            await events.wait_for("kernel.up")
            status = await peer.request("host.status", {})
            assert status["kernel"]["state"] == "up" and "grep" in status["kernel"]["tools"]

    asyncio.run(main())


def test_no_event_reaches_a_connection_before_it_initializes(tmp_path: Path) -> None:
    async def main() -> None:
        gate = asyncio.Event()
        async with _host(tmp_path, gate) as (server, peer, events):
            gate.set()
            assert await server.kernel.wait_up(10)
            await peer.request("ping", {})  # a round trip after the kernel came up: kernel.up had its chance
            assert events.seen == []
            await peer.request("initialize", INIT)
            await peer.request("agent.create", {"name": "ann"})
            await events.wait_for("agent.updated")
            assert "kernel.up" not in events.seen

    asyncio.run(main())
