"""Request dispatch: the only module that knows about `jsonrpcserver`.

A `Router` maps method names to async handlers that take a validated pydantic params model and return
a pydantic result model (or None for `{}`). It is given messages whose envelope `protocol.envelope` has
already checked (so jsonrpcserver's own schema pass is skipped); `jsonrpcserver` routes them and answers
unknown methods (-32601). Params are validated strictly (no bool for a number, no string for an int, in
nested models too); everything a handler raises goes through `error_object_from_exception`, so every
request gets exactly one well-formed answer. A batch runs `BATCH_GROUP` members at a time, so one line
holding a million calls never has a million of them running at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from protocol.errors import INVALID_PARAMS, error_object_from_exception

if TYPE_CHECKING:
    # jsonrpcserver (with jsonschema) and pydantic are imported when the first request arrives, not before:
    # a one-shot command that only asks the host never pays for them.
    from jsonrpcserver import Result
    from pydantic import BaseModel

__all__ = ["BATCH_GROUP", "Router", "Handler", "MethodTable"]

BATCH_GROUP = 64
"""How many members of one batch run at once."""

P = TypeVar("P", bound="BaseModel")
Handler = Callable[[Any], Awaitable["BaseModel | None"]]


def _given(messages: list[dict[str, Any]], _text: str) -> list[dict[str, Any]]:
    """The deserializer jsonrpcserver calls for a batch: the messages are decoded already."""
    return messages


def _already_checked(message: Any) -> Any:
    """The validator jsonrpcserver calls: a no-op, since `protocol.envelope` checked the envelope first."""
    return message


def _result_to_json(result: BaseModel | None) -> Any:
    if result is None:
        return {}
    return result.model_dump(mode="json", by_alias=True)


class _Method:
    """One registered handler as jsonrpcserver calls it: params validated strictly, every outcome a Result."""

    # jsonrpcserver binds the params to the method's signature on every call; a signature given here
    # spares inspect from rebuilding it each time (a fifth of a ping's dispatch time).
    __signature__ = inspect.Signature(
        [
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
        ]
    )
    __slots__ = ("_params_model", "_handler")

    def __init__(self, params_model: type[BaseModel], handler: Callable[[Any], Awaitable[BaseModel | None]]) -> None:
        self._params_model = params_model
        self._handler = handler

    async def __call__(self, *args: Any, **kwargs: Any) -> Result:
        from jsonrpcserver import Error, Success

        if args:
            return Error(INVALID_PARAMS, "Invalid params (params must be an object)")
        try:
            # strict at call time reaches nested models too; outbound models keep their lax defaults.
            params = self._params_model.model_validate(kwargs, strict=True)
            result = await self._handler(params)
        except Exception as exc:  # the dispatcher's top level: every request is answered
            err = error_object_from_exception(exc)
            if "data" in err:
                return Error(err["code"], err["message"], err["data"])
            return Error(err["code"], err["message"])
        return Success(_result_to_json(result))


class MethodTable(Protocol):
    """Anything methods can be added to: a `Router`, or a server that wraps each handler (e.g. an init guard)."""

    def add(self, name: str, params_model: type[P], handler: Callable[[P], Awaitable[BaseModel | None]]) -> None: ...


class Router:
    """Method name → (params model, handler). Handlers run with validated params."""

    def __init__(self) -> None:
        self._methods: dict[str, Callable[..., Awaitable[Result]]] = {}

    def add(self, name: str, params_model: type[P], handler: Callable[[P], Awaitable[BaseModel | None]]) -> None:
        """Register `handler` for `name`; a second registration of the same name replaces the first."""
        self._methods[name] = _Method(params_model, handler)

    def method(self, name: str, params_model: type[P]) -> Callable[[Callable[[P], Awaitable[Any]]], Any]:
        """Decorator form of `add`."""

        def register(handler: Callable[[P], Awaitable[Any]]) -> Callable[[P], Awaitable[Any]]:
            self.add(name, params_model, handler)
            return handler

        return register

    def names(self) -> list[str]:
        return sorted(self._methods)

    async def dispatch(self, message: dict[str, Any] | list[dict[str, Any]]) -> dict[str, Any] | list[Any] | None:
        """Answer one checked request or notification, or a batch of them.

        Args:
            message: a request object that passed `protocol.envelope.read_message`, or a list of such.

        Returns:
            The response object (or list, for a batch), or None when no answer is due (notifications).
        """
        from jsonrpcserver import async_dispatch_to_serializable
        from jsonrpcserver.async_dispatcher import dispatch_request
        from jsonrpcserver.dispatcher import create_request, to_response
        from jsonrpcserver.response import to_serializable_one
        from jsonrpcserver.sentinels import NOCONTEXT, NOID

        if isinstance(message, list):
            answers: list[Any] = []
            for start in range(0, len(message), BATCH_GROUP):
                group = message[start : start + BATCH_GROUP]
                answered = await async_dispatch_to_serializable(
                    "", self._methods, deserializer=partial(_given, group), validator=_already_checked
                )
                if isinstance(answered, list):
                    answers.extend(answered)
            return answers or None
        # One request takes jsonrpcserver's own per-request path, without the task its batch gather adds.
        request = create_request(message)
        _, result = await dispatch_request(self._methods, NOCONTEXT, request)
        if request.id is NOID:
            return None
        return to_serializable_one(to_response(request, result))
