"""A two-way JSON-RPC 2.0 peer over one transport.

Both sides send requests, responses and notifications. Outgoing requests are correlated by id and time
out; incoming requests each run in their own task (owned by the peer's task group) so a slow handler
never blocks the reader, while incoming notifications run in arrival order. With `max_in_flight`, the
reader stops reading while that many requests wait for their answers to be written, so a caller that
sends without reading costs a bounded amount. Every line is decoded as strict JSON (`protocol.codec`),
a long one on a worker thread, and its envelope checked (`protocol.envelope`) before anything acts on it:
every request is answered, a malformed line gets its error answer (with its id whenever the id can be
read), and no line, whatever it holds, ends the session. Only strict JSON is ever written.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, overload

from protocol.codec import FrameDecodeError, FrameEncodeError, decode_frame, encode_frame
from protocol.dispatch import Router
from protocol.envelope import (
    Invalid,
    Notification,
    Request,
    Response,
    error_answer,
    read_head,
    read_message,
)
from protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    ConnectionClosedError,
    InternalError,
    JsonRpcError,
    RequestTimeoutError,
)
from protocol.framing import FrameTooLargeError, read_frame
from protocol.transport import Transport

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["DECODE_IN_THREAD_BYTES", "JsonRpcPeer", "NotificationHandler"]

logger = logging.getLogger(__name__)

DECODE_IN_THREAD_BYTES = 1024 * 1024
"""Frames at least this long are decoded on a worker thread. The JSON decoder holds the interpreter while it
builds the value, but the strictness checks that follow run in Python and let the loop take its turns."""
ABANDONED_KEPT = 256
"""How many given-up call ids are remembered, so that their late answers are told from strays."""

R = TypeVar("R", bound="BaseModel")
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


def _params_json(params: BaseModel | dict[str, Any] | None) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    return params.model_dump(mode="json", by_alias=True)


class JsonRpcPeer:
    """One end of a JSON-RPC connection.

    Args:
        transport: where frames come from and go to.
        router: handlers for incoming requests and notifications.
        name: used in log lines only.
        default_timeout: seconds an outgoing request waits for its answer.
        max_in_flight: how many incoming requests (a batch counts as one) may wait for their answers to be
            written before the reader stops reading; None for no bound.
    """

    def __init__(
        self,
        transport: Transport,
        router: Router,
        *,
        name: str,
        default_timeout: float = 60.0,
        max_in_flight: int | None = None,
    ) -> None:
        self._transport = transport
        self._router = router
        self._name = name
        self._default_timeout = default_timeout
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        # Ids of calls given up on (timed out or cancelled): their late answers are expected, not a fault.
        self._abandoned: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self._closed = False
        self._task_group: asyncio.TaskGroup | None = None
        self._max_in_flight = max_in_flight
        self._in_flight = 0
        self._room = asyncio.Event()
        self._room.set()

    @property
    def closed(self) -> bool:
        return self._closed

    async def _write(self, frame: bytes) -> None:
        if self._closed:
            raise ConnectionClosedError(f"{self._name}: connection closed")
        try:
            await self._transport.write(frame)
        except (ConnectionError, RuntimeError) as exc:
            self._closed = True
            raise ConnectionClosedError(f"{self._name}: connection closed") from exc

    async def _send(self, message: Any) -> None:
        """Write one outgoing request or notification.

        Raises:
            InternalError: the message cannot be written as strict JSON (nothing was written).
            ConnectionClosedError: the connection is closed.
        """
        try:
            frame = encode_frame(message)
        except FrameEncodeError as exc:
            raise InternalError(f"{self._name}: {exc}") from None
        await self._write(frame)

    async def notify(self, method: str, params: BaseModel | dict[str, Any] | None = None) -> None:
        """Send a notification; a closed connection drops it quietly (there is nobody to tell).

        A notification that cannot be written as strict JSON is dropped and logged, never half-written.
        """
        try:
            await self._send({"jsonrpc": "2.0", "method": method, "params": _params_json(params)})
        except ConnectionClosedError:
            logger.debug("%s: dropped notification %s on a closed connection", self._name, method)
        except InternalError:
            logger.error("%s: dropped notification %s: it cannot be written as strict JSON", self._name, method)

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
            if future.cancelled() or not future.done():  # a timeout cancels the future it waited on
                self._abandon(request_id)
        if result_type is None:
            return result
        return result_type.model_validate(result)

    async def serve(self) -> None:
        """Read frames until the other side closes; then fail every pending call."""
        try:
            async with asyncio.TaskGroup() as task_group:
                self._task_group = task_group
                while True:
                    await self._room.wait()
                    try:
                        line = await read_frame(self._transport.reader)
                    except FrameTooLargeError as exc:
                        await self._refuse(exc)
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

    async def _handle_line(self, line: bytes) -> None:
        try:
            await self._route_line(line)
        except Exception:  # the reader's top level: no line, whatever it holds, ends the session
            logger.exception("%s: a frame could not be handled", self._name)

    async def _refuse(self, refused: FrameTooLargeError) -> None:
        """A frame over the cap: answered to its id if its first bytes show it; an answer fails its call."""
        head = read_head(refused.head)
        if not head.answer:
            await self._answer(error_answer(head.id, INVALID_REQUEST, str(refused)))
        elif head.id is not None:
            self._resolve(Response(head.id, None, {"code": INVALID_REQUEST, "message": f"the answer: {refused}"}))

    async def _route_line(self, line: bytes) -> None:
        try:
            if len(line) < DECODE_IN_THREAD_BYTES:
                value = decode_frame(line)
            else:
                value = await asyncio.to_thread(decode_frame, line)
        except FrameDecodeError as exc:
            await self._answer(error_answer(None, PARSE_ERROR, str(exc)))
            return
        if isinstance(value, list):
            if value:
                self._spawn(self._batch(value))
            else:
                await self._answer(error_answer(None, INVALID_REQUEST, "Invalid request (an empty batch)"))
            return
        message = read_message(value)
        if isinstance(message, Request):
            self._spawn(self._call(message))
        elif isinstance(message, Notification):
            await self._router.dispatch(message.message)
        elif isinstance(message, Response):
            self._resolve(message)
        elif isinstance(message, Invalid):
            await self._answer(message.answer())
        else:
            logger.warning("%s: ignored %s", self._name, message.reason)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        assert self._task_group is not None
        self._in_flight += 1
        if self._max_in_flight is not None and self._in_flight >= self._max_in_flight:
            self._room.clear()
        self._task_group.create_task(self._counted(coro))

    async def _counted(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run one request (or batch) to its written answer, then let the reader read again if it had stopped."""
        try:
            await coro
        finally:
            self._in_flight -= 1
            self._room.set()

    async def _call(self, request: Request) -> None:
        try:
            answer = await self._router.dispatch(request.message)
        except Exception:  # a task of the peer's group: an escape would end the session
            logger.exception("%s: %s failed outside its handler", self._name, request.method)
            answer = _internal_error(request.id)
        if answer is not None:
            await self._answer(answer)

    async def _batch(self, items: list[Any]) -> None:
        """A batch: each member is checked alone; the answers (if any are due) go back as one array."""
        answers: list[Any] = []
        calls: list[dict[str, Any]] = []
        for item in items:
            message = read_message(item)
            if isinstance(message, Request | Notification):
                calls.append(message.message)
            elif isinstance(message, Response):
                self._resolve(message)
            elif isinstance(message, Invalid):
                answers.append(message.answer())
            else:
                logger.warning("%s: ignored %s in a batch", self._name, message.reason)
        if calls:
            try:
                dispatched = await self._router.dispatch(calls)
            except Exception:  # as in `_call`: answer every request of the batch instead of ending the session
                logger.exception("%s: a batch failed outside its handlers", self._name)
                dispatched = [_internal_error(call["id"]) for call in calls if "id" in call]
            if isinstance(dispatched, list):
                answers.extend(dispatched)
        if answers:
            await self._answer(answers)

    async def _answer(self, answer: dict[str, Any] | list[Any]) -> None:
        """Write an answer (or a batch of them); one that cannot be strict JSON becomes an internal error."""
        try:
            frame = encode_frame(answer)
        except FrameEncodeError:
            logger.error("%s: an answer is not strict JSON; sent an internal error instead", self._name)
            fixed = [_encodable(item) for item in answer] if isinstance(answer, list) else _encodable(answer)
            frame = encode_frame(fixed)
        try:
            await self._write(frame)
        except ConnectionClosedError:
            logger.debug("%s: answer dropped, connection closed", self._name)

    def _abandon(self, request_id: Any) -> None:
        self._abandoned[request_id] = None
        while len(self._abandoned) > ABANDONED_KEPT:
            self._abandoned.popitem(last=False)

    def _resolve(self, response: Response) -> None:
        future = self._pending.get(response.id)
        if future is None and response.id in self._abandoned:
            del self._abandoned[response.id]
            logger.debug("%s: a late answer to request id %r, given up on before", self._name, response.id)
            return
        if future is None or future.done():
            logger.warning("%s: answer to an unknown request id %r", self._name, response.id)
            return
        if response.error is not None:
            error = response.error
            future.set_exception(JsonRpcError(error["message"], code=error["code"], data=error.get("data")))
        else:
            future.set_result(response.result)


def _internal_error(request_id: Any) -> dict[str, Any]:
    return error_answer(request_id, INTERNAL_ERROR, "Internal error (details are in the server log)")


def _encodable(answer: Any) -> Any:
    """`answer` if it encodes; otherwise an internal error for its id (an id read from a strict frame encodes)."""
    try:
        encode_frame(answer)
    except FrameEncodeError:
        return _internal_error(answer.get("id") if isinstance(answer, dict) else None)
    return answer
