"""Running the host process: take the data directory's lock, serve one shell on stdio, clean up."""

from __future__ import annotations

import asyncio
import logging

from host.config import HostConfig
from host.lock import HostLock
from host.server import HostServer
from protocol.transport import stdio_transport

__all__ = ["run_host"]

logger = logging.getLogger(__name__)


async def _serve(config: HostConfig) -> None:
    server = HostServer(config)
    async with stdio_transport() as transport:
        await server.serve(transport)


def run_host(config: HostConfig) -> int:
    """Serve a shell on this process's stdio until it shuts us down or goes away.

    Returns:
        The process exit code.

    Raises:
        HostLockedError: another live host uses the same data directory.
    """
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = HostLock(config.data_dir)
    lock.acquire()
    try:
        asyncio.run(_serve(config))
    finally:
        lock.release()
    logger.info("host stopped")
    return 0
