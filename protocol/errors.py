"""Error codes and the one function that maps an exception to a JSON-RPC error object.

Every request a peer receives is answered. A typed `JsonRpcError` carries its own code; a pydantic
`ValidationError` becomes INVALID_PARAMS with a short message and no pydantic text; anything else is
logged with its traceback on stderr and becomes INTERNAL_ERROR, with no stack text on the wire.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from pydantic import ValidationError

__all__ = [
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "REQUEST_TIMEOUT",
    "CONNECTION_CLOSED",
    "NOT_INITIALIZED",
    "NOT_FOUND",
    "CONFLICT",
    "BUSY",
    "KERNEL_UNAVAILABLE",
    "PROVIDER_ERROR",
    "SANDBOX_DENIED",
    "SENSITIVE_CONTENT",
    "RUN_FAILED",
    "STORAGE_FULL",
    "STORAGE_ERROR",
    "CORRUPT_FILE",
    "STORAGE_FAILED",
    "NOT_AUTHORIZED",
    "UNKNOWN_PREFIX",
    "JsonRpcError",
    "InvalidParamsError",
    "InternalError",
    "RequestTimeoutError",
    "ConnectionClosedError",
    "error_object_from_exception",
    "describe_validation_error",
]

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
"""The line was not valid JSON."""
INVALID_REQUEST = -32600
"""The JSON was not a valid JSON-RPC request object."""
METHOD_NOT_FOUND = -32601
"""No handler for the method."""
INVALID_PARAMS = -32602
"""The params did not match the method's model."""
INTERNAL_ERROR = -32603
"""A bug: the traceback is on the server's stderr."""

REQUEST_TIMEOUT = -32001
"""A call got no answer in time."""
CONNECTION_CLOSED = -32002
"""The peer went away before it answered."""
NOT_INITIALIZED = -32003
"""A method was called before `initialize`."""
NOT_FOUND = -32004
"""The agent, run or record named does not exist."""
CONFLICT = -32005
"""The request clashes with existing state (a name already taken, a stale version)."""
BUSY = -32006
"""The agent already has a run in flight."""
KERNEL_UNAVAILABLE = -32007
"""The kernel process is down or restarting."""
PROVIDER_ERROR = -32008
"""The model provider refused or failed."""
SANDBOX_DENIED = -32009
"""The sandbox policy refused the action."""
SENSITIVE_CONTENT = -32010
"""The sensitive-content gate refused the write."""
RUN_FAILED = -32011
"""A run ended with an error that has no more specific code."""
STORAGE_FULL = -32012
"""The disk (or quota) is full: nothing was stored; `data.path` names the file."""
STORAGE_ERROR = -32013
"""The disk refused a write for another reason: nothing was stored; `data.path` names the file."""
CORRUPT_FILE = -32014
"""A state file could not be read (not valid JSON, not UTF-8, not the expected shape); `data.path` names it."""
STORAGE_FAILED = -32019
"""A file could not be written (disk full, quota, read-only): nothing was stored, and nothing was lost."""
NOT_AUTHORIZED = -32020
"""A socket client's `initialize` did not carry the running host's token."""
UNKNOWN_PREFIX = -32030
"""The kernel does not hold the messages a request's `prefix` names (it restarted, or let them go): send them all."""


class JsonRpcError(Exception):
    """An error that reaches the wire with its own code. Subclasses fix `CODE`."""

    CODE: ClassVar[int] = INTERNAL_ERROR

    def __init__(self, message: str, *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.CODE if code is None else code
        self.data = data

    def to_object(self) -> dict[str, Any]:
        """The JSON-RPC `error` member for this exception."""
        obj: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            obj["data"] = self.data
        return obj


class InvalidParamsError(JsonRpcError):
    CODE = INVALID_PARAMS


class InternalError(JsonRpcError):
    CODE = INTERNAL_ERROR


class RequestTimeoutError(JsonRpcError):
    CODE = REQUEST_TIMEOUT


class ConnectionClosedError(JsonRpcError):
    CODE = CONNECTION_CLOSED


def describe_validation_error(exc: ValidationError) -> str:
    """A one-line summary of what was wrong with the params, without pydantic's text or input values."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "params"
        parts.append(f"{where}: {err.get('type', 'invalid')}")
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return "Invalid params (" + "; ".join(parts) + ")"


def error_object_from_exception(exc: BaseException) -> dict[str, Any]:
    """Map any exception raised by a handler to a JSON-RPC error object.

    Args:
        exc: what the handler raised.

    Returns:
        The `error` member of a response: `{code, message, data?}`.
    """
    if isinstance(exc, JsonRpcError):
        return exc.to_object()
    if isinstance(exc, ValidationError):
        return {"code": INVALID_PARAMS, "message": describe_validation_error(exc)}
    logger.error("unhandled error in a request handler", exc_info=exc)
    return {"code": INTERNAL_ERROR, "message": "Internal error (details are in the server log)"}
