"""Strict JSON for frames: what a line may decode to, and what may be written as one.

A frame holds UTF-8 JSON (RFC 8259) with no lone surrogate, no non-finite number and at most
`MAX_DEPTH` levels of nesting. `decode_frame` refuses a line that is not such text (`FrameDecodeError`,
answered with -32700), except where the message around a bad value can still be read: then that value (a
lone surrogate escape, a number too large for a double, nesting too deep) is replaced, at the message's top
level, by `UNSAFE` (`UNSAFE_TEXT` when it is a string), so the envelope check can answer with the message's
id and no bad value goes further.
`encode_frame` writes strict JSON only and raises `FrameEncodeError` for anything else.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final, NoReturn

from pydantic_core import from_json

__all__ = [
    "MAX_DEPTH",
    "UNSAFE",
    "UNSAFE_TEXT",
    "FrameDecodeError",
    "FrameEncodeError",
    "Unsafe",
    "UnsafeText",
    "decode_frame",
    "encode_frame",
]

MAX_DEPTH = 200
"""How many levels below the top a container may sit (the strict decoder's own limit, give or take one)."""


class FrameDecodeError(ValueError):
    """The line is not strict UTF-8 JSON (or holds nothing that can be read around its bad part)."""


class FrameEncodeError(ValueError):
    """A message holds something strict JSON cannot carry (a lone surrogate, NaN, infinity, a non-JSON type)."""


class Unsafe:
    """Stands in for a value that must go no further: a lone surrogate, a non-finite number, too deep a nesting."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSAFE"


class UnsafeText(Unsafe):
    """Stands in for a string that holds a lone surrogate: still a string, but not one that can go further."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSAFE_TEXT"


UNSAFE: Final = Unsafe()
"""The `Unsafe` value of a number, container or member name."""

UNSAFE_TEXT: Final = UnsafeText()
"""The `Unsafe` value of a string."""


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


# Used only on lines the strict decoder refused, to find the id around a bad value; NaN stays refused.
_LENIENT = json.JSONDecoder(parse_constant=_refuse_constant)


def _is_strict(value: Any, depth: int) -> bool:
    """True when `value` holds no lone surrogate, no non-finite number and no nesting past MAX_DEPTH.

    Iterative, so a value nested as deep as the lenient decoder allows cannot exhaust the stack.
    """
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not _encodes(item):
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict | list):
            if level > MAX_DEPTH:
                return False
            if isinstance(item, dict):
                for key in item:
                    if not key.isascii() and not _encodes(key):
                        return False
                stack.extend((member, level + 1) for member in item.values())
            else:
                stack.extend((member, level + 1) for member in item)
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _mark_message(message: Any, depth: int) -> tuple[Any, bool]:
    """`message` with each top-level member that is not strict JSON replaced by UNSAFE; True if any was."""
    if not isinstance(message, dict):
        return (message, False) if _is_strict(message, depth) else (_unsafe(message), True)
    marked: dict[Any, Any] = {}
    changed = False
    for key, member in message.items():
        if not _is_strict(key, depth):
            key, changed = UNSAFE, True  # an unreadable member name: the envelope check refuses the message
        if _is_strict(member, depth + 1):
            marked[key] = member
        else:
            marked[key], changed = _unsafe(member), True
    return marked, changed


def _unsafe(value: Any) -> Unsafe:
    return UNSAFE_TEXT if isinstance(value, str) else UNSAFE


def _mark(value: Any) -> tuple[Any, bool]:
    if isinstance(value, list):
        results = [_mark_message(item, 1) for item in value]
        return [item for item, _ in results], any(changed for _, changed in results)
    return _mark_message(value, 0)


def decode_frame(line: bytes) -> Any:
    """Decode one line as strict JSON.

    Returns:
        The JSON value; a member that is not strict JSON in an otherwise readable message is `UNSAFE`.

    Raises:
        FrameDecodeError: the line is not UTF-8, not JSON, or nothing in it can be read.
    """
    try:
        value = from_json(line, allow_inf_nan=False)
    except ValueError:
        return _decode_refused(line)
    if _has_infinity(value):
        value, _ = _mark(value)
    return value


def _has_infinity(value: Any) -> bool:
    """True when a number in `value` overflowed a double (the strict decoder reads `1e400` as infinity).

    A walk over the containers only, never the text: it costs the number of values, however long the strings.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float:
            if not math.isfinite(item):
                return True
        elif type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


def _decode_refused(line: bytes) -> Any:
    """A line the strict decoder refused: find the readable message around a lone surrogate or a deep nesting."""
    try:
        text = line.decode("utf-8")  # strict: a stray byte or a surrogate written as UTF-8 bytes is refused here
    except UnicodeDecodeError:
        raise FrameDecodeError("Parse error (the line is not valid UTF-8)") from None
    try:
        value = _LENIENT.decode(text)
    except (ValueError, RecursionError):
        raise FrameDecodeError("Parse error (the line is not JSON)") from None
    marked, changed = _mark(value)
    if not changed:
        raise FrameDecodeError("Parse error (the line is not strict JSON)")
    return marked


def encode_frame(message: Any) -> bytes:
    """Serialise one JSON-RPC message as a single line of strict JSON (newlines in strings are escaped).

    Raises:
        FrameEncodeError: the message holds a lone surrogate, NaN, an infinity or a value JSON has no form for.
    """
    try:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except (ValueError, TypeError, RecursionError) as exc:
        raise FrameEncodeError(f"the message cannot be written as strict JSON ({type(exc).__name__})") from None
