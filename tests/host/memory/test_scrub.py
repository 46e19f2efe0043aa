"""Erased text leaves transcripts in place: the memory tools' replies and stored recall always, the
conversation's own words only when asked (and counted otherwise); every line keeps its length and seq."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from host.memory import MEMORY_TOOL_NAMES, Evidence, MemoryStore
from host.memory.scrub import DERIVED_TOOLS, ERASED, TextScrub, scrub_file, scrub_transcript

CAT = 'The user\'s cat is called "Miso" ☕'
TEA = "The user drinks oolong tea."


def _lines(*events: dict[str, Any], ascii_only: bool = False) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=ascii_only, separators=(",", ":")).encode() + b"\n" for e in events)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


CONVERSATION = (
    {"seq": 1, "type": "user", "text": f"Remember: {CAT}"},
    {"seq": 2, "type": "context", "runId": "r1", "epoch": 1, "recall": f"- [m-1] {CAT}"},
    {
        "seq": 3,
        "type": "assistant",
        "runId": "r1",
        "text": "",
        "toolCalls": [
            {"id": "c1", "name": "memory_recall", "arguments": {"query": "cat"}},
            {"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}},
        ],
    },
    {
        "seq": 4,
        "type": "tool",
        "runId": "r1",
        "toolCallId": "c1",
        "name": "memory_recall",
        "content": f"2 record(s) matched 'cat', best first:\n1. [m-1] {CAT} (from human)\n2. [m-2] {TEA} (from human)",
    },
    {"seq": 5, "type": "tool", "runId": "r1", "toolCallId": "c2", "name": "read_file", "content": f"notes: {CAT}"},
    {"seq": 6, "type": "assistant", "runId": "r1", "text": f"You said: {CAT}. And {TEA}"},
    {"seq": 7, "type": "ended", "runId": "r1", "reason": "idle"},
)


def test_the_scrubbed_tools_are_the_memory_tools() -> None:
    assert DERIVED_TOOLS == set(MEMORY_TOOL_NAMES)


def test_derived_copies_lose_the_text_in_place_and_the_conversation_is_kept_and_counted(tmp_path: Path) -> None:
    for ascii_only in (False, True):
        path = tmp_path / f"transcript-{ascii_only}.jsonl"
        original = _lines(*CONVERSATION, ascii_only=ascii_only)
        path.write_bytes(original)
        found = scrub_transcript(path, TextScrub([CAT]), conversation=False)
        after = path.read_bytes()
        assert len(after) == len(original) and after.count(b"\n") == 7 and found.end == len(original)
        events = _events(path)
        assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6, 7]
        assert events[1]["recall"] is None and events[1]["runId"] == "r1"
        assert events[3]["content"].splitlines()[1] == f"1. [m-1] {ERASED} (from human)"
        assert TEA in events[3]["content"], "the other fact in the same reply stays"
        assert [events[0]["text"], events[4]["content"], events[5]["text"]] == [
            CONVERSATION[0]["text"],
            CONVERSATION[4]["content"],
            CONVERSATION[5]["text"],
        ]
        assert (found.derived, found.held, found.scrubbed) == (2, 3, 0)


def test_the_conversation_scrub_marks_every_span_and_leaves_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    original = _lines(*CONVERSATION)
    path.write_bytes(original)
    found = scrub_transcript(path, TextScrub([CAT]), conversation=True)
    assert len(path.read_bytes()) == len(original)
    assert b"Miso" not in path.read_bytes()
    events = _events(path)
    assert events[0]["text"] == f"Remember: {ERASED}"
    assert events[5]["text"] == f"You said: {ERASED}. And {TEA}"
    assert events[4]["content"] == f"notes: {ERASED}"
    assert events[2]["toolCalls"][0]["arguments"] == {"query": "cat"}
    assert (found.derived, found.held, found.scrubbed) == (2, 0, 3)
    again = scrub_transcript(path, TextScrub([CAT]), conversation=True)
    assert (again.derived, again.held, again.scrubbed) == (0, 0, 0) and path.read_bytes().count(b"\n") == 7


def test_a_pass_starts_where_asked_and_stops_before_a_line_still_being_written(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    head = _lines(*CONVERSATION[:4])
    partial = b'{"seq":8,"type":"tool","name":"memory_recall","content":"' + CAT.encode()
    path.write_bytes(head + partial)
    first = scrub_transcript(path, TextScrub([CAT]), conversation=False, start=len(_lines(*CONVERSATION[:3])))
    assert first.end == len(head) and first.derived == 1
    assert path.read_bytes().endswith(partial), "an unfinished line is not touched"
    assert json.loads(path.read_bytes().splitlines()[1])["recall"] is not None, "before `start`: not read"


def test_a_short_text_becomes_stars_and_a_file_that_is_no_transcript_loses_every_occurrence(tmp_path: Path) -> None:
    torn = tmp_path / "transcript.jsonl.torn"
    torn.write_bytes(b'{"seq":9,"type":"user","text":"Miso and ' + json.dumps(CAT)[1:-1].encode() + b"\n")
    assert scrub_file(torn, TextScrub(["Miso", CAT]))
    assert b"Miso" not in torn.read_bytes() and b"****" in torn.read_bytes()
    assert not scrub_file(torn, TextScrub(["Miso"])) and not scrub_file(tmp_path / "none", TextScrub(["Miso"]))
    # A torn tail is a write cut short: it may end in the middle of a text, which goes too.
    torn.write_bytes(b'{"seq":9,"type":"user","text":"hello\n{"seq":10,"type":"user","text":"The user\'s cat is cal\n')
    assert scrub_file(torn, TextScrub([CAT]), torn=True)
    cut = b"The user's cat is cal"
    assert torn.read_bytes().splitlines()[1] == b'{"seq":10,"type":"user","text":"' + b"[erased]".ljust(len(cut))
    assert torn.read_bytes().splitlines()[0] == b'{"seq":9,"type":"user","text":"hello', "other lines stay"
    assert scrub_transcript(tmp_path / "missing.jsonl", TextScrub(["Miso"]), conversation=True).end == 0


def test_an_erase_removes_the_fact_from_recall_text_an_earlier_version_stored(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            fact = await store.note("The user's locker is number 4471.", evidence=Evidence("human"))
            await store.note("The user likes tea.", evidence=Evidence("human"))
            transcript = agent_dir / "transcript.jsonl"
            transcript.write_bytes(
                _lines(
                    {"seq": 1, "type": "user", "text": "hello"},
                    {"seq": 2, "type": "context", "runId": "r", "recall": "- The user's locker is number 4471."},
                )
            )
            assert fact.fact is not None
            await store.erase(fact.fact.id)
            assert b"4471" not in transcript.read_bytes()
            assert [json.loads(line)["seq"] for line in transcript.read_bytes().splitlines()] == [1, 2]

    asyncio.run(main())
