"""Kernel turn events of one run, persisted in order and passed on to the shell.

The run's own task calls `record` for each `turn.delta`, `turn.message` and `turn.tool` from its feed.
Streamed text is kept on the run (so an end can store it as a partial message); completed messages and
tool results are appended to the run's transcript (in a worker thread) before the shell hears of them.
A message the disk refuses stays in the run's streamed text and the `StorageError` ends the run. A
memory tool call's arguments are kept with every secret the memory gate refuses withheld, so a secret
the model tried to remember is stored nowhere, and a memory tool's reply naming a record erased since it
was worked out is kept without that record's text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.memory import MEMORY_TOOL_NAMES, MemoryStore
from host.memory.gate import redact_arguments
from host.memory.scrub import without_erased
from host.runs.run import Run, TurnEvent
from host.runs.scheduler import Notify
from host.store.transcript import Transcript
from protocol.models.host import AgentDeltaEvent, AgentMessageEvent, AgentToolEvent
from protocol.models.kernel import TurnDeltaEvent, TurnMessageEvent, TurnToolEvent
from protocol.models.transcript import AssistantEvent, ToolCallInfo, ToolResultEvent

__all__ = ["KernelEvents"]


def _kept(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return redact_arguments(arguments) if name in MEMORY_TOOL_NAMES else arguments


class KernelEvents:
    """Records a run's kernel events.

    Args:
        transcript_of: where a run's lines go (its agent's transcript, or its Work's).
        notify: sends an event to the shell.
        memory_of: the memory a run's memory tools use (the agent's, or its Work's), if open.
    """

    def __init__(
        self,
        transcript_of: Callable[[Run], Transcript],
        notify: Notify,
        memory_of: Callable[[Run], MemoryStore | None] = lambda _: None,
    ) -> None:
        self._transcript_of = transcript_of
        self._notify = notify
        self._memory_of = memory_of

    async def record(self, run: Run, event: TurnEvent) -> None:
        """Persist and announce one event of `run`.

        Raises:
            StorageError: the transcript could not take a message or tool result; nothing of it was stored.
        """
        if isinstance(event, TurnDeltaEvent):
            await self._delta(run, event)
        elif isinstance(event, TurnMessageEvent):
            await self._message(run, event)
        else:
            await self._tool(run, event)

    async def _delta(self, run: Run, event: TurnDeltaEvent) -> None:
        run.partial.append(event.text)
        await self._notify("agent.delta", AgentDeltaEvent(agent_id=run.agent_id, run_id=run.run_id, text=event.text))

    async def _message(self, run: Run, event: TurnMessageEvent) -> None:
        calls = [ToolCallInfo(id=c.id, name=c.name, arguments=_kept(c.name, c.arguments)) for c in event.tool_calls]
        message = AssistantEvent(
            run_id=run.run_id, text=event.text, tool_calls=calls, partial=event.partial, usage=event.usage
        )
        stored = await self._transcript_of(run).append_async(message.model_dump(mode="json"))
        run.partial.clear()  # only now: until the message is on disk its text is the run's partial text
        await self._notify(
            "agent.message",
            AgentMessageEvent(agent_id=run.agent_id, run_id=run.run_id, message=AssistantEvent.model_validate(stored)),
        )

    async def _tool(self, run: Run, event: TurnToolEvent) -> None:
        content = event.content
        if content and event.name in MEMORY_TOOL_NAMES and (memory := self._memory_of(run)) is not None:
            content = without_erased(content, memory.is_erased)
        if event.status == "completed":
            result = ToolResultEvent(
                run_id=run.run_id,
                tool_call_id=event.tool_call_id,
                name=event.name,
                content=content or "",
                is_error=event.is_error,
            )
            await self._transcript_of(run).append_async(result.model_dump(mode="json"))
        await self._notify(
            "agent.tool",
            AgentToolEvent(
                agent_id=run.agent_id,
                run_id=run.run_id,
                tool_call_id=event.tool_call_id,
                name=event.name,
                status=event.status,
                arguments=_kept(event.name, event.arguments),
                content=content,
                is_error=event.is_error,
            ),
        )
