"""Encoded messages kept with the list they belong to, so a model request encodes only what is new.

A request to a provider holds every message of the conversation in the API's JSON. The kernel keeps each
session's list between turns (`kernel.conversations`) and the messages before a turn's are the same objects
from one turn to the next, so each one's JSON is kept beside it, per API format, and a request joins the
kept JSON of the list it starts with to the JSON of the messages the turn added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kernel.providers.base import Message

if TYPE_CHECKING:
    from kernel.providers.base import ModelRequest

__all__ = ["Encode", "MessageEncodings", "encode_messages"]

Encode = Callable[[Message], bytes]
"""One message as the JSON an API wants (the same message always gives the same bytes)."""


class MessageEncodings:
    """The JSON of each message of one list, per API format, encoded the first time a request asks for it.

    Args:
        messages: the list.
        inherited: per format, the JSON of a leading part of `messages` already encoded for another list.
    """

    def __init__(self, messages: tuple[Message, ...], inherited: dict[str, list[bytes]] | None = None) -> None:
        self.messages = messages
        self._parts = inherited or {}
        self._joined: dict[str, bytes] = {}

    def follow(self, keep: int, messages: tuple[Message, ...]) -> MessageEncodings:
        """The encodings of `messages`, a list whose first `keep` messages are this list's."""
        return MessageEncodings(messages, {name: parts[:keep] for name, parts in self._parts.items()})

    def joined(self, name: str, encode: Encode) -> bytes:
        """The JSON of every message in format `name`, joined by commas (the inside of a JSON array)."""
        joined = self._joined.get(name)
        if joined is None:
            parts = self._parts.setdefault(name, [])
            parts.extend(encode(message) for message in self.messages[len(parts) :])
            joined = self._joined[name] = b",".join(parts)
        return joined


def encode_messages(request: ModelRequest, name: str, encode: Encode) -> bytes:
    """`request.messages` in format `name`, joined by commas, reusing what `request.known` has encoded."""
    known = request.known
    if known is None or not _starts_with(request.messages, known.messages):
        return b",".join(encode(message) for message in request.messages)
    rest = [encode(message) for message in request.messages[len(known.messages) :]]
    return b",".join([known.joined(name, encode), *rest])


def _starts_with(messages: tuple[Message, ...], known: tuple[Message, ...]) -> bool:
    """Whether `messages` starts with the very objects of `known` (a request is built from its list, so its last
    message being in place stands for all of them)."""
    return 0 < len(known) <= len(messages) and messages[len(known) - 1] is known[-1]
