"""The connections a host serves: the launching shell on stdio, and every client on the Unix socket.

Each connection has its own JSON-RPC peer on the one method router, and its own handshake: the methods a
connection calls run with that connection as `current_connection()`, so `initialize` marks only its own
connection, and a method called before it is refused. Events reach a connection only once it has
initialized, through its own outbox, in order with its answers (an event raised while a request runs goes
out before its answer), and an event never waits for any client: a slow client delays only itself. One
that falls `OUTBOX_BYTES` of events behind is disconnected, except the stdio shell, which owns the host's
life: it misses the events instead and is told so (`host.eventsDropped`) once it has caught up. A
connection reads no further while `MAX_IN_FLIGHT` of its requests wait for their answers to be written,
and a socket client that has not initialized within `INITIALIZE_SECONDS` is disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from protocol.codec import FrameEncodeError, encode_frame
from protocol.dispatch import Router
from protocol.limits import INITIALIZE_SECONDS, MAX_IN_FLIGHT, OUTBOX_BYTES
from protocol.models.host import EventsDroppedEvent
from protocol.outbox import Outbox
from protocol.peer import JsonRpcPeer
from protocol.transport import Transport

__all__ = ["Connection", "ConnectionHub", "Origin", "current_connection"]

logger = logging.getLogger(__name__)

Origin = Literal["stdio", "socket"]

_current: ContextVar[Connection | None] = ContextVar("hearth_connection", default=None)


def current_connection() -> Connection | None:
    """The connection whose request is being handled, or None outside any connection."""
    return _current.get()


@dataclass(eq=False, slots=True)
class Connection:
    """One client. `initialized` is set by `initialize`; `dropped` and `dropped_agents` count the events a
    stdio shell missed since it was last told."""

    id: int
    origin: Origin
    transport: Transport
    peer: JsonRpcPeer
    outbox: Outbox
    client: str = ""
    answers_approvals: bool = False  # said in `initialize`: it shows tool calls' questions and answers them
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    dropped: int = 0
    dropped_agents: set[str] = field(default_factory=set)

    @property
    def initialized(self) -> bool:
        return self.ready.is_set()

    @initialized.setter
    def initialized(self, value: bool) -> None:
        if value:
            self.ready.set()
        else:
            self.ready.clear()


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

    def _open(self, transport: Transport, origin: Origin) -> Connection:
        conn_id = next(self._ids)
        outbox = Outbox(transport.write, limit=OUTBOX_BYTES, on_caught_up=partial(self._tell_dropped, conn_id))
        # The peer writes its answers through the outbox, so they keep their place among the events.
        queued = Transport(transport.reader, outbox.send, transport.close, transport.abort)
        peer = JsonRpcPeer(queued, self._router, name=f"{origin}-{conn_id}", max_in_flight=MAX_IN_FLIGHT)
        return Connection(conn_id, origin, transport, peer, outbox)

    async def serve(self, transport: Transport, origin: Origin) -> None:
        """Serve one connection until its other end closes (or it is dropped)."""
        conn = self._open(transport, origin)
        self._live[conn.id] = conn
        self.served += 1
        self.changed.set()
        # Set here, in the task that runs the peer, so every handler task the peer starts inherits it.
        reset = _current.set(conn)
        try:
            async with asyncio.TaskGroup() as tasks:
                writing = tasks.create_task(conn.outbox.run())
                deadline = tasks.create_task(self._initialize_in_time(conn)) if origin == "socket" else None
                try:
                    await conn.peer.serve()
                finally:
                    writing.cancel()
                    if deadline is not None:
                        deadline.cancel()
        except* (ConnectionError, OSError):  # the client vanished mid-write: its loss alone
            logger.info("%s connection %d dropped", origin, conn.id)
        except* Exception:  # one connection's failure must never stop the host or its other clients
            logger.exception("%s connection %d failed", origin, conn.id)
        finally:
            _current.reset(reset)
            self._live.pop(conn.id, None)
            self.changed.set()
            self.count_answerers()
            conn.outbox.close()
            with contextlib.suppress(OSError, RuntimeError):
                await transport.close()
            logger.info("%s connection %d (%s) closed", origin, conn.id, conn.client or "not initialized")

    async def _initialize_in_time(self, conn: Connection) -> None:
        try:
            async with asyncio.timeout(INITIALIZE_SECONDS):
                await conn.ready.wait()
        except TimeoutError:
            await self._drop(conn, f"it did not initialize within {INITIALIZE_SECONDS:g} s")

    def count_answerers(self) -> None:
        """Tell `answerers` how many initialized connections can answer approvals now."""
        self._answerers(sum(1 for conn in self._live.values() if conn.initialized and conn.answers_approvals))

    async def notify_one(self, conn: Connection, method: str, event: BaseModel) -> None:
        """Queue `event` for `conn` alone (what it missed before it attached), behind what it already has."""
        frame = _event_frame(method, event.model_dump(mode="json", by_alias=True))
        if not conn.outbox.post(frame):
            await self._fell_behind(conn, getattr(event, "agent_id", None))

    async def notify(self, method: str, event: BaseModel) -> None:
        """Queue `event` for every initialized connection; none of them is waited for."""
        params: dict[str, Any] = event.model_dump(mode="json", by_alias=True)
        try:
            frame = _event_frame(method, params)
        except FrameEncodeError:
            logger.error("dropped the event %s: it cannot be written as strict JSON", method)
            return
        for conn in list(self._live.values()):
            if conn.initialized and not conn.outbox.post(frame):
                await self._fell_behind(conn, params.get("agentId"))
        # Each writer gets its turn after every event, so a burst of events faster than the loop turns never
        # makes a client that reads look like one that does not.
        await asyncio.sleep(0)

    async def _fell_behind(self, conn: Connection, agent_id: Any) -> None:
        if conn.origin == "socket":
            await self._drop(conn, f"it fell {OUTBOX_BYTES} bytes of events behind")
            return
        if not conn.dropped:
            logger.warning("the stdio shell fell %d bytes of events behind; events are dropped", OUTBOX_BYTES)
        conn.dropped += 1
        if isinstance(agent_id, str):
            conn.dropped_agents.add(agent_id)

    def _tell_dropped(self, conn_id: int) -> None:
        """The stdio shell has caught up: tell it how many events it missed, then send it events again."""
        conn = self._live.get(conn_id)
        if conn is None or not conn.dropped:
            return
        told = EventsDroppedEvent(
            count=conn.dropped,
            agent_ids=sorted(conn.dropped_agents),
            reason=f"this client fell {OUTBOX_BYTES} bytes of events behind; re-read what it shows",
        )
        conn.dropped, conn.dropped_agents = 0, set()
        conn.outbox.post(_event_frame("host.eventsDropped", told.model_dump(mode="json", by_alias=True)))

    async def _drop(self, conn: Connection, reason: str) -> None:
        """Disconnect a socket client now, dropping whatever waits for it."""
        logger.warning("disconnecting connection %d (%s): %s", conn.id, conn.client or "not initialized", reason)
        self._live.pop(conn.id, None)
        self.changed.set()
        self.count_answerers()
        conn.outbox.close()
        with contextlib.suppress(OSError, RuntimeError):
            await conn.transport.abort()

    async def close_all(self) -> None:
        """Close every connection's transport (the host is stopping); a socket client's at once."""
        for conn in list(self._live.values()):
            with contextlib.suppress(OSError, RuntimeError):
                await (conn.transport.close() if conn.origin == "stdio" else conn.transport.abort())


def _event_frame(method: str, params: dict[str, Any]) -> bytes:
    """One notification as a frame, encoded once for every connection it goes to."""
    return encode_frame({"jsonrpc": "2.0", "method": method, "params": params})
