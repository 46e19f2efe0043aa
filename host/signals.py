"""Signals: SIGTERM, SIGINT and SIGHUP stop the host the way `shutdown` does.

While the host serves, each of them only asks it to stop: runs are cancelled with their streamed text
kept and their ends written, the kernel is shut down, and the data directory's lock is released, so a
terminal's Ctrl-C or a service manager's stop never leaves a run open or prints a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["STOP_SIGNALS", "stop_on_signals"]

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call `stop` on each of `STOP_SIGNALS` while inside; the previous handlers come back on the way out."""
    loop = asyncio.get_running_loop()

    def received(number: signal.Signals) -> None:
        logger.info("received %s: stopping", number.name)
        stop()

    for number in STOP_SIGNALS:
        loop.add_signal_handler(number, received, number)
    try:
        yield
    finally:
        for number in STOP_SIGNALS:
            loop.remove_signal_handler(number)
