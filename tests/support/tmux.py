"""A real terminal for tests: a private tmux server, keys sent with `send-keys`, the screen read with
`capture-pane`. Waiting for the screen is event-driven: the pane's output is piped into a FIFO, and the
screen is captured again each time the program writes to its terminal (with an overall timeout).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

__all__ = ["Terminal", "tmux_path"]


def tmux_path() -> str:
    """The tmux binary; `scripts/setup.sh` installs it."""
    found = shutil.which("tmux")
    assert found is not None, "tmux is missing: run `bash scripts/setup.sh` (it installs tmux with apt-get)"
    return found


class Terminal:
    """`with Terminal(tmp_path, command) as term:` runs `command` in a 120x36 terminal of its own."""

    def __init__(self, workdir: Path, command: str, *, size: tuple[int, int] = (120, 36)) -> None:
        self._tmux = tmux_path()
        self.socket = f"hearth-{uuid.uuid4().hex[:8]}"
        self._fifo = workdir / "pane.fifo"
        self._command = command
        self._size = size
        self._fd: int | None = None

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [self._tmux, "-L", self.socket, *args], capture_output=True, text=True, timeout=30, check=True
        )
        return done.stdout

    def __enter__(self) -> Terminal:
        width, height = self._size
        # COLUMNS and LINES (a test runner's worker sets them) would override the pane's own size in the program.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm-256color"}
        subprocess.run(
            [self._tmux, "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "main"]
            + ["-x", str(width), "-y", str(height), self._command],
            env=env,
            check=True,
            timeout=30,
        )
        os.mkfifo(self._fifo)
        self._fd = os.open(self._fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.tmux("pipe-pane", "-t", "main", f"cat > {self._fifo}")
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run([self._tmux, "-L", self.socket, "kill-server"], capture_output=True, timeout=30, check=False)
        if self._fd is not None:
            os.close(self._fd)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def send(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "main", *(["-l"] if literal else []), *keys)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 60) -> str:
        """The screen once `predicate(screen)` holds; each re-check waits for the program's next output."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if predicate(shown):
                return shown
            left = deadline - time.monotonic()
            assert left > 0, f"the terminal never showed what was expected; it shows:\n{shown}"
            assert self._fd is not None
            ready, _, _ = select.select([self._fd], [], [], min(left, 1.0))
            if ready:
                try:
                    if not os.read(self._fd, 1 << 16):  # the pane's program is gone: nothing more will come
                        shown = self.screen()
                        assert predicate(shown), f"the program ended; the terminal shows:\n{shown}"
                        return shown
                except BlockingIOError:
                    pass
