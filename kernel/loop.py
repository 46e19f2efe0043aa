"""The model loop: call the model, run the tools it asks for, repeat until it answers without tools.

Pure orchestration over three seams: a `Provider` (the model), a `ToolExecutor` (local and host tools)
and `TurnEvents` (where streamed text, messages and tool progress go). Cancellation keeps the text
streamed so far as a partial message. A provider error ends the turn with that error; a tool error is a
result the model sees, never the end of the turn.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from kernel.errors import ProviderError
from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelRequest,
    Provider,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolDefinition,
    Usage,
    UsageReport,
)
from kernel.providers.encodings import MessageEncodings
from protocol.models.transcript import EndReason, StopReason

__all__ = ["ToolOutcome", "ToolExecutor", "TurnEvents", "TurnOutcome", "run_turn"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    content: str
    is_error: bool = False


class ToolExecutor(Protocol):
    @property
    def definitions(self) -> tuple[ToolDefinition, ...]: ...

    async def execute(self, call: ToolCall) -> ToolOutcome:
        """Run one tool call; failures come back as an error outcome, never as an exception."""
        ...


class TurnEvents(Protocol):
    async def delta(self, text: str) -> None: ...

    async def message(self, text: str, calls: tuple[ToolCall, ...], usage: Usage | None, partial: bool) -> None: ...

    async def tool_started(self, call: ToolCall) -> None: ...

    async def tool_completed(self, call: ToolCall, outcome: ToolOutcome) -> None: ...


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    reason: EndReason
    usage: Usage
    error: str | None = None
    error_code: int | None = None
    stop_reason: StopReason | None = None
    """Why the model stopped its final answer, for a turn that ended `idle`."""


def _final_stop_reason(provider_reason: str) -> StopReason:
    """The providers' stop reasons, normalised: out of output tokens, a refusal, or a finished answer."""
    if provider_reason == "max_tokens":
        return "max_tokens"
    if provider_reason == "refusal":
        return "refusal"
    return "end_turn"


async def run_turn(
    provider: Provider,
    config: ModelConfig,
    messages: list[Message],
    tools: ToolExecutor,
    events: TurnEvents,
    *,
    max_steps: int,
    known: MessageEncodings | None = None,
) -> TurnOutcome:
    """Run one turn to its end; `messages` grows by the turn's own messages.

    Args:
        known: the encodings of the list `messages` starts with, for the provider to reuse.

    Raises:
        asyncio.CancelledError: the turn was cancelled; the partial message has been reported.
    """
    total = Usage()
    for _ in range(max_steps):
        text: list[str] = []
        calls: list[ToolCall] = []
        usage = Usage()
        stop = "end_turn"
        try:
            async for event in provider.stream(ModelRequest(config, tuple(messages), tools.definitions, known)):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    await events.delta(event.text)
                elif isinstance(event, ToolCallReady):
                    calls.append(event.call)
                elif isinstance(event, UsageReport):
                    usage = usage + event.usage
                elif isinstance(event, StreamEnd):
                    stop = event.stop_reason
                    break
        except asyncio.CancelledError:
            if text:
                await asyncio.shield(events.message("".join(text), (), usage, True))
            raise
        except ProviderError as exc:
            if text:
                await events.message("".join(text), (), usage, True)
            return TurnOutcome("error", total + usage, exc.message, exc.code)
        total = total + usage
        answer = "".join(text)
        await events.message(answer, tuple(calls), usage, False)
        messages.append(Message("assistant", answer, tuple(calls)))
        if not calls:
            return TurnOutcome("idle", total, stop_reason=_final_stop_reason(stop))
        for call in calls:
            await events.tool_started(call)
            outcome = await tools.execute(call)
            await events.tool_completed(call, outcome)
            messages.append(Message("tool", outcome.content, tool_call_id=call.id, name=call.name))
    return TurnOutcome("error", total, f"stopped after {max_steps} model calls without a final answer")
