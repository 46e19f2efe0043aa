"""An agent's recent conversation as ACP `session/update`s, for `session/load`: what the editor shows as history.

Pure: transcript events (the wire form of `agent.transcript`) in, updates out. A person's messages become user
chunks (each file attached to one an embedded resource again), a teammate's message a user chunk that names it,
the agent's text agent chunks, its tool calls tool calls with their results. Recall blocks, compaction summaries
and other bookkeeping are never shown. A call whose result never came (the run was cut) is shown as failed when
its run's end is replayed.
"""

from __future__ import annotations

from typing import Any

from acp import (
    embedded_text_resource,
    resource_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from desktop.acp.tool_calls import tool_finished, tool_started
from protocol.project_note import without_project_note

__all__ = ["REPLAY_EVENTS", "ReplayUpdate", "replay_updates"]

REPLAY_EVENTS = 200
"""How many of the newest transcript events a load replays: a bounded tail, not the agent's whole life."""

ReplayUpdate = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress


def _attached(attachment: dict[str, Any]) -> UserMessageChunk:
    """An attached file as the editor sent it: an embedded resource (a binary one is only named)."""
    uri, text, mime = str(attachment.get("uri", "")), attachment.get("text"), attachment.get("mimeType")
    if not isinstance(text, str):
        return update_user_message_text(f"[attached {uri}, not shown]")
    return update_user_message(resource_block(embedded_text_resource(uri, text, mime_type=mime)))


def replay_updates(events: list[dict[str, Any]], *, has_more: bool) -> list[ReplayUpdate]:
    """The updates that show `events` (oldest first); `has_more` says older events were left out."""
    updates: list[ReplayUpdate] = []
    if has_more:
        updates.append(update_agent_thought_text("(older messages of this agent are not shown here)"))
    calls: dict[str, tuple[str, dict[str, Any], str]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "user":
            said = without_project_note(str(event.get("text", "")))
            if said:
                updates.append(update_user_message_text(said))
            updates += [_attached(attachment) for attachment in event.get("attachments") or []]
        elif kind == "wake":
            sender = event.get("fromAgent") or "another agent"
            updates.append(update_user_message_text(f"(from {sender}) {event.get('text', '')}"))
        elif kind == "assistant":
            if event.get("text"):
                updates.append(update_agent_message_text(str(event["text"])))
            for call in event.get("toolCalls", []):
                arguments = call.get("arguments") or {}
                calls[call["id"]] = (call["name"], arguments, str(event.get("runId", "")))
                updates.append(tool_started(call["id"], call["name"], arguments))
        elif kind == "tool":
            known = calls.pop(str(event.get("toolCallId")), None)
            if known is not None:
                name, arguments, _ = known
                content = str(event.get("content", ""))
                is_error = bool(event.get("isError"))
                updates.append(tool_finished(str(event["toolCallId"]), name, arguments, content, is_error=is_error))
        elif kind == "ended":
            run_id = event.get("runId")
            for call_id in [cid for cid, (_, _, run) in calls.items() if run == run_id]:
                calls.pop(call_id)
                updates.append(update_tool_call(call_id, status="failed"))
            if event.get("reason") == "error":
                updates.append(update_agent_message_text(f"\n[the turn failed: {event.get('error') or 'error'}]"))
            elif event.get("reason") == "cancelled":
                updates.append(update_agent_message_text("\n[cancelled]"))
    return updates
