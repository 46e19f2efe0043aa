"""Each session's conversation as its last turn was sent, so the next request carries only what is new.

A request with a `prefix` continues the first `prefix.count` messages held for its session, named by the
chain hash after the last of them (`protocol.models.kernel.chain_hashes`); when they are not held (the
kernel restarted, let them go, or holds other ones) it is refused with UNKNOWN_PREFIX and the host sends
the whole list. A turn's whole list is kept for its session (a summary's is not: its instruction is no
part of the conversation); the least recently used are let go past `max_messages` in all. Each message is
converted once and its encodings for the providers are kept with it (`MessageEncodings`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from kernel.convert import to_message
from kernel.errors import UnknownPrefixError
from kernel.providers.base import Message
from kernel.providers.encodings import MessageEncodings
from protocol.models.kernel import ChatMessage, MessagePrefix, chain_hashes

__all__ = ["Conversation", "Conversations"]

MAX_MESSAGES = 200_000
"""How many messages the kernel holds, over all sessions, before it lets the least recently used go."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """A list of messages as the kernel holds it: converted, with its chain hashes and its encodings."""

    messages: tuple[Message, ...]
    chain: tuple[str, ...]
    encodings: MessageEncodings


EMPTY = Conversation((), (), MessageEncodings(()))


class Conversations:
    """The conversations held, by session."""

    def __init__(self, max_messages: int = MAX_MESSAGES) -> None:
        self._held: OrderedDict[str, Conversation] = OrderedDict()
        self._max_messages = max_messages

    def resolve(self, session: str | None, prefix: MessagePrefix | None, messages: list[ChatMessage]) -> Conversation:
        """The whole list a request names: the held messages its `prefix` names (if any), then `messages`.

        Raises:
            UnknownPrefixError: the prefix names messages this kernel does not hold for `session`.
        """
        base = self._held_prefix(session, prefix) if prefix is not None else EMPTY
        keep = prefix.count if prefix is not None else 0
        added = tuple(to_message(message) for message in messages)
        whole = base.messages[:keep] + added
        chain = base.chain[:keep] + tuple(chain_hashes(messages, base.chain[keep - 1] if keep else ""))
        return Conversation(whole, chain, base.encodings.follow(keep, whole))

    def _held_prefix(self, session: str | None, prefix: MessagePrefix) -> Conversation:
        held = self._held.get(session) if session is not None else None
        if session is None or held is None or held.chain[prefix.count - 1 : prefix.count] != (prefix.hash,):
            raise UnknownPrefixError(f"this kernel does not hold the first {prefix.count} messages of that session")
        self._held.move_to_end(session)
        return held

    def keep(self, session: str, conversation: Conversation) -> None:
        """Hold `conversation` as `session`'s, for the next request that names a prefix of it."""
        self._held[session] = conversation
        self._held.move_to_end(session)
        total = sum(len(held.messages) for held in self._held.values())
        while total > self._max_messages and len(self._held) > 1:
            _, dropped = self._held.popitem(last=False)
            total -= len(dropped.messages)

    def forget(self, session: str) -> None:
        self._held.pop(session, None)
