"""Request dispatch: the only module that knows about `jsonrpcserver`.

A `Router` maps method names to async handlers that take a validated pydantic params model and return
a pydantic result model (or None for `{}`). `jsonrpcserver` answers parse errors (-32700), invalid
requests (-32600) and unknown methods (-32601); everything a handler raises goes through
`error_object_from_exception`, so every request gets exactly one well-formed answer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from jsonrpcserver import Error, Result, Success, async_dispatch_to_serializable
from pydantic import BaseModel

from protocol.errors import INVALID_PARAMS, error_object_from_exception

__all__ = ["Router", "Handler", "MethodTable"]

P = TypeVar("P", bound=BaseModel)
Handler = Callable[[Any], Awaitable[BaseModel | None]]

_NOT_PARSED = object()


def _result_to_json(result: BaseModel | None) -> Any:
    if result is None:
        return {}
    return result.model_dump(mode="json", by_alias=True)


class MethodTable(Protocol):
    """Anything methods can be added to: a `Router`, or a server that wraps each handler (e.g. an init guard)."""

    def add(self, name: str, params_model: type[P], handler: Callable[[P], Awaitable[BaseModel | None]]) -> None: ...


class Router:
    """Method name → (params model, handler). Handlers run with validated params."""

    def __init__(self) -> None:
        self._methods: dict[str, Callable[..., Awaitable[Result]]] = {}

    def add(self, name: str, params_model: type[P], handler: Callable[[P], Awaitable[BaseModel | None]]) -> None:
        """Register `handler` for `name`; a second registration of the same name replaces the first."""

        async def call(*args: Any, **kwargs: Any) -> Result:
            if args:
                return Error(INVALID_PARAMS, "Invalid params (params must be an object)")
            try:
                params = params_model.model_validate(kwargs)
                result = await handler(params)
            except Exception as exc:  # the dispatcher's top level: every request is answered
                err = error_object_from_exception(exc)
                if "data" in err:
                    return Error(err["code"], err["message"], err["data"])
                return Error(err["code"], err["message"])
            return Success(_result_to_json(result))

        self._methods[name] = call

    def method(self, name: str, params_model: type[P]) -> Callable[[Callable[[P], Awaitable[Any]]], Any]:
        """Decorator form of `add`."""

        def register(handler: Callable[[P], Awaitable[Any]]) -> Callable[[P], Awaitable[Any]]:
            self.add(name, params_model, handler)
            return handler

        return register

    def names(self) -> list[str]:
        return sorted(self._methods)

    async def dispatch(
        self, message: Any = _NOT_PARSED, *, raw: str | None = None
    ) -> dict[str, Any] | list[Any] | None:
        """Answer one incoming request, notification or batch.

        Args:
            message: the already-parsed JSON value, if the caller parsed it.
            raw: the line as text, when it could not be parsed (gives a -32700 answer).

        Returns:
            The response object (or list, for a batch), or None when no answer is due (notifications).
        """
        if message is _NOT_PARSED:
            text = raw if raw is not None else ""
            return await async_dispatch_to_serializable(text, self._methods, deserializer=json.loads)
        return await async_dispatch_to_serializable("", self._methods, deserializer=lambda _: message)
