"""A raw client of a running host's Unix socket that reads only when the test says so.

Its reader buffers little (`limit`), so while the test does not read, the socket fills and the host has
to hold what it sends; every line it does read is parsed strictly and notifications are kept in order.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from protocol.endpoint import read_endpoint
from protocol.framing import read_frame
from protocol.models.host import PROTOCOL_VERSION
from tests.support.raw_host import parse_strict

__all__ = ["RawSocket"]


class RawSocket:
    """`async with RawSocket(data_dir) as client:` connects to the host that runs on `data_dir`."""

    def __init__(self, data_dir: Path, *, limit: int = 64 * 1024) -> None:
        self.data_dir = data_dir
        self._limit = limit
        self.notifications: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        """Every message read, answers included, in order."""
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._next_id = 0

    async def __aenter__(self) -> RawSocket:
        endpoint = read_endpoint(self.data_dir)
        assert endpoint is not None, "no host is listening"
        self._reader, self._writer = await asyncio.open_unix_connection(endpoint.socket, limit=self._limit)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass

    async def send(self, data: bytes) -> None:
        assert self._writer is not None
        self._writer.write(data)
        await self._writer.drain()

    async def next_message(self) -> dict[str, Any] | None:
        """The next message the host wrote (notifications included, and kept), or None once it has closed."""
        assert self._reader is not None
        try:
            line = await read_frame(self._reader)
        except ConnectionError:
            return None
        if line is None:
            return None
        try:
            message = parse_strict(line)
        except ValueError:
            if self._reader.at_eof():
                return None  # the last line, cut short where the host let go of this client
            raise
        assert isinstance(message, dict), message
        self.seen.append(message)
        if "id" not in message:
            self.notifications.append(message)
        return message

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> dict[str, Any]:
        """Send a request and return its whole answer, keeping the notifications read on the way."""
        self._next_id += 1
        request_id = f"sock-{self._next_id}"
        await self.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}).encode() + b"\n"
        )
        async with asyncio.timeout(timeout):
            while True:
                message = await self.next_message()
                if message is None:
                    raise ConnectionError(f"the host closed the connection while {method} waited")
                if message.get("id") == request_id:
                    return message

    async def initialize(self, name: str = "raw-socket") -> None:
        endpoint = read_endpoint(self.data_dir)
        assert endpoint is not None
        params = {"client": {"name": name}, "protocolVersion": PROTOCOL_VERSION, "token": endpoint.token}
        answer = await self.call("initialize", params)
        assert "result" in answer, answer
