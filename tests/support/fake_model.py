"""A model the e2e suites script exactly: chat replies in order, memory extraction and summaries answered apart.

`ChatServer` is the local fake OpenAI server (`tests.kernel.providers.fake_llm_server`) with one addition:
requests for memory extraction and for summaries of old log entries (recognised by their instructions) are
answered by callbacks and kept in `extractions` and `summaries`, so background work never consumes a
scripted chat reply. `say` and `call`
build chat replies; `system_text` and `recall_blocks` read what a recorded request sent the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.kernel.providers.fake_llm_server import (
    FakeModelServer,
    Recorded,
    Reply,
    error_reply,
    openai_chunk,
    openai_stream,
)

__all__ = [
    "ChatServer",
    "say",
    "call",
    "calls",
    "model_settings",
    "system_text",
    "recall_blocks",
    "EXTRACTION_MARK",
    "SUMMARY_MARK",
    "NO_OPERATIONS",
]

EXTRACTION_MARK = "You keep the long-term memory"
SUMMARY_MARK = "Summarise these log entries"
NO_OPERATIONS = '{"operations": []}'
"""What an extractor that found nothing to remember answers."""

_RECALL = re.compile(r"<memory-recall>\n(.*?)\n</memory-recall>", re.DOTALL)


def say(text: str, *, usage: dict[str, Any] | None = None) -> Reply:
    """A reply of plain text, followed by `usage` (an `openai_usage` chunk) when given."""
    tail = (usage,) if usage is not None else ()
    return openai_stream(openai_chunk({"content": text}), openai_chunk({}, "stop"), *tail)


def calls(*tool_calls: tuple[str, dict[str, Any]], prefix: str = "call") -> Reply:
    """A reply that asks for these tool calls, in order, with ids `<prefix>-0`, `<prefix>-1`, ..."""
    deltas = [
        {
            "index": index,
            "id": f"{prefix}-{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for index, (name, arguments) in enumerate(tool_calls)
    ]
    return openai_stream(openai_chunk({"tool_calls": deltas}), openai_chunk({}, "tool_calls"))


def call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Reply:
    """A reply that asks for one tool call with id `<call_id>-0` (by default `call-<name>-0`)."""
    return calls((name, arguments), prefix=call_id or f"call-{name}")


class ChatServer(FakeModelServer):
    """Plays chat replies in order (then `otherwise`, when given); extraction requests get `extract(request)`,
    summary requests `summarise(request)`.

    `extract` returns the extractor's text (or a whole reply); by default it finds nothing. `summarise` returns
    a summary's text (or a whole reply; it may be replaced between requests); by default a 400 error.
    `requests` holds the chat requests, `extractions` the extraction requests, `summaries` the summary
    requests and `received` all of them, in the order they came.
    """

    def __init__(
        self,
        extract: Callable[[Recorded], str | Reply] | None = None,
        *,
        otherwise: Reply | None = None,
        summarise: Callable[[Recorded], str | Reply] | None = None,
    ) -> None:
        super().__init__(otherwise=otherwise)
        self.extractions: list[Recorded] = []
        self.summaries: list[Recorded] = []
        self.received: list[Recorded] = []
        self._extract = extract or (lambda _: NO_OPERATIONS)
        self.summarise = summarise or (lambda _: error_reply(400, "no summaries here"))

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.received.append(recorded)
        if EXTRACTION_MARK in json.dumps(recorded.body):
            with self._lock:
                self.extractions.append(recorded)
            answer = self._extract(recorded)
            return say(answer) if isinstance(answer, str) else answer
        if SUMMARY_MARK in json.dumps(recorded.body):
            with self._lock:
                self.summaries.append(recorded)
            answer = self.summarise(recorded)
            return say(answer) if isinstance(answer, str) else answer
        return super()._next(recorded)

    def forget(self) -> None:
        """Let go of every request recorded so far (a long run would otherwise hold them all)."""
        with self._lock:
            self.requests.clear()
            self.extractions.clear()
            self.received.clear()

    def chats(self) -> list[dict[str, Any]]:
        """The bodies of every chat (non-extraction) request so far."""
        with self._lock:
            return [r.body for r in self.requests]


def model_settings(server: ChatServer, **extra: Any) -> dict[str, Any]:
    """Agent settings that point the agent at `server`."""
    return {"model": {"provider": "openai", "name": "m", "baseUrl": server.url}, **extra}


def system_text(body: dict[str, Any]) -> str:
    """Every system message of one request, joined."""
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def recall_blocks(body: dict[str, Any]) -> list[str]:
    """The per-turn recall blocks one request carries."""
    return [found for m in body["messages"] if m["role"] == "user" for found in _RECALL.findall(m["content"] or "")]
