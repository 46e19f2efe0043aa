"""The stdio plumbing under one MCP session: the server's stderr kept as a bounded tail, and a transport that
says when the server's stdout has ended (the server exited), so a death is reported at once, not at the next call.

A line on the server's stdout that is not a JSON-RPC message ends the session there and then: stdout carries
MCP messages only, and the answer such a line stood for will never come, so nothing waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import TextIO

import anyio
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["StderrTail", "bad_line", "watched_stdio"]

_TAIL_BYTES = 8192
_SHOWN_CHARS = 200
_PARSE_FAILURE = "Failed to parse JSONRPC message from server"


class _QuietParseFailures(logging.Filter):
    """The transport logs a bad line with its text, a secret included; the connection reports it, withheld."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _PARSE_FAILURE


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseFailures())
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


def bad_line(exc: Exception) -> str:
    """What the server wrote, as far as the transport's parse error keeps it, cut to a few hundred characters."""
    text = str(exc)
    if isinstance(exc, ValidationError) and exc.errors():
        # The error nearest the top of the message holds the whole line (or the whole object) as its input.
        found = min(exc.errors(include_url=False), key=lambda error: len(error["loc"]))["input"]
        text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, default=str)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


class _WatchedRead:
    """A read stream that sets `ended` when the server's messages stop (its stdout closed, or a bad line)."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], ended: asyncio.Event, garbled: Callable[[str], None]
    ) -> None:
        self._inner = inner
        self._ended = ended
        self._garbled = garbled

    @property
    def last_context(self) -> object:
        return getattr(self._inner, "last_context", None)

    def _checked(self, item: SessionMessage | Exception) -> SessionMessage:
        if isinstance(item, Exception):
            self._garbled(bad_line(item))
            self._ended.set()
            raise anyio.EndOfStream
        return item

    async def receive(self) -> SessionMessage | Exception:
        try:
            return self._checked(await self._inner.receive())
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
            return self._checked(await self._inner.__anext__())
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
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
    params: StdioServerParameters, errlog: TextIO, ended: asyncio.Event, garbled: Callable[[str], None]
) -> AsyncIterator[TransportStreams]:
    """`mcp`'s stdio client transport, with `ended` set once the server stops sending; a line that is not
    JSON-RPC is given to `garbled` and ends the stream."""
    async with stdio_client(params, errlog=errlog) as (read, write):
        yield _WatchedRead(read, ended, garbled), write
