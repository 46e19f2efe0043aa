"""What a run has read, as the host recorded it: the user's own words, and every untrusted source before them.

Built from the transcript, the durable record of exactly what the model was given: tool results reach it
before the model's next step, so a memory call always sees what came before it. The model's context is
the conversation since the last compaction and, through the summary, everything before it, so any tool
result or message from another agent anywhere in the transcript exposes the run. Two kinds of result carry
nothing from outside and do not count: the memory tools' replies (only what is in memory, whose untrusted
facts are never shown) and write_file / edit_file receipts (a byte count and the path the model chose). The
user's words are the typed text of the message that started the run; the files attached to a message are file
content (source `file`), never the user's words, whatever they say.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from host.memory import MEMORY_TOOL_NAMES
from host.memory.trust import Provenance

__all__ = ["ATTACHED", "CONTENT_FREE_TOOLS", "run_provenance"]

ATTACHED = "file"
"""The source of what a person attached to a message: a file's content, as a file the agent read."""

CONTENT_FREE_TOOLS = frozenset({*MEMORY_TOOL_NAMES, "write_file", "edit_file"})
"""Tools whose results hold no content from outside the conversation."""


def run_provenance(newest_first: Iterable[dict[str, Any]]) -> Provenance:
    """The provenance of the run now in progress.

    Args:
        newest_first: the agent's transcript events, newest first (`Transcript.read_backwards()`).

    Returns:
        The user's words of the run (empty when a peer woke it) and the untrusted sources, newest first; the
        scan stops once the run's start and one untrusted source are found (enough to decide every write).
    """
    user_words: tuple[str, ...] | None = None
    untrusted: list[str] = []
    for event in newest_first:
        kind = event.get("type")
        source = None
        if kind == "tool" and event.get("name") not in CONTENT_FREE_TOOLS:
            source = f"tool:{event.get('name') or 'unknown'}"
        elif kind == "wake":
            source = f"peer:{event.get('fromAgent') or 'unknown'}"
        elif kind == "user" and event.get("attachments"):
            source = ATTACHED
        if source is not None and source not in untrusted:
            untrusted.append(source)
        if user_words is None and kind in ("user", "wake"):
            user_words = (str(event.get("text") or ""),) if kind == "user" else ()
        if user_words is not None and untrusted:
            break
    return Provenance(user_words or (), tuple(untrusted))
