"""Byte transports for a JSON-RPC peer: this process's stdio, a child process's pipes, or memory.

A transport is a pair of `asyncio.StreamReader` (incoming frames) and a `write(bytes)` coroutine, with
`close` (what is written still goes out) and `abort` (at once: for a peer that is being dropped).
`stdio_transport` diverts fd 1 to stderr while serving, so only frames ever reach the real stdout. The
streams a host reads buffer `CHUNK_BYTES` (a long line is read in pieces), so a peer the host has stopped
reading finds its writes blocked after about twice that, instead of the host holding all it sends.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from protocol.framing import CHUNK_BYTES, READ_LIMIT

__all__ = [
    "Transport",
    "stdio_transport",
    "memory_transport_pair",
    "pipe_streams",
    "process_transport",
    "stream_transport",
]


@dataclass(slots=True)
class Transport:
    reader: asyncio.StreamReader
    write: Callable[[bytes], Awaitable[None]]
    close: Callable[[], Awaitable[None]]
    abort: Callable[[], Awaitable[None]]


class _QueueWriter:
    """Feeds bytes to the other side's StreamReader: the in-memory pipe used by tests."""

    def __init__(self, target: asyncio.StreamReader) -> None:
        self._target = target

    async def write(self, data: bytes) -> None:
        self._target.feed_data(data)

    async def close(self) -> None:
        self._target.feed_eof()


def memory_transport_pair() -> tuple[Transport, Transport]:
    """Two transports wired to each other in memory."""
    a_in = asyncio.StreamReader(limit=READ_LIMIT)
    b_in = asyncio.StreamReader(limit=READ_LIMIT)
    to_b, to_a = _QueueWriter(b_in), _QueueWriter(a_in)
    return Transport(a_in, to_b.write, to_b.close, to_b.close), Transport(b_in, to_a.write, to_a.close, to_a.close)


def stream_transport(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Transport:
    """Frames over an asyncio stream pair (a socket connection); writes are serialised by a lock."""
    lock = asyncio.Lock()

    async def write(data: bytes) -> None:
        async with lock:
            writer.write(data)
            await writer.drain()

    async def close() -> None:
        if not writer.is_closing():
            writer.close()

    async def abort() -> None:
        writer.transport.abort()

    return Transport(reader, write, close, abort)


def _read_in_thread(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed `reader` from a file descriptor the event loop cannot watch (a regular file, /dev/null)."""
    while chunk := os.read(fd, 65536):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _threaded_stdio(in_fd: int, out_fd: int) -> Transport:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK_BYTES)
    threading.Thread(target=_read_in_thread, args=(in_fd, reader, loop), daemon=True, name="stdin").start()
    lock = asyncio.Lock()

    async def write(data: bytes) -> None:
        async with lock:
            await asyncio.to_thread(_write_all, out_fd, data)

    async def close() -> None:
        return None

    return Transport(reader, write, close, close)


async def pipe_streams(
    in_fd: int, out_fd: int, *, limit: int = READ_LIMIT
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.BaseTransport]:
    """Asyncio streams on two pipe (or socket) descriptors, which they take over.

    Args:
        limit: the reader's buffer limit (the default lets `readline()` return any accepted frame whole).

    Returns:
        (reader, writer, the read side's transport): close the transport and the writer when done.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", buffering=0)
    )
    out = os.fdopen(out_fd, "wb", buffering=0)
    write_transport, write_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    return reader, asyncio.StreamWriter(write_transport, write_protocol, None, loop), read_transport


async def _piped_stdio(in_fd: int, out_fd: int) -> tuple[Transport, asyncio.BaseTransport]:
    reader, writer, read_transport = await pipe_streams(in_fd, out_fd, limit=CHUNK_BYTES)
    return stream_transport(reader, writer), read_transport


def _is_pipe_or_socket(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[Transport]:
    """Serve frames on this process's stdin/stdout; stray writes to fd 1 land on stderr instead.

    Pipes and sockets (what a shell gives) are watched by the event loop; anything else (a file, a
    terminal, /dev/null) is read and written by threads, so the host runs however it is started.
    """
    in_fd, out_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    read_transport: asyncio.BaseTransport | None = None
    if _is_pipe_or_socket(in_fd) and _is_pipe_or_socket(out_fd):
        transport, read_transport = await _piped_stdio(in_fd, out_fd)
    else:
        transport = await _threaded_stdio(in_fd, out_fd)
    try:
        yield transport
    finally:
        if read_transport is not None:
            read_transport.close()
        await transport.close()


def process_transport(process: asyncio.subprocess.Process) -> Transport:
    """Frames over a child process's stdin (to it) and stdout (from it)."""
    assert process.stdin is not None and process.stdout is not None
    return stream_transport(process.stdout, process.stdin)
