"""One connection's outgoing frames: a queue in front of its transport, written in order by one task.

`send` queues a frame and waits until it is written (at once, when nothing is ahead of it): answers and
requests, whose senders are bounded elsewhere (a peer's in-flight limit). `post` queues a frame and
returns at once: events, which must never wait for a slow reader. Posted frames may take up to `limit`
bytes; past that the outbox refuses them (and every later one) until its writer has brought them down to
half the limit, and says so through `on_caught_up`. So a reader that stops costs its writer at most
`limit` bytes of events, and no one else waits for it. A write that fails closes the outbox: its waiting
senders get `ConnectionResetError`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable

__all__ = ["Outbox"]

logger = logging.getLogger(__name__)

_Item = tuple[bytes, "asyncio.Future[None] | None"]


class Outbox:
    """Frames for one connection, in the order they were given.

    Args:
        write: writes one frame to the connection (and waits while the connection's buffer is full).
        limit: bytes of posted frames that may wait; a first frame is taken whatever its size.
        on_caught_up: called when frames were refused and the wait has come down to half the limit.
    """

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        *,
        limit: int,
        on_caught_up: Callable[[], None] | None = None,
    ) -> None:
        self._write = write
        self._limit = limit
        self._on_caught_up = on_caught_up
        self._queue: collections.deque[_Item] = collections.deque()
        self._posted = 0
        self._refusing = False
        self._closed = False
        self._busy = False  # a frame is being written (by `run`, or by a sender that found nothing ahead of it)
        self._wake = asyncio.Event()

    @property
    def posted_bytes(self) -> int:
        """Bytes of posted frames not written yet."""
        return self._posted

    @property
    def closed(self) -> bool:
        return self._closed

    def post(self, frame: bytes) -> bool:
        """Queue `frame` without waiting for it to be written.

        Returns:
            False when the frame was refused: the posted frames waiting are at the limit (or were, and have
            not come down to half of it yet). A closed outbox takes and drops frames (True): nobody reads them.
        """
        if self._closed:
            return True
        if self._refusing or (self._posted and self._posted + len(frame) > self._limit):
            self._refusing = True
            return False
        self._posted += len(frame)
        self._queue.append((frame, None))
        self._wake.set()
        return True

    async def send(self, frame: bytes) -> None:
        """Queue `frame` after everything queued before it and wait until it has been written.

        Raises:
            ConnectionResetError: the outbox is closed, or closed before the frame was written.
        """
        if self._closed:
            raise ConnectionResetError("the connection is closed")
        if not self._queue and not self._busy:
            await self._write_now(frame)  # nothing ahead of it: written at once, without waiting for `run`
            return
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((frame, written))
        self._wake.set()
        await written

    async def _write_now(self, frame: bytes) -> None:
        self._busy = True
        try:
            await self._write(frame)
        except (OSError, RuntimeError) as exc:
            self.close()
            raise ConnectionResetError("the connection is closed") from exc
        finally:
            self._busy = False
            if self._queue:
                self._wake.set()
        if self._closed:  # closed while it was being written, as a queued frame would have been
            raise ConnectionResetError("the connection is closed")

    def close(self) -> None:
        """Drop every queued frame; the senders waiting get `ConnectionResetError`; `run` returns."""
        self._closed = True
        while self._queue:
            _, written = self._queue.popleft()
            if written is not None and not written.done():
                written.set_exception(ConnectionResetError("the connection is closed"))
        self._posted = 0
        self._wake.set()

    async def run(self) -> None:
        """Write queued frames in order until the outbox is closed or a write fails (which closes it)."""
        while not self._closed:
            if not self._queue or self._busy:
                self._wake.clear()
                await self._wake.wait()
                continue
            frame, written = self._queue[0]
            self._busy = True
            try:
                await self._write(frame)
            except (OSError, RuntimeError) as exc:  # the other end went away: nothing more can reach it
                logger.debug("outbox: a write failed (%s); closing", exc)
                self.close()
                return
            finally:
                self._busy = False
            if self._closed:  # closed while the frame was being written: `close` has settled the queue
                return
            self._queue.popleft()
            if written is None:
                self._posted -= len(frame)
                self._caught_up()
            elif not written.done():
                written.set_result(None)

    def _caught_up(self) -> None:
        if self._refusing and self._posted <= self._limit // 2:
            self._refusing = False
            if self._on_caught_up is not None:
                self._on_caught_up()
