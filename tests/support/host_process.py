"""A test shell: launches the real `hearth host` over real pipes and drives it like a desktop would.

It records every notification the host sends, so a test can wait for one (`wait_for`) with a timeout
instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.dispatch import Router
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport

__all__ = ["HostProcess", "scripted_model", "REPO_ROOT"]

REPO_ROOT = Path(__file__).resolve().parents[2]


def scripted_model(*rules: dict[str, Any]) -> dict[str, Any]:
    """Agent settings for a scripted model with these rules (wire form)."""
    return {"model": {"provider": "scripted", "rules": list(rules)}}


class _Recorder(Router):
    """A router that records every notification, whatever its name."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Condition()

    async def dispatch(self, message: Any = None, *, raw: str | None = None) -> Any:
        if isinstance(message, dict) and "id" not in message and "method" in message:
            async with self.changed:
                self.events.append((message["method"], message.get("params") or {}))
                self.changed.notify_all()
            return None
        return await super().dispatch(message, raw=raw)


class HostProcess:
    """`async with HostProcess(data_dir) as host:` starts `python -m host host`; leaving shuts it down."""

    def __init__(
        self,
        data_dir: Path,
        *,
        initialize: bool = True,
        env: dict[str, str] | None = None,
        stderr_to: Path | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._stderr_to = stderr_to
        self._initialize = initialize
        self._env = {**os.environ, **(env or {})}
        self.router = _Recorder()
        self.process: asyncio.subprocess.Process | None = None
        self.peer: JsonRpcPeer | None = None
        self._serving: asyncio.Task[None] | None = None

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return self.router.events

    async def __aenter__(self) -> HostProcess:
        with contextlib.ExitStack() as stack:
            # The child keeps its own copy of the descriptor; ours can close once it has started.
            stderr = stack.enter_context(open(self._stderr_to, "ab")) if self._stderr_to is not None else None
            await self._start(stderr)
        return self

    async def _start(self, stderr: Any) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "host",
            "--data-dir",
            str(self.data_dir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=REPO_ROOT,
            env=self._env,
            limit=READ_LIMIT,
        )
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

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> Any:
        assert self.peer is not None
        return await self.peer.request(method, params or {}, timeout=timeout)

    async def send_raw(self, data: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def wait_for(
        self,
        method: str,
        where: Callable[[dict[str, Any]], bool] = lambda _: True,
        *,
        timeout: float = 30,
        after: int = 0,
    ) -> dict[str, Any]:
        """The first recorded `method` notification whose params satisfy `where` (waits for it).

        `after` skips the first that many recorded events (pass `len(host.events)` to wait for a new one).
        """
        async with asyncio.timeout(timeout), self.router.changed:
            while True:
                for name, params in self.router.events[after:]:
                    if name == method and where(params):
                        return params
                await self.router.changed.wait()

    def texts(self, agent_id: str, run_id: str) -> str:
        """The streamed text of one run, joined from its `agent.delta` events."""
        return "".join(
            p["text"]
            for m, p in self.events
            if m == "agent.delta" and p["agentId"] == agent_id and p["runId"] == run_id
        )
