"""A two-way JSON-RPC 2.0 peer over one transport.

Both sides send requests, responses and notifications. Outgoing requests are correlated by id and time
out; incoming requests each run in their own task (owned by the peer's task group) so a slow handler
never blocks the reader, while incoming notifications run in arrival order. Every incoming request is
answered, and a malformed line gets an error answer instead of ending the session.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from protocol.dispatch import Router
from protocol.errors import (
    INVALID_REQUEST,
    ConnectionClosedError,
    JsonRpcError,
    RequestTimeoutError,
)
from protocol.framing import FrameTooLargeError, encode_frame, read_frame
from protocol.transport import Transport

__all__ = ["JsonRpcPeer", "NotificationHandler"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


def _params_json(params: BaseModel | dict[str, Any] | None) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, BaseModel):
        return params.model_dump(mode="json", by_alias=True)
    return params


class JsonRpcPeer:
    """One end of a JSON-RPC connection.

    Args:
        transport: where frames come from and go to.
        router: handlers for incoming requests and notifications.
        name: used in log lines only.
        default_timeout: seconds an outgoing request waits for its answer.
    """

    def __init__(self, transport: Transport, router: Router, *, name: str, default_timeout: float = 60.0) -> None:
        self._transport = transport
        self._router = router
        self._name = name
        self._default_timeout = default_timeout
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._closed = False
        self._task_group: asyncio.TaskGroup | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    async def _send(self, message: Any) -> None:
        if self._closed:
            raise ConnectionClosedError(f"{self._name}: connection closed")
        try:
            await self._transport.write(encode_frame(message))
        except (ConnectionError, RuntimeError) as exc:
            self._closed = True
            raise ConnectionClosedError(f"{self._name}: connection closed") from exc

    async def notify(self, method: str, params: BaseModel | dict[str, Any] | None = None) -> None:
        """Send a notification; a closed connection drops it quietly (there is nobody to tell)."""
        try:
            await self._send({"jsonrpc": "2.0", "method": method, "params": _params_json(params)})
        except ConnectionClosedError:
            logger.debug("%s: dropped notification %s on a closed connection", self._name, method)

    @overload
    async def request(
        self,
        method: str,
        params: BaseModel | dict[str, Any] | None,
        result_type: type[R],
        *,
        timeout: float | None = None,
    ) -> R: ...

    @overload
    async def request(
        self,
        method: str,
        params: BaseModel | dict[str, Any] | None = None,
        result_type: None = None,
        *,
        timeout: float | None = None,
    ) -> Any: ...

    async def request(
        self,
        method: str,
        params: BaseModel | dict[str, Any] | None = None,
        result_type: type[R] | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        """Call `method` on the other side and wait for its answer.

        Returns:
            The result validated as `result_type`, or the raw JSON result when no type is given.

        Raises:
            JsonRpcError: the other side answered with an error (its code is kept).
            RequestTimeoutError: no answer within the timeout.
            ConnectionClosedError: the connection closed first.
        """
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": _params_json(params)})
            async with asyncio.timeout(self._default_timeout if timeout is None else timeout):
                result = await future
        except TimeoutError:
            raise RequestTimeoutError(f"{self._name}: {method} got no answer in time") from None
        finally:
            self._pending.pop(request_id, None)
        if result_type is None:
            return result
        return result_type.model_validate(result)

    async def serve(self) -> None:
        """Read frames until the other side closes; then fail every pending call."""
        try:
            async with asyncio.TaskGroup() as task_group:
                self._task_group = task_group
                while True:
                    try:
                        line = await read_frame(self._transport.reader)
                    except FrameTooLargeError as exc:
                        await self._answer_error(None, INVALID_REQUEST, str(exc))
                        continue
                    if line is None:
                        break
                    if line.strip():
                        await self._handle_line(line)
                self._fail_pending()
        finally:
            self._closed = True
            self._fail_pending()

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosedError(f"{self._name}: connection closed"))

    async def _answer_error(self, request_id: Any, code: int, message: str) -> None:
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except ConnectionClosedError:
            pass

    async def _handle_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            # jsonrpcserver answers -32700 from the raw text.
            self._spawn(self._dispatch(raw=line.decode("utf-8", errors="replace")))
            return
        if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            self._resolve(message)
        elif isinstance(message, dict) and "method" in message and "id" not in message:
            await self._dispatch(message=message)
        else:
            self._spawn(self._dispatch(message=message))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        assert self._task_group is not None
        self._task_group.create_task(coro)

    async def _dispatch(self, message: Any = None, raw: str | None = None) -> None:
        if raw is not None:
            response = await self._router.dispatch(raw=raw)
        else:
            response = await self._router.dispatch(message)
        if response is not None:
            try:
                await self._send(response)
            except ConnectionClosedError:
                logger.debug("%s: answer dropped, connection closed", self._name)

    def _resolve(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message.get("id"))
        if future is None or future.done():
            logger.warning("%s: answer to an unknown request id %r", self._name, message.get("id"))
            return
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                JsonRpcError(str(error.get("message", "error")), code=int(error.get("code", 0)), data=error.get("data"))
            )
        else:
            future.set_result(message.get("result"))
