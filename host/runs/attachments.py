"""How a person's attached files reach the model: as file content after their words, never as their words.

Each attachment (a user event's `attachments`) is fenced, with a fence longer than any run of backticks in it so
its text cannot close it, and named by its URI; a binary one is only named. The transcript keeps the typed text
and the attachments apart, so memory's support check (`host.runs.provenance`) counts only the typed words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["user_content"]


def _fence(text: str) -> str:
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _attachment(attachment: dict[str, Any]) -> str:
    uri = attachment.get("uri", "")
    text = attachment.get("text")
    if not isinstance(text, str):
        return f"[Attached {uri} ({attachment.get('mimeType') or 'unknown type'}): a binary file, not shown.]"
    fence = _fence(text)
    body = text if text.endswith("\n") else text + "\n"
    return f"[Attached file {uri}; its content, not the person's words:]\n{fence}\n{body}{fence}"


def user_content(event: dict[str, Any]) -> str:
    """The model's text of a user event: the typed words, then each attached file."""
    parts = [str(event.get("text") or "")]
    parts += [_attachment(attachment) for attachment in event.get("attachments") or [] if isinstance(attachment, dict)]
    return "\n\n".join(part for part in parts if part)
