"""The shell's one connection to the host: attach (or start one), call methods, hear events, notice a death.

Every notification the host sends becomes a `HostEvent` message posted to the app, so widgets handle
events in Textual's own message order and the wire never runs widget code. When the connection ends
without the shell closing it, the app gets `HostLost` and can offer to restart the host.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.app import App
from textual.message import Message

from desktop.client import HostLink, attach_or_start
from protocol.dispatch import Router
from protocol.errors import ConnectionClosedError

__all__ = ["HostEvent", "HostLost", "HostSession"]


class HostEvent(Message):
    """A notification from the host: `method` and its wire-form `params`."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        super().__init__()
        self.method = method
        self.params = params


class HostLost(Message):
    """The connection to the host ended without the shell closing it."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class _Events(Router):
    """Hands every notification to the app as a `HostEvent`; the shell answers no requests."""

    def __init__(self, app: App[Any]) -> None:
        super().__init__()
        self._app = app

    async def dispatch(self, message: dict[str, Any] | list[dict[str, Any]]) -> Any:
        if isinstance(message, dict) and "id" not in message and isinstance(message.get("method"), str):
            params = message.get("params")
            self._app.post_message(HostEvent(message["method"], params if isinstance(params, dict) else {}))
            return None
        return await super().dispatch(message)


class HostSession:
    def __init__(self, app: App[Any], data_dir: Path, *, verbose: bool = False) -> None:
        self._app = app
        self.data_dir = data_dir
        self._verbose = verbose
        self._link: HostLink | None = None
        self._closing = False
        self.started_host = False

    @property
    def connected(self) -> bool:
        return self._link is not None and not self._link.peer.closed

    async def connect(self) -> None:
        """Attach to the running host, or start one.

        Raises:
            ConnectionClosedError: no host could be reached or started.
        """
        if self._link is not None:  # a dead connection: release it before making a new one
            self._closing = True
            await self._link.close()
            self._link = None
        self._closing = False
        link = await attach_or_start(
            self.data_dir, _Events(self._app), client="hearth-shell", verbose=self._verbose, answers_approvals=True
        )
        self._link = link
        self.started_host = link.started_host
        link.serving.add_done_callback(self._ended)

    def _ended(self, _: asyncio.Task[None]) -> None:
        if not self._closing:
            self._app.post_message(HostLost("the connection to the host closed"))

    async def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> Any:
        """Call a host method and return its wire-form result.

        Raises:
            JsonRpcError: the host answered with an error, or the connection is gone.
        """
        if self._link is None or self._link.peer.closed:
            raise ConnectionClosedError("not connected to the host")
        return await self._link.peer.request(method, params or {}, timeout=timeout)

    async def close(self) -> None:
        self._closing = True
        if self._link is not None:
            await self._link.close()
            self._link = None
