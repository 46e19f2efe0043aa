"""A whole host in this process: `HostServer` with its kernel served in memory, and a test shell on it.

The kernel is the real `KernelServer`, reached through `HostConfig.kernel_launcher` over an in-memory
stream pair instead of a child process; the shell talks to the host over another pair. Everything else
is real (files, SQLite, rg, the sandbox). `MemoryKernel.kill()` ends a kernel the way a crash does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from host.app import HostServer
from host.config import HostConfig
from host.schedules import ScheduleClock
from host.supervisor import KernelChild
from host.together.clock import Clock
from kernel.server import KernelServer
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from tests.support.shell import TestShell

__all__ = ["MemoryHost", "MemoryKernel"]


class MemoryKernel:
    """A `KernelChild` whose kernel runs as a task of this event loop."""

    def __init__(self) -> None:
        self.transport, kernel_side = memory_transport_pair()
        self._kernel_input = kernel_side.reader
        self.server = KernelServer()
        self._task = asyncio.create_task(self.server.serve(kernel_side))
        # The host sees the end of its input when the kernel ends, as it would see a closed pipe.
        self._task.add_done_callback(lambda _: self.transport.reader.feed_eof())

    @property
    def pid(self) -> int | None:
        return None

    async def wait(self) -> int:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._task)
        return -9 if self._task.cancelled() else 0

    def close_input(self) -> None:
        self._kernel_input.feed_eof()

    def terminate(self) -> None:
        self._task.cancel()

    def kill(self) -> None:
        self._task.cancel()


KernelFactory = Callable[[], Awaitable[KernelChild]]


class MemoryHost(TestShell):
    """`async with MemoryHost(tmp_path) as host:` serves a host in memory; leaving shuts it down.

    Args:
        data_dir: the host's data directory.
        initialize: send `initialize` on entry.
        launcher: how kernels start (default: a `MemoryKernel` each time, kept in `kernels`).
        clock: the time source of request deadlines (default: the system's).
        schedule_clock: the schedules' clock (a `ManualClock` also adds `debug.advanceClock`).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        initialize: bool = True,
        launcher: KernelFactory | None = None,
        clock: Clock | None = None,
        schedule_clock: ScheduleClock | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.kernels: list[MemoryKernel] = []
        self._initialize = initialize
        config = HostConfig(
            data_dir=data_dir, kernel_launcher=launcher or self._launch, listen=False, schedule_clock=schedule_clock
        )
        self.server = HostServer(config if clock is None else replace(config, clock=clock))
        self._tasks: list[asyncio.Task[None]] = []

    async def _launch(self) -> KernelChild:
        kernel = MemoryKernel()
        self.kernels.append(kernel)
        return kernel

    async def __aenter__(self) -> MemoryHost:
        shell_side, host_side = memory_transport_pair()
        self.peer = JsonRpcPeer(shell_side, self.router, name="host", default_timeout=30)
        self._tasks = [asyncio.create_task(self.server.serve(host_side)), asyncio.create_task(self.peer.serve())]
        if self._initialize:
            await self.call("initialize", {"client": {"name": "tests"}, "protocolVersion": PROTOCOL_VERSION})
        return self

    async def __aexit__(self, *exc: object) -> None:
        serving = self._tasks[0]
        if not serving.done():
            with contextlib.suppress(Exception):
                await self.call("shutdown", timeout=10)
        async with asyncio.timeout(20):
            await serving
        for task in self._tasks[1:]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def stopped(self) -> bool:
        """True once the host's `serve` has returned."""
        return self._tasks[0].done()
