"""`search_history`: an agent searches and reads its own earlier turns, including what a compaction dropped.

The transcript is append-only, so a compaction loses nothing on disk; this tool brings it back. It reads only
the calling run's own agent's transcript (the host opens it by the run's agent id): its arguments name no
agent and no path, and anything else is refused, so no other agent's transcript and no file is reachable. The
words are matched in Python (no program is run with them). Derived lines (`context`, `receipt`, summaries)
are not searched; a line an erase scrubbed is found only as scrubbed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from host.runs.compaction import render_line
from host.runs.host_tools import ArgumentsError, HostCall, parse_arguments, tool_spec
from host.runs.scheduler import RunOrigin
from host.runs.turns import offers_tools
from host.store.agents import Agent, AgentStore
from protocol.models.kernel import ToolCallResult, ToolSpec
from protocol.models.transcript import SearchHistoryArgs

__all__ = ["HistoryTools", "SEARCH_HISTORY", "history_lines"]

SEARCH_HISTORY = "search_history"
_LINE_CHARS = 600


def _said(event: dict[str, Any]) -> str | None:
    """A line as the agent reads it back; None for derived lines (`context`, `receipt`, summaries), for a reply
    that only called tools, and for this tool's own results (a search would find its own earlier answers)."""
    kind = event.get("type")
    if kind == "assistant":
        return f"you: {event['text']}" if event.get("text") else None
    if kind == "tool" and event.get("name") == SEARCH_HISTORY:
        return None
    return render_line(event) if kind in ("user", "wake", "tool") else None


def _clip(text: str, words: list[str]) -> str:
    """At most `_LINE_CHARS` characters of `text`, around the first word found."""
    text = " ".join(text.split())
    if len(text) <= _LINE_CHARS:
        return text
    at = min((text.lower().find(w) for w in words if w in text.lower()), default=0)
    start = max(0, at - _LINE_CHARS // 3)
    return ("[...] " if start else "") + text[start : start + _LINE_CHARS] + " [...]"


def history_lines(newest_first: Iterable[dict[str, Any]], args: SearchHistoryArgs) -> list[str]:
    """The lines the tool answers with, oldest first: matches of `query` (newest kept), or those from `fromSeq`."""
    words = [w.lower() for w in (args.query or "").split()]
    found: list[str] = []
    for event in newest_first:
        said = _said(event)
        seq = int(event.get("seq", 0))
        if args.from_seq is not None and seq < args.from_seq:
            break
        if said is None or (words and not all(w in said.lower() for w in words)):
            continue
        found.append(f"#{seq} {str(event.get('ts', ''))[:16]} {_clip(said, words)}")
        if words and len(found) >= args.limit:
            break
    # Newest matches for a search; the first lines after `fromSeq` for a read.
    return list(reversed(found[: args.limit])) if words else list(reversed(found))[: args.limit]


class HistoryTools:
    """Offers `search_history` to direct runs of a model that is offered tools (a Work run has its timeline)."""

    def __init__(self, store: AgentStore) -> None:
        self._store = store
        self._spec = tool_spec(SEARCH_HISTORY, SearchHistoryArgs)

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        return [self._spec] if origin.work_id is None and offers_tools(agent.settings.model) else []

    async def call(self, call: HostCall) -> ToolCallResult:
        try:
            args = parse_arguments(SearchHistoryArgs, call.arguments)
            if (args.query is None) == (args.from_seq is None):
                raise ArgumentsError("Invalid arguments: give exactly one of query and fromSeq")
        except ArgumentsError as exc:
            return ToolCallResult(content=f"{exc}.", is_error=True)
        transcript = self._store.transcript(call.agent.agent_id)  # the run's own agent, never an argument
        lines = history_lines(transcript.read_backwards(), args)
        if not lines:
            asked = f"the words {args.query!r}" if args.query else f"lines from #{args.from_seq}"
            return ToolCallResult(content=f"Your transcript has no {asked}.")
        return ToolCallResult(content="\n".join(lines))
