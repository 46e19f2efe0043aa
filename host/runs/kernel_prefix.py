"""What the kernel holds of each session's messages, so a turn or a summary sends only what follows them.

The host keeps, per session, the chain hashes of the list the kernel accepted in its last `turn.start` (the
kernel keeps that list). A new list goes as the longest prefix the two share, named by its count and chain hash, and the
messages after it; chains are prefix-closed (equal links mean equal lists up to there), so the shared part
is found by bisection, never by walking the list. A kernel that restarted or let the session go answers
UNKNOWN_PREFIX, and `PrefixLink` sends the same request again with the whole list. A kernel that comes up
again holds nothing, so every session starts whole.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from pydantic import BaseModel

from host.runs.run import KernelLink
from protocol.errors import UNKNOWN_PREFIX, JsonRpcError
from protocol.models.host import KernelState
from protocol.models.kernel import ChatMessage, MessagePrefix, SummarizeParams, TurnStartParams

__all__ = ["PrefixLink", "SentPrefixes"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)
Sent = TurnStartParams | SummarizeParams
"""A request that may send a prefix of its session's messages."""


def shared_count(held: list[str], chain: list[str]) -> int:
    """How many leading messages two lists share, from their chains (bisection: O(log n))."""
    low, high = 0, min(len(held), len(chain))
    while low < high:
        middle = (low + high + 1) // 2
        if held[middle - 1] == chain[middle - 1]:
            low = middle
        else:
            high = middle - 1
    return low


class SentPrefixes:
    """The chains of what each session's kernel side holds, and the whole lists of the requests in flight."""

    def __init__(self) -> None:
        self._held: dict[str, list[str]] = {}
        self._pending: dict[tuple[str, str], tuple[list[ChatMessage], list[str]]] = {}

    def split(
        self, method: str, session: str, messages: list[ChatMessage], chain: list[str]
    ) -> tuple[MessagePrefix | None, list[ChatMessage]]:
        """The prefix the kernel holds of `messages` (None: none) and the messages after it.

        Args:
            chain: the chain hashes of `messages`, or of a leading part of them.
        """
        count = shared_count(self._held.get(session, []), chain)
        self._pending[(method, session)] = (messages, chain)
        if count == 0:
            return None, messages
        return MessagePrefix(count=count, hash=chain[count - 1]), messages[count:]

    def whole(self, method: str, params: Sent) -> Sent | None:
        """`params` with its session's whole list in place of the prefix and what follows it (None: not kept)."""
        messages = self._pending.get((method, params.session or ""), (None, None))[0]
        if messages is None or params.prefix is None or messages[params.prefix.count :] != params.messages:
            return None
        return params.model_copy(update={"prefix": None, "messages": messages})

    def done(self, method: str, session: str, *, accepted: bool) -> None:
        """The request is answered; an accepted `turn.start`'s list is what the kernel holds for `session` now."""
        pending = self._pending.pop((method, session), None)
        if accepted and pending is not None and method == "turn.start":
            self._held[session] = pending[1]

    def forget(self, session: str) -> None:
        self._held.pop(session, None)
        self._pending.pop(("turn.start", session), None)
        self._pending.pop(("summarize", session), None)

    def forget_all(self) -> None:
        """The kernel is a new one: it holds nothing (requests in flight keep their whole lists)."""
        self._held.clear()


class PrefixLink:
    """The kernel as runs and summaries reach it: a request whose prefix the kernel does not hold goes again whole.

    Args:
        kernel: the kernel supervisor.
        prefixes: what the kernel holds, as far as this host sent it.
    """

    def __init__(self, kernel: KernelLink, prefixes: SentPrefixes) -> None:
        self._kernel = kernel
        self._prefixes = prefixes

    @property
    def state(self) -> KernelState:
        return self._kernel.state

    async def wait_up(self, timeout: float) -> bool:
        return await self._kernel.wait_up(timeout)

    async def request(self, method: str, params: BaseModel, result_type: type[R], *, timeout: float = 60.0) -> R:
        if not isinstance(params, Sent) or params.session is None:
            return await self._kernel.request(method, params, result_type, timeout=timeout)
        accepted = False
        try:
            answer = await self._sent(method, params, result_type, timeout)
            accepted = True
            return answer
        finally:
            self._prefixes.done(method, params.session, accepted=accepted)

    async def _sent(self, method: str, params: Sent, result_type: type[R], timeout: float) -> R:
        try:
            return await self._kernel.request(method, params, result_type, timeout=timeout)
        except JsonRpcError as exc:
            whole = self._prefixes.whole(method, params) if exc.code == UNKNOWN_PREFIX else None
            if whole is None:
                raise
            logger.info("the kernel does not hold the start of %s's messages; sending them all", params.session)
        return await self._kernel.request(method, whole, result_type, timeout=timeout)
