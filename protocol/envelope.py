"""The JSON-RPC 2.0 envelope: what one decoded message is, checked before anything acts on it.

`read_message` sorts a decoded value into a request, a notification, a response, an invalid message (with
the error to answer, addressed to the message's id whenever that id can be read) or one to ignore (a
malformed answer nobody waits for: answering an answer could make two peers loop). Only a `Request` or
`Notification` reaches a handler, and only with a method name that is a string and params that are an
object or array of strict JSON. Ids are strings, numbers or null; a bool, list or object is no id. A method
name with a lone surrogate is a string that names no method: -32601, as any unknown name gets.
`read_head` finds the id of a frame too long to decode from its first bytes, when its leading members show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from protocol.codec import UNSAFE, FrameDecodeError, Unsafe, UnsafeText, decode_frame
from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

__all__ = [
    "Head",
    "Ignored",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "error_answer",
    "read_head",
    "read_message",
]

RequestId = str | int | float | None

_REQUEST_MEMBERS = frozenset({"jsonrpc", "id", "method", "params"})
_RESPONSE_MEMBERS = frozenset({"jsonrpc", "id", "result", "error"})
# A member name, then a scalar value and what follows it; strings without a closing quote do not match.
_OPEN = re.compile(rb"\s*\{")
_KEY = re.compile(rb'\s*("(?:[^"\\]|\\.)*")\s*:\s*')
_SCALAR = re.compile(rb'("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)\s*([,}])')
_NOT_STRICT = "Invalid params (not strict JSON: a lone surrogate, a number out of range or nesting too deep)"


@dataclass(frozen=True, slots=True)
class Request:
    """A call to answer. `message` is the checked object, as the dispatcher takes it."""

    id: RequestId
    method: str
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    """A call that gets no answer, whatever happens to it."""

    method: str
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    """An answer to one of our calls: `error` is `{code, message, data?}` with an int code, or None."""

    id: RequestId
    result: Any
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Invalid:
    """A message that is answered with an error, addressed to its id (None when no id can be read)."""

    id: RequestId
    code: int
    message: str

    def answer(self) -> dict[str, Any]:
        return error_answer(self.id, self.code, self.message)


@dataclass(frozen=True, slots=True)
class Ignored:
    """A message that gets no answer: a malformed answer, or a notification with params that cannot be used."""

    reason: str


Message = Request | Notification | Response | Invalid | Ignored


def error_answer(request_id: RequestId, code: int, message: str) -> dict[str, Any]:
    """The JSON-RPC error response for `request_id`."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_id(value: Any) -> bool:
    # bool is an int in Python, but `true` is no JSON-RPC id.
    return value is None or (type(value) in (str, int, float))


def read_message(value: Any) -> Message:
    """Sort one decoded message (not a batch) into what the peer does with it."""
    if not isinstance(value, dict):
        return Invalid(None, INVALID_REQUEST, "Invalid request (a message is a JSON object)")
    has_id = "id" in value
    request_id = value.get("id")
    readable = has_id and _is_id(request_id)
    if "method" not in value and ("result" in value or "error" in value):
        return _read_response(value, request_id) if readable else Ignored("an answer without a readable id")
    answer_to = request_id if readable else None
    if has_id and not readable:
        return Invalid(None, INVALID_REQUEST, "Invalid request (an id is a string, a number or null)")
    if value.get("jsonrpc") != "2.0":
        return Invalid(answer_to, INVALID_REQUEST, 'Invalid request ("jsonrpc" must be "2.0")')
    method = value.get("method")
    if not isinstance(method, str | UnsafeText):
        return Invalid(answer_to, INVALID_REQUEST, "Invalid request (method must be a string)")
    if not _REQUEST_MEMBERS.issuperset(value):
        return Invalid(answer_to, INVALID_REQUEST, "Invalid request (unknown members in the request object)")
    params = value.get("params", {})
    if isinstance(params, Unsafe):
        # A lone surrogate, a non-finite number or too deep a nesting must not reach a handler or the disk.
        if not has_id:
            return Ignored(f"a {method} notification with params that are not strict JSON")
        return Invalid(answer_to, INVALID_PARAMS, _NOT_STRICT)
    if not isinstance(params, dict | list):
        return Invalid(answer_to, INVALID_REQUEST, "Invalid request (params must be an object or an array)")
    if isinstance(method, UnsafeText):
        if not has_id:
            return Ignored("a notification whose method is not valid Unicode")
        return Invalid(answer_to, METHOD_NOT_FOUND, "Method not found (the name is not valid Unicode)")
    if has_id:
        return Request(request_id, method, value)
    return Notification(method, value)


def _read_response(value: dict[str, Any], request_id: RequestId) -> Response:
    """An answer; a malformed one still reaches its caller, as an error, so no call waits forever."""
    error = value.get("error")
    well_formed = (
        value.get("jsonrpc") == "2.0"
        and _RESPONSE_MEMBERS.issuperset(value)
        and ("result" in value) != ("error" in value)
        and not isinstance(value.get("result"), Unsafe)
    )
    if well_formed and "error" in value:
        well_formed = (
            isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str)
        )
    if not well_formed:
        return Response(request_id, None, {"code": INVALID_REQUEST, "message": "the answer was malformed"})
    return Response(request_id, value.get("result"), error)


@dataclass(frozen=True, slots=True)
class Head:
    """What the first bytes of a frame too long to decode show: its id (None when it cannot be read), and
    whether it is an answer (a `result` or `error` member and no `method` before the reading stopped)."""

    id: RequestId
    answer: bool


def read_head(head: bytes) -> Head:
    """Read the leading members of an object frame up to the first one whose value is not a plain scalar.

    The id is found when it comes before the long member, as `{"jsonrpc":"2.0","id":7,"method":...}` has
    it; an id after it, or one that is not strict JSON, is not read (None).
    """
    opened = _OPEN.match(head)
    if opened is None:
        return Head(None, False)
    seen: dict[Any, Any] = {}
    at = opened.end()
    while (key := _KEY.match(head, at)) is not None:
        name = _scalar(key.group(1))
        value = _SCALAR.match(head, key.end())
        if value is None:
            seen[name] = None  # a container (or a cut string): its name is known, its value is not read
            break
        seen[name] = _scalar(value.group(1))
        if value.group(2) == b"}":
            break
        at = value.end()
    request_id = seen.get("id")
    answer = "method" not in seen and ("result" in seen or "error" in seen)
    return Head(request_id if _is_id(request_id) else None, answer)


def _scalar(text: bytes) -> Any:
    try:
        return decode_frame(text)
    except FrameDecodeError:
        return UNSAFE
