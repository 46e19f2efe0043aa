"""Where a memory's blocking disk calls run: inline while the store opens, in a worker thread once it serves.

A write awaits its disk calls (ledger append, MEMORY.md) under the store's lock, so the event loop runs other
agents meanwhile and readers see the state from before the write until it has folded. A disk call cannot be
stopped halfway, and neither may the write it belongs to: a cancellation that arrives while one runs is kept
(`cancelled`) and raised by the store once the write has reached its end. `run_inline` drives a write to its
end without a loop while the store opens, where every disk call runs inline and nothing suspends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["DiskWork", "run_inline"]

T = TypeVar("T")


class DiskWork:
    """The disk calls of one memory. Only the store's writer uses it, one call at a time."""

    def __init__(self) -> None:
        self.inline = True
        self.cancelled = False

    async def __call__(self, work: Callable[[], T]) -> T:
        """Run `work` (inline, or in the loop's default executor) and return what it returns or raise what it raises."""
        if self.inline:
            return work()
        done = asyncio.get_running_loop().run_in_executor(None, work)
        while True:
            try:
                return await asyncio.shield(done)
            except asyncio.CancelledError:
                if done.cancelled():
                    raise
                self.cancelled = True  # the caller raises it after the write; until then wait for the disk


def run_inline(write: Coroutine[Any, Any, T]) -> T:
    """Run a write whose disk calls run inline to its end, without an event loop (the store's opening).

    Raises:
        RuntimeError: the write waited for something (a disk call that was not inline).
    """
    try:
        write.send(None)
    except StopIteration as finished:
        result: T = finished.value
        return result
    write.close()
    raise RuntimeError("a write at opening waited on the event loop")
