"""NDJSON framing: whole lines in, whole lines out, and an oversized line skipped without losing step."""

from __future__ import annotations

import asyncio
import json

from protocol.codec import encode_frame
from protocol.framing import READ_LIMIT, FrameTooLargeError, read_frame


def _reader(data: bytes, limit: int = READ_LIMIT) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


def test_encoded_frames_are_one_line_even_with_newlines_inside_strings() -> None:
    frame = encode_frame({"text": "two\nlines\r\nand\u2028more", "emoji": "🔥"})
    assert frame.count(b"\n") == 1 and frame.endswith(b"\n")
    assert json.loads(frame)["text"] == "two\nlines\r\nand\u2028more"


def test_frames_are_read_in_order_and_eof_gives_none() -> None:
    async def main() -> None:
        reader = _reader(b'{"a":1}\n{"b":2}\r\n{"c":3}')
        assert await read_frame(reader) == b'{"a":1}'
        assert await read_frame(reader) == b'{"b":2}'
        assert await read_frame(reader) == b'{"c":3}'
        assert await read_frame(reader) is None

    asyncio.run(main())


def test_a_ten_mebibyte_line_is_read_whole() -> None:
    async def main() -> None:
        big = b'{"pad":"' + b"x" * (10 * 1024 * 1024) + b'"}'
        reader = _reader(big + b"\n")
        assert await read_frame(reader) == big

    asyncio.run(main())


def test_an_oversized_line_is_skipped_and_the_next_frame_still_reads() -> None:
    async def main() -> None:
        reader = _reader(b"y" * 5000 + b"\n" + b'{"after":true}\n', limit=1024)
        try:
            await read_frame(reader)
        except FrameTooLargeError:
            pass
        else:
            raise AssertionError("an oversized line was accepted")
        assert await read_frame(reader) == b'{"after":true}'

    asyncio.run(main())


def test_a_sixty_four_mebibyte_line_is_read_whole() -> None:
    async def main() -> None:
        big = b"[" + b"1," * (32 * 1024 * 1024 - 1) + b"1]"
        assert len(big) >= 64 * 1024 * 1024
        reader = _reader(big + b"\n")
        line = await read_frame(reader)
        assert line is not None and len(line) == len(big)

    asyncio.run(main())
