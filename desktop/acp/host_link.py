"""The ACP agent's one connection to Hearth's host: made when first needed, made again once the host went away.

It goes through `desktop.client.connect_host` (the one client function: it attaches to the running host over its
socket, or starts one) and is held open by a task of the caller's task group until `close`. This process never opens
an agent's files itself: every read and write is a host method, so the host stays the one writer of each agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

from desktop.client import connect_host
from protocol.dispatch import Router
from protocol.errors import ConnectionClosedError, JsonRpcError
from protocol.models.base import WireModel
from protocol.peer import JsonRpcPeer

__all__ = ["HostLink"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=WireModel)

CLIENT_NAME = "hearth-acp"
LIVENESS_SECONDS = 1.0
"""How often a held connection is checked: `connect_host` does not say when its reader ends."""


class HostLink:
    """Calls to the host, connecting (or reconnecting) first.

    Args:
        data_dir: the data directory whose host to reach.
        router: where the host's notifications go.
        tasks: owns the task that holds the connection open.
        verbose: let the host's log through to stderr instead of `<data>/logs/host.log`.
        on_lost: told (with the reason) when a connection that was made is lost.
    """

    def __init__(
        self,
        data_dir: Path,
        router: Router,
        tasks: asyncio.TaskGroup,
        *,
        verbose: bool = False,
        on_lost: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.data_dir = data_dir
        self._on_lost = on_lost
        self._router = router
        self._tasks = tasks
        self._verbose = verbose
        self._peer: JsonRpcPeer | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    async def _hold(self, ready: asyncio.Future[JsonRpcPeer], stop: asyncio.Event) -> None:
        try:
            async with connect_host(
                self.data_dir, self._router, client=CLIENT_NAME, verbose=self._verbose, answers_approvals=True
            ) as peer:
                ready.set_result(peer)
                while not stop.is_set():
                    if peer.closed:
                        self._on_lost("the host closed the connection")
                        return
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), LIVENESS_SECONDS)
        except JsonRpcError as exc:
            self._failed(ready, exc)
        except OSError as exc:  # the host could not even be spawned
            self._failed(ready, ConnectionClosedError(str(exc)))
        except Exception:  # a task of the serving group: an escape would end the whole ACP session
            logger.exception("the host connection failed")
            self._failed(ready, ConnectionClosedError("the host connection failed; see the log"))

    @staticmethod
    def _failed(ready: asyncio.Future[JsonRpcPeer], exc: JsonRpcError) -> None:
        if not ready.done():
            ready.set_exception(exc)
        else:
            logger.warning("the connection to the host ended: %s", exc.message)

    async def peer(self) -> JsonRpcPeer:
        """The live connection, made now if there is none.

        Raises:
            ConnectionClosedError: no host could be reached or started (the message says why).
            JsonRpcError: the host refused to initialize.
        """
        async with self._lock:
            if self._peer is not None and not self._peer.closed:
                return self._peer
            if self._stop is not None:
                self._stop.set()  # the old connection's host went away: let its holder finish
            ready: asyncio.Future[JsonRpcPeer] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._tasks.create_task(self._hold(ready, self._stop))
            self._peer = await ready
            return self._peer

    @overload
    async def call(self, method: str, params: dict[str, Any], result_type: type[R]) -> R: ...

    @overload
    async def call(self, method: str, params: dict[str, Any], result_type: None = None) -> Any: ...

    async def call(self, method: str, params: dict[str, Any], result_type: type[R] | None = None) -> Any:
        """One host method, its result validated as `result_type` when given.

        Raises:
            JsonRpcError: the host's error (its code kept), or ConnectionClosedError when it cannot be reached.
        """
        peer = await self.peer()
        return await peer.request(method, params, result_type)

    async def close(self) -> None:
        """Let go of the connection (a host this process started over pipes is shut down on the way)."""
        async with self._lock:
            if self._stop is not None:
                self._stop.set()
            self._peer = None
