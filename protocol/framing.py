"""NDJSON framing: one JSON value per line, UTF-8, no embedded newlines (the MCP and ACP stdio framing).

What a line may hold, and how a message becomes one, is `protocol.codec`. Readers accept lines up to
`MAX_FRAME_BYTES`. A longer line is skipped whole, up to its newline, and
reported as `FrameTooLargeError`, so the stream stays in step and the next frame reads normally.
"""

from __future__ import annotations

import asyncio

__all__ = ["MAX_FRAME_BYTES", "READ_LIMIT", "FrameTooLargeError", "read_frame"]

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The longest line a reader must accept (64 MiB)."""

READ_LIMIT = MAX_FRAME_BYTES + 1024
"""The asyncio StreamReader limit to use for frame streams."""


class FrameTooLargeError(Exception):
    """A line longer than the reader's limit was skipped."""


async def _discard_rest_of_line(reader: asyncio.StreamReader) -> None:
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """Read the next line, without its line ending.

    Returns:
        The line's bytes, or None at end of stream. Blank lines are returned as b"" for the caller to skip.

    Raises:
        FrameTooLargeError: the line exceeded the reader's limit; it has been skipped.
    """
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial.rstrip(b"\r") if exc.partial else None
    except asyncio.LimitOverrunError:
        await _discard_rest_of_line(reader)
        raise FrameTooLargeError(f"frame longer than {MAX_FRAME_BYTES} bytes") from None
    return line.rstrip(b"\r\n")
