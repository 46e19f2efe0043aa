"""The model's view of a conversation, rebuilt from the transcript for every turn.

Pure: events in, chat messages out. The latest `compact` summary stands in for everything before it.
A turn's recall block (rendered from memory for its `context` event) is attached to the message that
started that turn, so replaying the same transcript in one prompt epoch gives byte-identical messages.
A tool call with no recorded result (the kernel died mid-call) gets a stated "did not complete" result,
as providers require one per call. A run that ended before any reply (an error, a cancel, a host that
stopped) gets a stated note in the assistant's place, so the next message never follows the unanswered
one as a second user turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from host.runs.attachments import user_content
from protocol.models.kernel import ChatMessage
from protocol.models.transcript import ToolCallInfo

__all__ = ["NO_REPLY_NOTES", "build_messages", "wake_content"]

NO_REPLY_NOTES = {
    "idle": "[no reply]",
    "cancelled": "[cancelled before any reply]",
    "error": "[the turn failed before any reply]",
}
"""What stands in the assistant's place for a run that ended without one, by the run's end reason."""


def wake_content(event: dict[str, Any]) -> str:
    """A wake as the model reads it: a header saying which agent it is from (never the user), then the text."""
    peer, request, status = event["fromAgent"], event.get("requestId"), event.get("status")
    if request and status == "answered":
        header = f"[answer from agent {peer} to your request {request}; not from the user]"
    elif request and status:
        header = f"[your request {request} to agent {peer} ended without an answer: {status}; not from the user]"
    elif request:
        header = (
            f"[question from agent {peer}, request {request}; not from the user. Your final message of this turn "
            "is sent back as the answer, or call reply_to_agent]"
        )
    else:
        header = f"[message from agent {peer}; not from the user]"
    return f"{header}\n{event['text']}"


def _attach_recall(messages: list[ChatMessage], recall: str) -> None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            content = f"{messages[index].content}\n\n<memory-recall>\n{recall}\n</memory-recall>"
            messages[index] = messages[index].model_copy(update={"content": content})
            return


def _close_open_calls(messages: list[ChatMessage], open_calls: dict[str, str]) -> None:
    for call_id, name in open_calls.items():
        messages.append(
            ChatMessage(role="tool", tool_call_id=call_id, name=name, content="error: the tool call did not complete")
        )
    open_calls.clear()


def build_messages(
    system: list[ChatMessage], events: list[dict[str, Any]], recall: Mapping[int, str] | None = None
) -> list[ChatMessage]:
    """Chat messages for the model: the system prefix, then the conversation since the last compaction.

    Args:
        system: the system messages (the frozen prefix first, with its cache breakpoint set).
        events: transcript events, oldest first (as stored: camelCase dicts).
        recall: the recall text to attach, by the seq of its `context` event (rendered from memory; a
            block's stored text, from earlier versions, is never replayed).
    """
    recall = recall or {}
    messages = list(system)
    open_calls: dict[str, str] = {}
    answered = True  # whether the latest user or wake message has had an assistant message since
    for event in events:
        kind = event.get("type")
        if kind != "tool" and open_calls:
            _close_open_calls(messages, open_calls)
        if kind in ("user", "wake"):
            answered = False
        elif kind == "assistant" and (event.get("text") or event.get("toolCalls")):
            answered = True
        elif kind == "ended" and not answered:
            messages.append(ChatMessage(role="assistant", content=NO_REPLY_NOTES.get(event.get("reason", ""), "")))
            answered = True
            continue
        if kind == "compact":
            messages.append(
                ChatMessage(role="user", content=f"<summary of the earlier conversation>\n{event['summary']}")
            )
            messages.append(ChatMessage(role="assistant", content="Understood; I will continue from that summary."))
        elif kind == "user":
            messages.append(ChatMessage(role="user", content=user_content(event)))
        elif kind == "wake":
            messages.append(ChatMessage(role="user", name=event["fromAgent"], content=wake_content(event)))
        elif kind == "context" and event.get("seq") in recall:
            _attach_recall(messages, recall[event["seq"]])
        elif kind == "assistant":
            calls = [ToolCallInfo.model_validate(call) for call in event.get("toolCalls", [])]
            text = event.get("text", "")
            if event.get("partial"):
                text += "\n[interrupted]"
            if text or calls:
                messages.append(ChatMessage(role="assistant", content=text, tool_calls=calls))
            open_calls.update({call.id: call.name for call in calls})
        elif kind == "tool":
            open_calls.pop(event["toolCallId"], None)
            messages.append(
                ChatMessage(role="tool", tool_call_id=event["toolCallId"], name=event["name"], content=event["content"])
            )
    _close_open_calls(messages, open_calls)
    return messages
