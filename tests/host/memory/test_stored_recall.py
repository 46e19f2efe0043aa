"""Recall text stored by earlier versions leaves the transcript on an erase; the conversation stays."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from host.memory import Evidence, MemoryStore
from host.memory.stored_recall import scrub_stored_recall


def _lines(*events: dict[str, object]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for e in events)


def test_stored_recall_text_is_overwritten_in_place_and_every_line_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    original = _lines(
        {"seq": 1, "type": "user", "text": 'what about my cat "Miso"?'},
        {"seq": 2, "type": "context", "runId": "r1", "epoch": 1, "recall": "- [m-1] The user's cat is Miso ☕"},
        {"seq": 3, "type": "assistant", "runId": "r1", "text": "Miso is lovely."},
        {"seq": 4, "type": "context", "runId": "r2", "epoch": 1, "recall": None, "recalled": ["m-1"]},
    )
    path.write_bytes(original)
    assert scrub_stored_recall(path) == 1
    after = path.read_bytes()
    assert len(after) == len(original) and after.count(b"\n") == 4
    events = [json.loads(line) for line in after.splitlines()]
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert events[1]["recall"] is None and events[1]["runId"] == "r1"
    assert events[0]["text"] == 'what about my cat "Miso"?' and events[2]["text"] == "Miso is lovely."
    assert scrub_stored_recall(path) == 0
    assert scrub_stored_recall(tmp_path / "missing.jsonl") == 0


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
