"""A connection's outbox: frames in order, senders wait and posters do not, a bound on what waits unread."""

from __future__ import annotations

import asyncio

import pytest

from protocol.outbox import Outbox


class Gate:
    """A connection whose writes wait until the test lets them through, one at a time or all at once."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.open = asyncio.Event()
        self.fail: Exception | None = None

    async def write(self, frame: bytes) -> None:
        await self.open.wait()
        if self.fail is not None:
            raise self.fail
        self.written.append(frame)


def test_frames_go_out_in_the_order_given_and_only_a_send_waits_for_its_write() -> None:
    async def main() -> None:
        gate = Gate()
        outbox = Outbox(gate.write, limit=1000)
        writer = asyncio.create_task(outbox.run())
        assert outbox.post(b"event-1")
        answer = asyncio.create_task(outbox.send(b"answer"))
        await asyncio.sleep(0)  # the answer is queued
        assert outbox.post(b"event-2")
        assert not answer.done() and gate.written == []
        gate.open.set()
        async with asyncio.timeout(5):
            await answer
        assert gate.written[:2] == [b"event-1", b"answer"]
        assert outbox.post(b"event-3")
        async with asyncio.timeout(5):
            await outbox.send(b"flush")
        assert gate.written == [b"event-1", b"answer", b"event-2", b"event-3", b"flush"]
        outbox.close()
        await writer

    asyncio.run(main())


def test_past_the_limit_events_are_refused_until_half_of_them_are_written_and_then_it_says_so() -> None:
    async def main() -> None:
        caught_up: list[int] = []
        gate = Gate()
        outbox = Outbox(gate.write, limit=100, on_caught_up=lambda: caught_up.append(outbox.posted_bytes))
        writer = asyncio.create_task(outbox.run())
        assert outbox.post(b"x" * 500)  # a first frame is taken whatever its size
        assert not outbox.post(b"y")
        outbox.close()
        await writer

        gate = Gate()
        outbox = Outbox(gate.write, limit=100, on_caught_up=lambda: caught_up.append(outbox.posted_bytes))
        writer = asyncio.create_task(outbox.run())
        assert all(outbox.post(b"e" * 10) for _ in range(10))
        assert not outbox.post(b"e")
        big_answer = asyncio.create_task(outbox.send(b"a" * 10_000))  # answers are not held to the limit
        assert caught_up == []
        gate.open.set()
        async with asyncio.timeout(5):
            await big_answer
        assert caught_up == [50]  # said once, when half the posted bytes were written
        assert gate.written == [b"e" * 10] * 10 + [b"a" * 10_000]
        assert outbox.post(b"e")
        outbox.close()
        await writer

    asyncio.run(main())


def test_a_failed_write_closes_the_outbox_and_every_waiting_sender_hears_it() -> None:
    async def main() -> None:
        gate = Gate()
        outbox = Outbox(gate.write, limit=1000)
        writer = asyncio.create_task(outbox.run())
        waiting = [asyncio.create_task(outbox.send(b"answer %d" % n)) for n in range(3)]
        await asyncio.sleep(0)
        gate.fail = BrokenPipeError()
        gate.open.set()
        async with asyncio.timeout(5):
            await writer
            for sender in waiting:
                with pytest.raises(ConnectionResetError):
                    await sender
        assert outbox.closed
        with pytest.raises(ConnectionResetError):
            await outbox.send(b"later")
        assert outbox.post(b"an event nobody will read")  # taken and dropped: not a client too far behind

    asyncio.run(main())


def test_closing_while_a_frame_is_being_written_settles_every_sender() -> None:
    async def main() -> None:
        gate = Gate()
        outbox = Outbox(gate.write, limit=1000)
        writer = asyncio.create_task(outbox.run())
        first = asyncio.create_task(outbox.send(b"first"))
        second = asyncio.create_task(outbox.send(b"second"))
        await asyncio.sleep(0)
        outbox.close()
        gate.open.set()
        async with asyncio.timeout(5):
            await writer
        for sender in (first, second):
            with pytest.raises(ConnectionResetError):
                await sender

    asyncio.run(main())


def test_a_send_with_nothing_ahead_of_it_is_written_at_once_and_one_behind_an_event_waits_its_turn() -> None:
    async def main() -> None:
        gate = Gate()
        gate.open.set()
        outbox = Outbox(gate.write, limit=1000)
        async with asyncio.timeout(5):
            await outbox.send(b"answer")  # no writer task is running: the sender wrote it itself
        assert gate.written == [b"answer"]
        assert outbox.post(b"event")
        behind = asyncio.create_task(outbox.send(b"answer 2"))
        await asyncio.sleep(0)
        assert not behind.done()
        writer = asyncio.create_task(outbox.run())
        async with asyncio.timeout(5):
            await behind
        assert gate.written == [b"answer", b"event", b"answer 2"]
        outbox.close()
        await writer

    asyncio.run(main())
