"""The model's view of a conversation, built from the transcript's events.

Pure: events in, chat messages out, folded one event at a time (`ContextBuilder`), so a reader that keeps
the builder between turns only adds what is new. The latest `compact` summary stands in for everything before it.
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

from protocol.models.kernel import ChatMessage
from protocol.models.transcript import ToolCallInfo

__all__ = ["NO_REPLY_NOTES", "ContextBuilder", "build_messages", "wake_content", "with_recall"]

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


def with_recall(message: ChatMessage, recall: str) -> ChatMessage:
    """`message` with a recall block attached after its text."""
    return message.model_copy(update={"content": f"{message.content}\n\n<memory-recall>\n{recall}\n</memory-recall>"})


def _close_open_calls(messages: list[ChatMessage], open_calls: dict[str, str]) -> None:
    for call_id, name in open_calls.items():
        messages.append(
            ChatMessage(role="tool", tool_call_id=call_id, name=name, content="error: the tool call did not complete")
        )
    open_calls.clear()


class ContextBuilder:
    """The conversation's messages, built one transcript event at a time (what `build_messages` folds over).

    `messages` grows only by appending. A `context` event's recall block is not part of it: `anchors` says,
    by the event's seq, which message the block attaches to (the latest user-role one before it), so the
    text is rendered and attached at build time, from memory as it stands then.
    """

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.anchors: dict[int, int] = {}
        self._open_calls: dict[str, str] = {}
        self._answered = True  # whether the latest user or wake message has had an assistant message since

    def add(self, event: dict[str, Any]) -> None:
        """Fold one event (as stored: a camelCase dict) into the messages."""
        messages, open_calls = self.messages, self._open_calls
        kind = event.get("type")
        if kind != "tool" and open_calls:
            _close_open_calls(messages, open_calls)
        if kind in ("user", "wake"):
            self._answered = False
        elif kind == "assistant" and (event.get("text") or event.get("toolCalls")):
            self._answered = True
        elif kind == "ended" and not self._answered:
            messages.append(ChatMessage(role="assistant", content=NO_REPLY_NOTES.get(event.get("reason", ""), "")))
            self._answered = True
            return
        if kind == "compact":
            messages.append(
                ChatMessage(role="user", content=f"<summary of the earlier conversation>\n{event['summary']}")
            )
            messages.append(ChatMessage(role="assistant", content="Understood; I will continue from that summary."))
        elif kind == "user":
            messages.append(ChatMessage(role="user", content=event["text"]))
        elif kind == "wake":
            messages.append(ChatMessage(role="user", name=event["fromAgent"], content=wake_content(event)))
        elif kind == "context":
            self._anchor(event)
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

    def _anchor(self, event: dict[str, Any]) -> None:
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index].role == "user":
                self.anchors[int(event["seq"])] = index
                return

    def build(self, system: list[ChatMessage], recall: Mapping[int, str] | None = None) -> list[ChatMessage]:
        """The system prefix, the messages with their recall blocks attached, and a closing result for open calls."""
        messages = [*system, *self.messages]
        self.attach(messages, len(system), recall or {})
        return messages + self.closing()

    def attach(self, messages: list[ChatMessage], offset: int, recall: Mapping[int, str]) -> None:
        """Attach recall blocks, in the order of their seqs, to a copy of `messages` placed at `offset`."""
        for seq in sorted(recall):
            index = self.anchors.get(seq)
            if index is not None:
                messages[offset + index] = with_recall(messages[offset + index], recall[seq])

    def closing(self) -> list[ChatMessage]:
        """The stated results of the calls still open, as the conversation ends here."""
        closing: list[ChatMessage] = []
        _close_open_calls(closing, dict(self._open_calls))
        return closing


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
    builder = ContextBuilder()
    for event in events:
        builder.add(event)
    return builder.build(system, recall)
