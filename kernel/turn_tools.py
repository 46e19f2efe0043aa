"""The tools of one turn: the kernel's own local tools and the host's tools, behind one `execute`.

Local tools run here, each asking the sandbox policy itself. Host tools (memory, messaging) travel to
the host as a `tool.call` request; if the host fails or does not answer in time, the model gets an
error result and the turn goes on. An unknown tool name is an error result too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from kernel.loop import ToolOutcome
from kernel.providers.base import ToolCall, ToolDefinition
from protocol.errors import JsonRpcError

__all__ = ["CURRENT_CALL", "DECISION_NOTES", "LocalToolLike", "TurnTools", "HostToolCaller"]

logger = logging.getLogger(__name__)

HostToolCaller = Callable[[ToolCall], Awaitable[ToolOutcome]]

MAX_RESULT_CHARS = 200_000

CURRENT_CALL: ContextVar[ToolCall | None] = ContextVar("CURRENT_CALL", default=None)
"""The tool call being executed, so an approval request can name it."""

DECISION_NOTES: ContextVar[list[str] | None] = ContextVar("DECISION_NOTES", default=None)
"""Why the host answered a call's approval itself (nobody there to ask), added to the call's result."""


class LocalToolLike(Protocol):
    @property
    def definition(self) -> ToolDefinition: ...

    async def run(self, arguments: dict[str, Any], ctx: Any) -> Any:
        """Returns an object with `content: str` and `is_error: bool`."""
        ...


class TurnTools:
    """Implements `kernel.loop.ToolExecutor` for one turn.

    Args:
        local: the enabled local tools by name.
        context: what local tools need (policy, approvals, shells); passed through untouched.
        host_tools: the host-executed tools on offer.
        call_host: sends one call to the host and returns its outcome.
    """

    def __init__(
        self,
        local: Mapping[str, LocalToolLike],
        context: Any,
        host_tools: tuple[ToolDefinition, ...],
        call_host: HostToolCaller,
    ) -> None:
        self._local = dict(local)
        self._context = context
        self._host = {tool.name: tool for tool in host_tools if tool.name not in self._local}
        self._call_host = call_host
        self.definitions = tuple(tool.definition for tool in self._local.values()) + tuple(self._host.values())

    async def execute(self, call: ToolCall) -> ToolOutcome:
        if call.name in self._local:
            token, notes = CURRENT_CALL.set(call), DECISION_NOTES.set([])
            try:
                result = await self._local[call.name].run(call.arguments, self._context)
                said = DECISION_NOTES.get() or []
            except Exception:  # a tool bug must not end the turn; the model and the log both hear of it
                logger.exception("local tool %s failed", call.name)
                return ToolOutcome(f"error: the {call.name} tool failed unexpectedly", True)
            finally:
                CURRENT_CALL.reset(token)
                DECISION_NOTES.reset(notes)
            content = result.content + "".join(f"\n[{note}]" for note in said)
            return ToolOutcome(_capped(content), bool(result.is_error))
        if call.name in self._host:
            try:
                return await self._call_host(call)
            except JsonRpcError as exc:
                return ToolOutcome(f"error: {call.name} failed in the host: {exc.message}", True)
        known = ", ".join(sorted([*self._local, *self._host])) or "none"
        return ToolOutcome(f"error: there is no tool named {call.name!r} (available: {known})", True)


def _capped(content: str) -> str:
    if len(content) <= MAX_RESULT_CHARS:
        return content
    return content[:MAX_RESULT_CHARS] + f"\n[output cut at {MAX_RESULT_CHARS} characters]"
