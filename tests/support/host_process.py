"""A test shell that launches the real host (`python -m host`) over real pipes and drives it like a desktop.

It records every notification the host sends (see `tests.support.shell.TestShell`), so a test can wait
for one with a timeout instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport
from tests.support.shell import TestShell

__all__ = ["HostProcess", "scripted_model", "spawn_host", "REPO_ROOT"]

REPO_ROOT = Path(__file__).resolve().parents[2]


def scripted_model(*rules: dict[str, Any]) -> dict[str, Any]:
    """Agent settings for a scripted model with these rules (wire form)."""
    return {"model": {"provider": "scripted", "rules": list(rules)}}


async def spawn_host(
    data_dir: Path, *, stderr: Any, env: dict[str, str] | None = None, limit: int = READ_LIMIT
) -> asyncio.subprocess.Process:
    """Start `python -m host --data-dir DATA_DIR` from the repository, its stdin and stdout on pipes.

    `limit` is the buffer of the reader on its stdout: a small one makes a shell that does not read stop
    the pipe soon (a large one reads ahead into memory whatever the test does).
    """
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "host",
        "--data-dir",
        str(data_dir),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=REPO_ROOT,
        env=env,
        limit=limit,
    )


class HostProcess(TestShell):
    """`async with HostProcess(data_dir) as host:` starts `python -m host`; leaving shuts it down."""

    def __init__(
        self,
        data_dir: Path,
        *,
        initialize: bool = True,
        env: dict[str, str] | None = None,
        stderr_to: Path | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self._stderr_to = stderr_to
        self._initialize = initialize
        self._env = {**os.environ, **(env or {})}
        self.process: asyncio.subprocess.Process | None = None
        self._serving: asyncio.Task[None] | None = None

    async def __aenter__(self) -> HostProcess:
        with contextlib.ExitStack() as stack:
            # The child keeps its own copy of the descriptor; ours can close once it has started.
            stderr = stack.enter_context(open(self._stderr_to, "ab")) if self._stderr_to is not None else None
            await self._start(stderr)
        return self

    async def _start(self, stderr: Any) -> None:
        self.process = await spawn_host(self.data_dir, stderr=stderr, env=self._env)
        self.peer = JsonRpcPeer(process_transport(self.process), self.router, name="host", default_timeout=30)
        self._serving = asyncio.create_task(self.peer.serve())
        if self._initialize:
            await self.call("initialize", {"client": {"name": "tests"}, "protocolVersion": PROTOCOL_VERSION})

    async def __aexit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.returncode is None:
            try:
                await self.call("shutdown", timeout=20)
            except Exception:
                self.process.kill()
            async with asyncio.timeout(30):
                await self.process.wait()
        if self._serving is not None:
            self._serving.cancel()

    async def send_raw(self, data: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()
