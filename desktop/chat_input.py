"""What `hearth chat` waits on: typed lines, Ctrl-C, and the host's questions and run ends, in one place.

Lines come from one daemon thread reading stdin (so a read blocked at exit never holds the process
up), in order, and wait until the chat wants a line; everything else (Ctrl-C, an approval question,
a run's end) is a control event, handled before any line. Ctrl-C is a SIGINT handler that only adds an
`INTERRUPT`: the chat decides what it means (cancel the reply, or leave at the prompt).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO

from protocol.models.host import AgentEndedEvent, AgentToolEvent

__all__ = ["INTERRUPT", "ChatEvents", "Control", "Interrupt"]


class Interrupt:
    """Ctrl-C."""

    def __repr__(self) -> str:
        return "INTERRUPT"


INTERRUPT: Final = Interrupt()

Control = Interrupt | AgentToolEvent | AgentEndedEvent
"""A control event: Ctrl-C, an approval question (`agent.tool`, pending), or a run's end."""


class ChatEvents:
    """Typed lines and control events for one chat."""

    def __init__(self) -> None:
        self._lines: deque[str | None] = deque()
        self._control: deque[Control] = deque()
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def push(self, event: Control) -> None:
        self._control.append(event)
        self._changed.set()

    def _push_line(self, line: str | None) -> None:
        self._lines.append(line)
        self._changed.set()

    async def next(self, *, want_line: bool) -> Control | str | None:
        """The next control event, or (when `want_line`) the next line; None is the end of input."""
        while True:
            if self._control:
                return self._control.popleft()
            if want_line and self._lines:
                # The end of input stays: whoever asks for a line after it gets the end again.
                return self._lines.popleft() if self._lines[0] is not None else None
            self._changed.clear()
            await self._changed.wait()

    @contextmanager
    def reading(self, stdin: TextIO = sys.stdin) -> Iterator[None]:
        """Read `stdin` in a daemon thread and turn SIGINT into `INTERRUPT` while inside."""
        loop = asyncio.get_running_loop()

        def read() -> None:
            try:
                while line := stdin.readline():
                    loop.call_soon_threadsafe(self._push_line, line)
                loop.call_soon_threadsafe(self._push_line, None)
            except RuntimeError:
                return  # the chat has finished and its loop is closed: nobody waits for more lines

        threading.Thread(target=read, daemon=True, name="chat-stdin").start()
        loop.add_signal_handler(signal.SIGINT, self.push, INTERRUPT)
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)
