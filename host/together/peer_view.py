"""What one agent may see of another's transcript: what it was told, what it said, which tools it used.

Pure: events in, text out. Messages from the person and from peers, the assistant's replies and the
names of the tools it called are shown; never recall blocks (`context`), compaction summaries, tool
arguments or tool results, since those carry the peer's memory and whatever its tools read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["render_peer_transcript"]

_MAX_CHARS = 2000


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS] + " [...]"


def _line(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if kind == "user":
        return f"#{event['seq']} the user: {_clip(event['text'])}"
    if kind == "wake":
        peer = event.get("fromAgent", "?")
        if event.get("status"):
            return f"#{event['seq']} outcome of its request to {peer}: {event['status']}"
        return f"#{event['seq']} message from agent {peer}: {_clip(event['text'])}"
    if kind == "assistant":
        parts = []
        if event.get("text", "").strip():
            parts.append(_clip(event["text"]))
        names = [call.get("name", "?") for call in event.get("toolCalls", [])]
        if names:
            parts.append("[used tools: " + ", ".join(names) + "]")
        return f"#{event['seq']} it said: " + " ".join(parts) if parts else None
    if kind == "ended" and event.get("reason") != "idle":
        return f"#{event['seq']} its turn ended: {event.get('reason')}"
    return None


def render_peer_transcript(agent_id: str, events: list[dict[str, Any]], limit: int) -> str:
    """The newest `limit` visible entries of `agent_id`'s transcript, oldest first, as text for a model."""
    lines = [line for line in (_line(event) for event in events) if line is not None][-limit:]
    if not lines:
        return f"{agent_id}'s transcript has nothing to show yet."
    return f"{agent_id}'s transcript, the latest {len(lines)} entries:\n" + "\n".join(lines)
