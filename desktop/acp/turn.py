"""One prompt's run, from the host's events to the editor, until the run ends.

Streamed text becomes `agent_message_chunk`s, tool calls `tool_call` / `tool_call_update`s, each model call's
usage a `usage_update`. Every approval the host asks for becomes a `session/request_permission`, asked in a task
of its own so the stream goes on, and its answer is sent back as `agent.decideTool`: allow once / allow always /
reject once / reject always are Hearth's `allow_once`, `allow_always`, `deny`, `deny_always` (the last two kinds
are remembered by the host). A question still open when the run ends is dropped: the host has answered it `deny`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from acp import RequestError, text_block, tool_content, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
    UsageUpdate,
)

from desktop.acp.events import Followed, HostGone, RunEvent
from desktop.acp.host_link import HostLink
from desktop.acp.tool_calls import describe_tool, tool_finished, tool_started
from protocol.errors import ConnectionClosedError, JsonRpcError
from protocol.ids import Decision
from protocol.models.host import AgentDeltaEvent, AgentEndedEvent, AgentMessageEvent, AgentToolEvent

__all__ = ["PERMISSION_OPTIONS", "TurnFollower", "decision_for"]

logger = logging.getLogger(__name__)

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow this", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject this", kind="reject_always"),
]

_DECISIONS: dict[str, Decision] = {
    "allow_once": "allow_once",
    "allow_always": "allow_always",
    "reject_once": "deny",
    "reject_always": "deny_always",
}


def decision_for(response: RequestPermissionResponse) -> Decision:
    """Hearth's decision for the person's answer; a cancelled question or an unknown option is a `deny`."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        return _DECISIONS.get(outcome.option_id, "deny")
    return "deny"


class TurnFollower:
    """Shows one run of `agent_id` in the editor's session `session_id`.

    Args:
        client: the editor's side of the ACP connection.
        link: the host connection (for `agent.decideTool`).
        session_id: the ACP session.
        agent_id: the agent whose run it is.
        context_window: the agent's model window, the `size` of each usage update.
    """

    def __init__(self, client: Client, link: HostLink, session_id: str, agent_id: str, context_window: int) -> None:
        self._client = client
        self._link = link
        self._session_id = session_id
        self._agent_id = agent_id
        self._context_window = context_window
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}

    async def follow(self, queue: asyncio.Queue[Followed], run_id: str) -> AgentEndedEvent:
        """Show the run's events until it ends; returns how it ended.

        Raises:
            ConnectionClosedError: the host connection was lost before the run ended.
        """
        asking: list[asyncio.Task[None]] = []
        ended: AgentEndedEvent | HostGone
        async with asyncio.TaskGroup() as tasks:
            while True:
                event = await queue.get()
                if isinstance(event, HostGone) or (isinstance(event, AgentEndedEvent) and event.run_id == run_id):
                    ended = event
                    for task in asking:
                        task.cancel()
                    break
                if event.run_id != run_id:
                    continue
                if isinstance(event, AgentToolEvent) and event.status == "pending":
                    asking.append(tasks.create_task(self._ask(event)))
                else:
                    await self._show(event)
        if isinstance(ended, HostGone):
            raise ConnectionClosedError(ended.reason)
        return ended

    async def _show(self, event: RunEvent) -> None:
        if isinstance(event, AgentDeltaEvent):
            await self._client.session_update(self._session_id, update_agent_message_text(event.text))
        elif isinstance(event, AgentMessageEvent):
            usage = event.message.usage
            if usage is not None:
                used = usage.input_tokens + usage.output_tokens
                update = UsageUpdate(session_update="usage_update", used=used, size=self._context_window)
                await self._client.session_update(self._session_id, update)
        elif isinstance(event, AgentToolEvent) and event.status == "started":
            self._calls[event.tool_call_id] = (event.name, event.arguments)
            await self._client.session_update(
                self._session_id, tool_started(event.tool_call_id, event.name, event.arguments)
            )
        elif isinstance(event, AgentToolEvent) and event.status == "completed":
            name, arguments = self._calls.pop(event.tool_call_id, (event.name, event.arguments))
            finished = tool_finished(event.tool_call_id, name, arguments, event.content or "", is_error=event.is_error)
            await self._client.session_update(self._session_id, finished)

    async def _ask(self, event: AgentToolEvent) -> None:
        """Ask the person about one approval, then give the host the answer."""
        name, arguments = self._calls.get(event.tool_call_id, (event.name, {}))
        look = describe_tool(name, arguments)
        question = event.content or f"{event.action} {event.target}"
        tool_call = ToolCallUpdate(
            tool_call_id=event.tool_call_id,
            title=look.title,
            kind=look.kind,
            status="pending",
            locations=look.locations or None,
            content=[tool_content(text_block(question))],
            raw_input=arguments or None,
        )
        try:
            response = await self._client.request_permission(
                session_id=self._session_id, tool_call=tool_call, options=PERMISSION_OPTIONS
            )
            decision = decision_for(response)
        except (RequestError, ConnectionError) as exc:  # an editor that cannot ask: nothing runs unapproved
            logger.warning("the editor could not ask about %s (%s); refusing it", event.tool_call_id, exc)
            decision = "deny"
        params = {"agentId": self._agent_id, "toolCallId": event.tool_call_id, "decision": decision}
        try:
            await self._link.call("agent.decideTool", params)
        except JsonRpcError as exc:  # the run ended while the person decided; the host answered for them
            logger.info("the answer about %s came too late: %s", event.tool_call_id, exc.message)
