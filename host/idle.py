"""When a host that no shell owns should stop: nobody connected and no run active, for a grace period.

A host started by a client (rather than by a desktop shell on its stdio) serves whoever attaches. It
stops once no client has been connected and no run has been queued or running for `grace` seconds, so a
turn a person left running still finishes and its end is written. Until its first client arrives it
waits at least `FIRST_CLIENT_SECONDS`, so the client that started it has time to connect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["FIRST_CLIENT_SECONDS", "wait_until_idle"]

FIRST_CLIENT_SECONDS = 30.0


async def wait_until_idle(
    is_idle: Callable[[], bool],
    has_had_client: Callable[[], bool],
    changed: asyncio.Event,
    grace: float,
    *,
    first_client: float = FIRST_CLIENT_SECONDS,
) -> None:
    """Return once `is_idle()` has held for `grace` seconds; `changed` is set whenever it may have changed."""
    while True:
        changed.clear()
        if not is_idle():
            await changed.wait()
            continue
        try:
            async with asyncio.timeout(grace if has_had_client() else max(grace, first_client)):
                await changed.wait()
        except TimeoutError:
            if is_idle():
                return
