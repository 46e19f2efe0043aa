"""`hearth acp [AGENT]`: serve ACP on this process's stdio until the editor closes it.

Nothing but ACP frames reaches the editor: fd 1 is diverted to stderr while serving, and the frames go out on a
copy of the original, checked both ways by `EditorFrames` (a bad line is answered, never the end). The host
connection is made on first use (so `initialize` never waits for a host, and a host that cannot be reached is an
error the editor shows on the session call), and let go when the editor leaves.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from acp import run_agent

from desktop.acp.agent import HearthAcpAgent
from desktop.acp.events import EventHub
from desktop.acp.host_link import HostLink
from desktop.acp.wire import EditorFrames
from protocol.datadir import resolve_data_dir
from protocol.dispatch import Router
from protocol.transport import pipe_streams

__all__ = ["AcpOptions", "run_acp"]


@dataclass(frozen=True, slots=True)
class AcpOptions:
    agent: str | None = None
    data_dir: str | None = None
    verbose: bool = False


def _watchable(fd: int) -> bool:
    """Whether the event loop can watch `fd`: a pipe, a socket or a terminal (never a regular file)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def _editor_streams() -> AsyncIterator[tuple[asyncio.StreamWriter, asyncio.StreamReader]]:
    """The editor's pipes as asyncio streams; stray writes to fd 1 land on stderr meanwhile."""
    in_fd, out_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader, writer, read_transport = await pipe_streams(in_fd, out_fd)
    try:
        yield writer, reader
    finally:
        read_transport.close()
        writer.close()


async def _serve(options: AcpOptions) -> None:
    hub = EventHub()
    router = Router()
    hub.register(router)
    async with asyncio.TaskGroup() as tasks:
        link = HostLink(
            resolve_data_dir(options.data_dir), router, tasks, verbose=options.verbose, on_lost=hub.host_gone
        )
        agent = HearthAcpAgent(link, hub, pinned=options.agent, spawn=tasks.create_task)
        try:
            async with _editor_streams() as (writer, reader):
                # The `acp` package's message transport: every frame is checked by Hearth's rules first.
                await run_agent(agent, EditorFrames(reader, writer), use_unstable_protocol=True)
        finally:
            await link.close()


def run_acp(options: AcpOptions) -> int:
    """Serve one editor on stdio. Returns the exit code."""
    if not (_watchable(0) and _watchable(1)):
        print("hearth acp: stdin and stdout must be pipes; an editor starts it that way", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(options))
    except KeyboardInterrupt:
        return 130
    return 0
