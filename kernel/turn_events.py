"""Where a turn's events go: to the host as notifications, or kept as text only.

`TurnNotifier` turns each of a run's events (streamed text, a finished message, tool progress) into the
`turn.delta`, `turn.message` and `turn.tool` notifications, in the order they happen. `TextCollector` keeps
only the streamed text, for a call that has no stream (`summarize`).
"""

from __future__ import annotations

from kernel.convert import to_usage_info
from kernel.loop import ToolOutcome
from kernel.providers.base import ToolCall, Usage
from protocol.models.kernel import TurnDeltaEvent, TurnMessageEvent, TurnToolEvent
from protocol.models.transcript import ToolCallInfo
from protocol.peer import JsonRpcPeer

__all__ = ["TurnNotifier", "TextCollector"]


class TurnNotifier:
    """`TurnEvents` for one run: each event becomes a notification to the host."""

    def __init__(self, peer: JsonRpcPeer, run_id: str) -> None:
        self._peer = peer
        self._run_id = run_id

    async def delta(self, text: str) -> None:
        await self._peer.notify("turn.delta", TurnDeltaEvent(run_id=self._run_id, text=text))

    async def message(self, text: str, calls: tuple[ToolCall, ...], usage: Usage | None, partial: bool) -> None:
        event = TurnMessageEvent(
            run_id=self._run_id,
            text=text,
            tool_calls=[ToolCallInfo(id=c.id, name=c.name, arguments=c.arguments) for c in calls],
            partial=partial,
            usage=to_usage_info(usage) if usage is not None else None,
        )
        await self._peer.notify("turn.message", event)

    async def tool_started(self, call: ToolCall) -> None:
        await self._peer.notify(
            "turn.tool",
            TurnToolEvent(
                run_id=self._run_id, tool_call_id=call.id, name=call.name, status="started", arguments=call.arguments
            ),
        )

    async def tool_completed(self, call: ToolCall, outcome: ToolOutcome) -> None:
        await self._peer.notify(
            "turn.tool",
            TurnToolEvent(
                run_id=self._run_id,
                tool_call_id=call.id,
                name=call.name,
                status="completed",
                arguments=call.arguments,
                content=outcome.content,
                is_error=outcome.is_error,
            ),
        )


class TextCollector:
    """`TurnEvents` that only keeps the text (for `summarize`, which has no tools and no stream)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    async def delta(self, text: str) -> None:
        self.parts.append(text)

    async def message(self, text: str, calls: tuple[ToolCall, ...], usage: Usage | None, partial: bool) -> None:
        return None

    async def tool_started(self, call: ToolCall) -> None:
        return None

    async def tool_completed(self, call: ToolCall, outcome: ToolOutcome) -> None:
        return None
