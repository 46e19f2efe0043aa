"""The connections a host serves: the launching shell on stdio, and every client on the Unix socket.

Each connection has its own JSON-RPC peer on the one method router, and its own handshake: the methods a
connection calls run with that connection as `current_connection()`, so `initialize` marks only its own
connection, and a method called before it is refused. Events reach a connection only once it has
initialized, written in order with the answers (an event raised while a request runs goes out before its
answer). A client that stops reading long enough to fill its socket buffer for `SLOW_CLIENT_SECONDS` is
disconnected, so it cannot stall the host or the other clients for longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from protocol.dispatch import Router
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport

__all__ = ["Connection", "ConnectionHub", "Origin", "current_connection", "SLOW_CLIENT_SECONDS"]

logger = logging.getLogger(__name__)

Origin = Literal["stdio", "socket"]

SLOW_CLIENT_SECONDS = 5.0
"""How long one event may wait for a client to make room for it before the client is taken for gone."""

_current: ContextVar[Connection | None] = ContextVar("hearth_connection", default=None)


def current_connection() -> Connection | None:
    """The connection whose request is being handled, or None outside any connection."""
    return _current.get()


@dataclass(eq=False, slots=True)
class Connection:
    id: int
    origin: Origin
    transport: Transport
    peer: JsonRpcPeer
    initialized: bool = False
    client: str = ""
    answers_approvals: bool = False  # said in `initialize`: it shows tool calls' questions and answers them


class ConnectionHub:
    """Every live connection; broadcasts events to the initialized ones.

    `changed` is set whenever a connection comes or goes, for whoever watches the count (idle exit);
    `answerers` is told how many initialized connections can answer approvals, whenever that may change;
    `served` counts every connection there has been.
    """

    def __init__(
        self, router: Router, changed: asyncio.Event, answerers: Callable[[int], None] = lambda _: None
    ) -> None:
        self._router = router
        self._answerers = answerers
        self._ids = itertools.count(1)
        self._live: dict[int, Connection] = {}
        self.changed = changed
        self.served = 0

    def __len__(self) -> int:
        return len(self._live)

    def connections(self) -> list[Connection]:
        return list(self._live.values())

    async def serve(self, transport: Transport, origin: Origin) -> None:
        """Serve one connection until its other end closes (or it is dropped)."""
        conn_id = next(self._ids)
        peer = JsonRpcPeer(transport, self._router, name=f"{origin}-{conn_id}")
        conn = Connection(conn_id, origin, transport, peer)
        self._live[conn_id] = conn
        self.served += 1
        self.changed.set()
        # Set here, in the task that runs the peer, so every handler task the peer starts inherits it.
        reset = _current.set(conn)
        try:
            await peer.serve()
        except* (ConnectionError, OSError):  # the client vanished mid-write: its loss alone
            logger.info("%s connection %d dropped", origin, conn_id)
        except* Exception:  # one connection's failure must never stop the host or its other clients
            logger.exception("%s connection %d failed", origin, conn_id)
        finally:
            _current.reset(reset)
            self._live.pop(conn_id, None)
            self.changed.set()
            self.count_answerers()
            with contextlib.suppress(OSError, RuntimeError):
                await transport.close()
            logger.info("%s connection %d (%s) closed", origin, conn_id, conn.client or "not initialized")

    def count_answerers(self) -> None:
        """Tell `answerers` how many initialized connections can answer approvals now."""
        self._answerers(sum(1 for conn in self._live.values() if conn.initialized and conn.answers_approvals))

    async def notify_one(self, conn: Connection, method: str, event: BaseModel) -> None:
        """Send `event` to `conn` alone (what it missed before it attached)."""
        await conn.peer.notify(method, event.model_dump(mode="json", by_alias=True))

    async def notify(self, method: str, event: BaseModel) -> None:
        """Send `event` to every initialized connection; disconnect one that has stopped reading."""
        params: dict[str, Any] = event.model_dump(mode="json", by_alias=True)
        for conn in list(self._live.values()):
            if not conn.initialized:
                continue
            try:
                async with asyncio.timeout(SLOW_CLIENT_SECONDS):
                    await conn.peer.notify(method, params)
            except TimeoutError:
                logger.warning("connection %d (%s) stopped reading events; disconnecting it", conn.id, conn.client)
                self._live.pop(conn.id, None)
                self.changed.set()
                with contextlib.suppress(OSError, RuntimeError):
                    await conn.transport.close()

    async def close_all(self) -> None:
        """Close every connection's transport (the host is stopping)."""
        for conn in list(self._live.values()):
            with contextlib.suppress(OSError, RuntimeError):
                await conn.transport.close()
