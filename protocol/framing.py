"""NDJSON framing: one JSON value per line, UTF-8, no embedded newlines (the MCP and ACP stdio framing).

What a line may hold, and how a message becomes one, is `protocol.codec`. Readers accept lines of up to
`MAX_FRAME_BYTES` and take a long one in pieces of the stream's own buffer size (`CHUNK_BYTES` on the
streams a host reads), so a long line never stops the loop and never needs a buffer beyond the cap. A
longer line is skipped whole, up to its newline, keeping only its first `HEAD_BYTES` (where its id may be
read), and reported as `FrameTooLargeError`, so the stream stays in step and the next frame reads normally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["CHUNK_BYTES", "HEAD_BYTES", "MAX_FRAME_BYTES", "READ_LIMIT", "FrameTooLargeError", "read_frame"]

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The longest line a reader accepts (64 MiB, not counting its newline); a longer one is refused."""

READ_LIMIT = MAX_FRAME_BYTES + 1024
"""A StreamReader limit under which `readline()` returns any accepted frame whole (for readers that use it)."""

CHUNK_BYTES = 256 * 1024
"""The StreamReader limit of the streams a host reads only through `read_frame`: a long line is taken in
pieces of about this size, and a stream buffers about twice this before it stops reading from its peer."""

HEAD_BYTES = 4096
"""How much of a refused line is kept, to find its id."""


class FrameTooLargeError(Exception):
    """A line longer than the cap was skipped; `head` is its first bytes."""

    def __init__(self, limit: int, head: bytes) -> None:
        super().__init__(f"Invalid request (a frame is at most {limit} bytes)")
        self.head = head


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int = MAX_FRAME_BYTES) -> bytes | None:
    """Read the next line, without its line ending.

    Args:
        reader: the stream; its limit is the size of the pieces a long line is read in.
        max_bytes: the longest line accepted.

    Returns:
        The line's bytes, or None at end of stream. Blank lines are returned as b"" for the caller to skip.

    Raises:
        FrameTooLargeError: the line was longer than `max_bytes`; it has been skipped.
    """
    import asyncio  # loaded by now (this runs in its loop); at import it would cost a one-shot client

    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        line = exc.partial
    except asyncio.LimitOverrunError as exc:
        return await _read_long_line(reader, await reader.readexactly(exc.consumed), max_bytes)
    if len(line) > max_bytes + 1:
        raise FrameTooLargeError(max_bytes, line[:HEAD_BYTES])
    return line.rstrip(b"\r\n")


async def _read_long_line(reader: asyncio.StreamReader, first: bytes, max_bytes: int) -> bytes:
    """The rest of a line longer than the stream's buffer, piece by piece; past `max_bytes`, pieces are dropped."""
    import asyncio  # loaded by now (this runs in its loop); at import it would cost a one-shot client

    pieces = [first]
    size = len(first)
    head = first[:HEAD_BYTES]
    refused = size > max_bytes + 1
    if refused:
        pieces.clear()
    ended = False
    while not ended:
        try:
            piece = await reader.readuntil(b"\n")
            ended = True
        except asyncio.LimitOverrunError as exc:
            piece = await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError as exc:  # the stream ended inside the line: that is its end
            piece = exc.partial
            ended = True
        size += len(piece)
        if len(head) < HEAD_BYTES:
            head += piece[: HEAD_BYTES - len(head)]
        if refused:
            continue
        refused = size > max_bytes + 1
        if refused:
            pieces.clear()  # what was kept of it goes at once; the rest is read and dropped
        else:
            pieces.append(piece)
    if refused:
        raise FrameTooLargeError(max_bytes, head)
    while pieces:  # the line ending comes off its pieces, so the long line is copied once, by the join
        pieces[-1] = pieces[-1].rstrip(b"\r\n")
        if pieces[-1]:
            break
        pieces.pop()
    return b"".join(pieces)
