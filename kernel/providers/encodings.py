"""Encoded messages kept with the list they belong to, so a model request encodes only what is new.

A request to a provider holds every message of the conversation in the API's JSON. The kernel keeps each
session's list between turns (`kernel.conversations`) and the messages before a turn's are the same objects
from one turn to the next, so each one's JSON is kept beside it, per API format, and a request joins the
kept JSON of the list it starts with to the JSON of the messages the turn added. An API's JSON for a message
may depend on the messages before it (Anthropic merges a role's consecutive messages into one turn): an
`Encoder` folds over the list, and the state after each message is kept with its JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kernel.providers.base import Message

if TYPE_CHECKING:
    from kernel.providers.base import ModelRequest

__all__ = ["Encoder", "MessageEncodings", "encode_messages"]


class Encoder(Protocol):
    """One API's JSON for a list of messages, one message at a time: the pieces concatenate to the whole."""

    @property
    def name(self) -> str: ...

    def start(self) -> Any:
        """The state before the first message."""
        ...

    def step(self, state: Any, message: Message) -> tuple[bytes, Any]:
        """The message's piece of JSON after `state`, and the state after it (the same inputs, the same bytes)."""
        ...


class _Folded:
    """The pieces of one list in one format so far, and the state after each."""

    def __init__(self, pieces: list[bytes], states: list[Any]) -> None:
        self.pieces = pieces
        self.states = states
        self.joined: bytes | None = None


class MessageEncodings:
    """The JSON of each message of one list, per API format, encoded the first time a request asks for it.

    Args:
        messages: the list.
    """

    def __init__(self, messages: tuple[Message, ...]) -> None:
        self.messages = messages
        self._formats: dict[str, _Folded] = {}

    def follow(self, keep: int, messages: tuple[Message, ...]) -> MessageEncodings:
        """The encodings of `messages`, a list whose first `keep` messages are this list's."""
        following = MessageEncodings(messages)
        for name, folded in self._formats.items():
            following._formats[name] = _Folded(folded.pieces[:keep], folded.states[:keep])
        return following

    def encoded(self, encoder: Encoder) -> tuple[bytes, Any]:
        """The whole list's JSON pieces in `encoder`'s format, concatenated, and the state after the last."""
        folded = self._formats.setdefault(encoder.name, _Folded([], []))
        state = folded.states[-1] if folded.states else encoder.start()
        for message in self.messages[len(folded.pieces) :]:
            piece, state = encoder.step(state, message)
            folded.pieces.append(piece)
            folded.states.append(state)
            folded.joined = None
        if folded.joined is None:
            folded.joined = b"".join(folded.pieces)
        return folded.joined, state


def encode_messages(request: ModelRequest, encoder: Encoder) -> tuple[bytes, Any]:
    """`request.messages` in `encoder`'s format, reusing what `request.known` has encoded, and the state after."""
    known = request.known
    if known is not None and _starts_with(request.messages, known.messages):
        head, state = known.encoded(encoder)
        rest = request.messages[len(known.messages) :]
    else:
        head, state, rest = b"", encoder.start(), request.messages
    pieces = [head]
    for message in rest:
        piece, state = encoder.step(state, message)
        pieces.append(piece)
    return b"".join(pieces), state


def _starts_with(messages: tuple[Message, ...], known: tuple[Message, ...]) -> bool:
    """Whether `messages` starts with the very objects of `known` (a request is built from its list, so its last
    message being in place stands for all of them)."""
    return 0 < len(known) <= len(messages) and messages[len(known) - 1] is known[-1]
