"""The stdio plumbing under one MCP session: the server's stderr kept as a bounded tail, and a transport that
says when the server's stdout has ended (the server exited), so a death is reported at once, not at the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from types import TracebackType
from typing import TextIO

import anyio
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

__all__ = ["StderrTail", "watched_stdio"]

_TAIL_BYTES = 8192
_END = (StopAsyncIteration, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class StderrTail:
    """Reads a pipe to its end, keeping only the last few KiB (a chatty server cannot fill memory or disk)."""

    def __init__(self, limit: int = _TAIL_BYTES) -> None:
        self._limit = limit
        self._data = bytearray()
        self.ended = asyncio.Event()

    async def pump(self, read_fd: int) -> None:
        """Read `read_fd` (which this takes over and closes) until every writer has closed it."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        try:
            while chunk := await reader.read(4096):
                self._data += chunk
                if len(self._data) > 2 * self._limit:
                    del self._data[: len(self._data) - self._limit]
        finally:
            transport.close()
            self.ended.set()

    async def settle(self, timeout: float) -> None:
        """Wait a little for the last bytes (a grandchild holding the pipe open must not hold us up)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.ended.wait()

    def text(self, lines: int = 20) -> str:
        """The last `lines` lines, at most the byte limit, decoded leniently."""
        tail = self._data[-self._limit :].decode("utf-8", "replace")
        return "\n".join(tail.rstrip().splitlines()[-lines:])


class _WatchedRead:
    """A read stream that sets `ended` when the server's messages stop (its stdout closed)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ended: asyncio.Event) -> None:
        self._inner = inner
        self._ended = ended

    @property
    def last_context(self) -> object:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except _END:
            self._ended.set()
            raise

    async def aclose(self) -> None:
        self._ended.set()
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self._inner.__anext__()
        except _END:
            self._ended.set()
            raise

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._ended.set()
        return await self._inner.__aexit__(exc_type, exc, tb)


@contextlib.asynccontextmanager
async def watched_stdio(
    params: StdioServerParameters, errlog: TextIO, ended: asyncio.Event
) -> AsyncIterator[TransportStreams]:
    """`mcp`'s stdio client transport, with `ended` set once the server stops sending."""
    async with stdio_client(params, errlog=errlog) as (read, write):
        yield _WatchedRead(read, ended), write
