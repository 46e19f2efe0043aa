"""`search_history` answers from the conversation's own lines only, newest matches first kept, oldest first shown."""

from __future__ import annotations

from typing import Any

from host.runs.history_tool import history_lines
from protocol.models.transcript import SearchHistoryArgs

EVENTS: list[dict[str, Any]] = [
    {"seq": 1, "type": "user", "text": "the red bike is in the shed"},
    {"seq": 2, "type": "context", "runId": "r1", "recalled": ["m-000000000001"]},
    {"seq": 3, "type": "receipt", "runId": "r1", "epoch": 1, "prefixHash": "sha256:bike", "section": []},
    {"seq": 4, "type": "assistant", "runId": "r1", "text": "Noted: the bike."},
    {"seq": 5, "type": "compact", "summary": "the bike talk", "throughSeq": 4},
    {"seq": 6, "type": "tool", "runId": "r2", "toolCallId": "c", "name": "read", "content": "a BIKE manual"},
    {
        "seq": 7,
        "type": "assistant",
        "runId": "r3",
        "toolCalls": [{"id": "s", "name": "search_history", "arguments": {}}],
    },
    {"seq": 8, "type": "tool", "runId": "r3", "toolCallId": "s", "name": "search_history", "content": "#1 bike"},
]


def _newest_first() -> list[dict[str, Any]]:
    return list(reversed(EVENTS))


def test_a_search_keeps_the_newest_matches_and_never_searches_derived_lines() -> None:
    lines = history_lines(_newest_first(), SearchHistoryArgs(query="bike", limit=2))
    assert [line.split()[0] for line in lines] == ["#4", "#6"]
    every = history_lines(_newest_first(), SearchHistoryArgs(query="bike"))
    assert [line.split()[0] for line in every] == ["#1", "#4", "#6"], (
        "not the context, receipt, summary, nor its own earlier answers"
    )


def test_reading_from_a_seq_gives_the_first_lines_after_it_and_all_words_must_match() -> None:
    lines = history_lines(_newest_first(), SearchHistoryArgs(from_seq=1, limit=2))
    assert [line.split()[0] for line in lines] == ["#1", "#4"]
    assert history_lines(_newest_first(), SearchHistoryArgs(query="bike lisbon")) == []
