"""NDJSON framing: whole lines in, whole lines out, long lines read in pieces, an oversized one skipped in step."""

from __future__ import annotations

import asyncio
import json
import tracemalloc

import pytest

from protocol.codec import encode_frame
from protocol.framing import CHUNK_BYTES, HEAD_BYTES, READ_LIMIT, FrameTooLargeError, read_frame


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
        for limit in (64, 1 << 20):  # read in pieces, or held whole by the stream: refused the same way
            reader = _reader(b'{"id":7,"pad":"' + b"y" * 5000 + b'"}\n' + b'{"after":true}\n', limit=limit)
            with pytest.raises(FrameTooLargeError) as refused:
                await read_frame(reader, max_bytes=1024)
            assert refused.value.head.startswith(b'{"id":7,"pad":"yyy') and len(refused.value.head) <= HEAD_BYTES
            assert await read_frame(reader) == b'{"after":true}'

    asyncio.run(main())


def test_a_line_far_longer_than_the_streams_buffer_is_read_whole_in_pieces() -> None:
    """Issue 22.8: the host's streams buffer 256 KiB; a line is not limited by that, only by the frame cap."""

    async def main() -> None:
        big = b'{"pad":"' + b"x" * 300_000 + b'"}'
        reader = _reader(big + b"\r\n" + big[:10] + b"\n" + big, limit=1024)
        assert await read_frame(reader) == big
        assert await read_frame(reader) == big[:10]
        assert await read_frame(reader) == big  # the last line, ended by the end of the stream
        assert await read_frame(reader) is None
        exact = _reader(b"z" * 4096 + b"\n" + b"z" * 4097 + b"\n", limit=100)
        assert await read_frame(exact, max_bytes=4096) == b"z" * 4096
        with pytest.raises(FrameTooLargeError):
            await read_frame(exact, max_bytes=4096)

    asyncio.run(main())


def test_a_refused_line_is_not_kept_while_the_rest_of_it_is_read() -> None:
    """Past the cap, the pieces read so far are let go: reading 10 MiB over a 1 MiB cap holds about one piece."""

    async def main() -> None:
        reader = asyncio.StreamReader(limit=64 * 1024)
        reading = asyncio.create_task(read_frame(reader, max_bytes=1024 * 1024))
        tracemalloc.start()
        try:
            for _ in range(160):
                reader.feed_data(b"q" * 65536)
                await asyncio.sleep(0)
            reader.feed_data(b"\n")
            with pytest.raises(FrameTooLargeError):
                await reading
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 4 * 1024 * 1024, peak

    asyncio.run(main())


def test_a_sixty_four_mebibyte_line_is_read_whole_and_one_byte_more_is_refused() -> None:
    async def main() -> None:
        big = b"[" + b"1," * (32 * 1024 * 1024 - 2) + b"11]"
        assert len(big) == 64 * 1024 * 1024
        reader = _reader(big + b"\n" + big + b"1\n", limit=CHUNK_BYTES)
        line = await read_frame(reader)
        assert line is not None and len(line) == len(big)
        with pytest.raises(FrameTooLargeError):
            await read_frame(reader)

    asyncio.run(main())
