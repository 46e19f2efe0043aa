"""Compaction: when a turn's context passes 75% of the model's window, older history becomes a summary.

Pure planning here: estimate the size, choose what to summarise (everything before the message that
started the current turn), and write the one tool-less `summarize` request. The transcript is never
rewritten: the summary is appended as a `compact` event that stands in for what it covers.
"""

from __future__ import annotations

from typing import Any

from protocol.models.kernel import ChatMessage

__all__ = [
    "COMPACT_AT",
    "compaction_due",
    "estimate_tokens",
    "message_chars",
    "needs_compaction",
    "split_for_compaction",
    "compaction_messages",
    "render_line",
]

COMPACT_AT = 0.75
"""Compact when the estimated context passes this share of the model's window."""

_TOOL_OUTPUT_CHARS = 2000
_INSTRUCTION = (
    "You compress a conversation between a user and an AI agent so the agent can continue it. Write a "
    "faithful summary in plain prose and short lists: the user's goals and preferences, decisions made, "
    "facts learned (with file paths, names and numbers exactly as given), work done and its results, and "
    "what is still open. Do not invent anything. Write only the summary."
)


def message_chars(message: ChatMessage) -> int:
    """What one message counts towards the estimate: its characters plus a per-message overhead."""
    return len(message.content) + 16 + sum(len(call.name) + len(str(call.arguments)) for call in message.tool_calls)


def estimate_tokens(messages: list[ChatMessage]) -> int:
    """A cheap upper-leaning estimate: about four characters a token, plus per-message overhead."""
    return sum(message_chars(message) for message in messages) // 4


def compaction_due(tokens: int, context_window: int) -> bool:
    """Whether a context of `tokens` (estimated) passes the share of the window that calls for compaction."""
    return tokens > COMPACT_AT * context_window


def needs_compaction(messages: list[ChatMessage], context_window: int) -> bool:
    return compaction_due(estimate_tokens(messages), context_window)


def split_for_compaction(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(events to summarise, events to keep): the kept part starts at the latest user or wake message."""
    starts = [i for i, event in enumerate(events) if event.get("type") in ("user", "wake")]
    cut = starts[-1] if starts else len(events)
    return events[:cut], events[cut:]


def render_line(event: dict[str, Any]) -> str | None:
    """One transcript line as plain text (`user: ...`, `agent: ...`), or None for one that says nothing."""
    kind = event.get("type")
    if kind == "compact":
        return f"[summary of what came before]\n{event['summary']}"
    if kind == "user":
        return f"user: {event['text']}"
    if kind == "wake":
        return f"message from agent {event['fromAgent']}: {event['text']}"
    if kind == "assistant":
        calls = "".join(f"\n  (called {c['name']} with {c.get('arguments', {})})" for c in event.get("toolCalls", []))
        return f"agent: {event.get('text', '')}{calls}"
    if kind == "tool":
        content = event["content"]
        if len(content) > _TOOL_OUTPUT_CHARS:
            content = content[:_TOOL_OUTPUT_CHARS] + " [...]"
        return f"tool {event['name']} returned: {content}"
    return None


def compaction_messages(older: list[dict[str, Any]]) -> list[ChatMessage]:
    """The `summarize` request for `older` events."""
    lines = [line for line in (render_line(event) for event in older) if line]
    return [
        ChatMessage(role="system", content=_INSTRUCTION),
        ChatMessage(role="user", content="<conversation>\n" + "\n\n".join(lines) + "\n</conversation>"),
    ]
