"""A real kernel served in memory, behind a gate: the host's `kernel_launcher` seam for in-process tests.

`gated_launcher(gate)` starts a `KernelServer` over an in-memory transport pair once `gate` is set, so a
test can hold the host in its "kernel starting" state for as long as it needs.
"""

from __future__ import annotations

import asyncio

from host.supervisor import KernelChild, KernelLauncher
from kernel.server import KernelServer
from protocol.transport import Transport, memory_transport_pair

__all__ = ["MemoryKernel", "gated_launcher"]


class MemoryKernel:
    """A `KernelChild` whose kernel runs as a task of this process."""

    def __init__(self) -> None:
        host_side, kernel_side = memory_transport_pair()
        self._host_side = host_side
        self._kernel_side = kernel_side
        self._task = asyncio.create_task(KernelServer().serve(kernel_side))

    @property
    def transport(self) -> Transport:
        return self._host_side

    @property
    def pid(self) -> int | None:
        return None

    async def wait(self) -> int:
        try:
            await self._task
        except asyncio.CancelledError:
            return -15
        await self._kernel_side.close()
        return 0

    def close_input(self) -> None:
        self._kernel_side.reader.feed_eof()

    def terminate(self) -> None:
        self._task.cancel()

    def kill(self) -> None:
        self._task.cancel()


def gated_launcher(gate: asyncio.Event) -> KernelLauncher:
    async def launch() -> KernelChild:
        await gate.wait()
        return MemoryKernel()

    return launch
