"""What the kernel holds of each session's messages, so a turn or a summary sends only what follows them.

The host keeps, per session, the chain hashes of the list it last sent in a `turn.start` (the kernel keeps
that list). A new list goes as the longest prefix the two share, named by its count and chain hash, and the
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
        self._whole: dict[tuple[str, str], list[ChatMessage]] = {}

    def split(
        self, method: str, session: str, messages: list[ChatMessage], chain: list[str]
    ) -> tuple[MessagePrefix | None, list[ChatMessage]]:
        """The prefix the kernel holds of `messages` (None: none) and the messages after it.

        A `turn.start`'s list is what the kernel will hold for `session` next; a summary's is not kept.
        """
        count = shared_count(self._held.get(session, []), chain)
        self._whole[(method, session)] = messages
        if method == "turn.start":
            self._held[session] = chain
        if count == 0:
            return None, messages
        return MessagePrefix(count=count, hash=chain[count - 1]), messages[count:]

    def whole(self, method: str, params: Sent) -> Sent | None:
        """`params` with its session's whole list in place of the prefix and what follows it (None: not kept)."""
        messages = self._whole.get((method, params.session or ""))
        if messages is None or params.prefix is None or messages[params.prefix.count :] != params.messages:
            return None
        return params.model_copy(update={"prefix": None, "messages": messages})

    def done(self, method: str, session: str) -> None:
        """The request is answered: its whole list is not needed again."""
        self._whole.pop((method, session), None)

    def forget(self, session: str) -> None:
        self._held.pop(session, None)
        self.done("turn.start", session)
        self.done("summarize", session)

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
        try:
            return await self._sent(method, params, result_type, timeout)
        finally:
            self._prefixes.done(method, params.session)

    async def _sent(self, method: str, params: Sent, result_type: type[R], timeout: float) -> R:
        try:
            return await self._kernel.request(method, params, result_type, timeout=timeout)
        except JsonRpcError as exc:
            whole = self._prefixes.whole(method, params) if exc.code == UNKNOWN_PREFIX else None
            if whole is None:
                raise
            logger.info("the kernel does not hold the start of %s's messages; sending them all", params.session)
        return await self._kernel.request(method, whole, result_type, timeout=timeout)
