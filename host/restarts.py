"""Kernel restart pacing: a growing backoff between restarts, reset once a kernel has stayed up a while.

A kernel that dies at once, or never starts, is retried after 0.2 s, then 0.5, 1, 2 and 5 s, and every
5 s after that; one that ran healthy for `healthy_after` seconds before it stopped starts the count
again, so an occasional crash after hours of work is retried at once. Time comes from a `Clock`, the
seam that lets the tests drive the backoff without waiting.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Protocol

__all__ = ["BACKOFF_STEPS", "HEALTHY_AFTER_SECONDS", "Clock", "RestartBackoff", "SystemClock"]

BACKOFF_STEPS = (0.2, 0.5, 1.0, 2.0, 5.0)
HEALTHY_AFTER_SECONDS = 30.0


class Clock(Protocol):
    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass(slots=True)
class RestartBackoff:
    steps: tuple[float, ...] = BACKOFF_STEPS
    healthy_after: float = HEALTHY_AFTER_SECONDS
    failures: int = 0

    def next_delay(self, up_for: float | None) -> float:
        """The wait before the next start.

        Args:
            up_for: how long the kernel that just stopped had been up; None when it never came up.
        """
        if up_for is not None and up_for >= self.healthy_after:
            self.failures = 0
        delay = self.steps[min(self.failures, len(self.steps) - 1)]
        self.failures += 1
        return delay
