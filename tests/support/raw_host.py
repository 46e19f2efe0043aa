"""A raw test shell: writes bytes to a real `python -m host` over real pipes and reads every stdout line.

Unlike `HostProcess` it sends lines exactly as given (hostile ones included) and checks each line the host
writes with a strict JSON parser, counting the ones that are not strict JSON instead of hiding them. With a
small `read_limit` it reads nothing ahead: while the test does not read, the host's stdout pipe fills.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from protocol.framing import READ_LIMIT, read_frame
from protocol.models.host import PROTOCOL_VERSION
from tests.support.host_process import spawn_host

__all__ = ["HostDiedError", "RawHost", "parse_strict"]


class HostDiedError(Exception):
    """The host closed its stdout (it exited) while an answer was awaited."""


def parse_strict(line: bytes) -> Any:
    """Parse one line as strict JSON: UTF-8, no NaN or infinity, no lone surrogate. Raises ValueError."""
    return from_json(line, allow_inf_nan=False)


class RawHost:
    """`async with RawHost(data_dir) as host:` starts a host; leaving shuts it down (or kills it)."""

    def __init__(self, data_dir: Path, *, stderr_to: Path | None = None, read_limit: int = READ_LIMIT) -> None:
        self.data_dir = data_dir
        self._stderr_to = stderr_to
        self._read_limit = read_limit
        self.process: asyncio.subprocess.Process | None = None
        self.lines = 0
        self.not_json: list[bytes] = []
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0

    async def __aenter__(self) -> RawHost:
        stderr: Any = asyncio.subprocess.DEVNULL
        if self._stderr_to is not None:
            stderr = open(self._stderr_to, "ab")  # the child keeps its own copy; ours closes below
        try:
            self.process = await spawn_host(self.data_dir, stderr=stderr, limit=self._read_limit)
        finally:
            if self._stderr_to is not None:
                stderr.close()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def stop(self) -> None:
        """Ask the host to shut down; kill it if it does not go within the timeout."""
        assert self.process is not None and self.process.stdin is not None
        if self.process.returncode is None:
            try:
                await self.send(b'{"jsonrpc":"2.0","id":"raw-shutdown","method":"shutdown"}\n')
                async with asyncio.timeout(30):
                    await self.answer_to("raw-shutdown")
                    await self.process.wait()
            except (HostDiedError, ConnectionError, TimeoutError):
                if self.process.returncode is None:
                    self.process.kill()
                await self.process.wait()

    async def send(self, data: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def next_line(self) -> Any:
        """The next line, strictly parsed (or the raw bytes, if it is not JSON); a notification is also kept.

        Raises:
            HostDiedError: the host closed its stdout first.
        """
        assert self.process is not None and self.process.stdout is not None
        raw = await read_frame(self.process.stdout)
        if raw is None:
            raise HostDiedError(f"the host closed its stdout (exit code {self.process.returncode})")
        self.lines += 1
        try:
            message = parse_strict(raw)
        except ValueError:
            self.not_json.append(raw[:200])
            return raw
        if isinstance(message, dict) and "method" in message and "id" not in message:
            self.notifications.append(message)
        return message

    async def next_answer(self) -> Any:
        """The next line that is not a notification (see `next_line`)."""
        while True:
            message = await self.next_line()
            if not (isinstance(message, dict) and "method" in message and "id" not in message):
                return message

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        """Skip answers until the one addressed to `request_id`."""
        while True:
            message = await self.next_answer()
            if isinstance(message, dict) and message.get("id") == request_id:
                return message

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> dict[str, Any]:
        """Send a well-formed request and wait for its answer (the whole response object)."""
        self._next_id += 1
        request_id = f"raw-{self._next_id}"
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        await self.send(line.encode() + b"\n")
        async with asyncio.timeout(timeout):
            return await self.answer_to(request_id)

    async def initialize(self) -> None:
        answer = await self.call("initialize", {"client": {"name": "raw"}, "protocolVersion": PROTOCOL_VERSION})
        assert "result" in answer, answer
