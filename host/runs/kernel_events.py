"""Kernel turn events, persisted as they arrive and passed on to the shell.

The kernel streams `turn.delta`, `turn.message`, `turn.tool` and `turn.ended` keyed by `runId`. Streamed
text is kept on the run (so a cancel can store it as a partial message); completed messages and tool
results are appended to the agent's transcript before the shell hears of them. Events for a run that is
no longer running are dropped: its end has already been written. A memory tool call's arguments are kept
with every secret the memory gate refuses withheld, so a secret the model tried to remember is stored nowhere.
"""

from __future__ import annotations

from typing import Any

from host.memory import MEMORY_TOOL_NAMES
from host.memory.gate import redact_arguments
from host.runs.scheduler import Notify, RunManager
from host.store.agents import AgentStore
from protocol.errors import RUN_FAILED
from protocol.models.host import AgentDeltaEvent, AgentMessageEvent, AgentToolEvent
from protocol.models.kernel import TurnDeltaEvent, TurnEndedEvent, TurnMessageEvent, TurnToolEvent
from protocol.models.transcript import AssistantEvent, ToolCallInfo, ToolResultEvent

__all__ = ["KernelEvents"]


def _kept(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return redact_arguments(arguments) if name in MEMORY_TOOL_NAMES else arguments


class KernelEvents:
    """Handlers for the kernel's turn notifications.

    Args:
        runs: the run manager whose runs the events belong to.
        store: the agent store (transcripts live there).
        notify: sends an event to the shell.
    """

    def __init__(self, runs: RunManager, store: AgentStore, notify: Notify) -> None:
        self._runs = runs
        self._store = store
        self._notify = notify

    async def delta(self, event: TurnDeltaEvent) -> None:
        run = self._runs.running(event.run_id)
        if run is not None:
            run.partial.append(event.text)
            await self._notify(
                "agent.delta", AgentDeltaEvent(agent_id=run.agent_id, run_id=run.run_id, text=event.text)
            )

    async def message(self, event: TurnMessageEvent) -> None:
        run = self._runs.running(event.run_id)
        if run is None:
            return
        run.partial.clear()
        calls = [ToolCallInfo(id=c.id, name=c.name, arguments=_kept(c.name, c.arguments)) for c in event.tool_calls]
        message = AssistantEvent(
            run_id=run.run_id, text=event.text, tool_calls=calls, partial=event.partial, usage=event.usage
        )
        stored = self._runs.transcript_of(run).append(message.model_dump(mode="json"))
        await self._notify(
            "agent.message",
            AgentMessageEvent(agent_id=run.agent_id, run_id=run.run_id, message=AssistantEvent.model_validate(stored)),
        )

    async def tool(self, event: TurnToolEvent) -> None:
        run = self._runs.running(event.run_id)
        if run is None:
            return
        if event.status == "completed":
            result = ToolResultEvent(
                run_id=run.run_id,
                tool_call_id=event.tool_call_id,
                name=event.name,
                content=event.content or "",
                is_error=event.is_error,
            )
            self._runs.transcript_of(run).append(result.model_dump(mode="json"))
        await self._notify(
            "agent.tool",
            AgentToolEvent(
                agent_id=run.agent_id,
                run_id=run.run_id,
                tool_call_id=event.tool_call_id,
                name=event.name,
                status=event.status,
                arguments=_kept(event.name, event.arguments),
                content=event.content,
                is_error=event.is_error,
            ),
        )

    async def ended(self, event: TurnEndedEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is not None:
            code = event.error_code if event.error_code is not None else RUN_FAILED
            await self._runs.end(
                run, event.reason, error=event.error, code=code, usage=event.usage, stop_reason=event.stop_reason
            )
