"""A memory call's provenance, kept per agent: always what `run_provenance` gives over the whole transcript.

Issue 22.12: every memory call read the whole transcript back when no untrusted line was in it (the common
case for an agent that only talks), so a memory call cost more with every turn.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from host.runs.provenance import run_provenance
from host.runs.provenance_tracker import ProvenanceTracker
from host.store.transcript import Transcript

_TOOLS = ("read_file", "memory_recall", "memory_note", "write_file", "grep", "")


def _line(rng: random.Random) -> dict[str, object]:
    roll = rng.random()
    if roll < 0.25:
        return {"type": "user", "text": rng.choice(["hi", "my cat is Miso", ""])}
    if roll < 0.35:
        return {"type": "wake", "text": "note this", "fromAgent": rng.choice(["bob", "cy"])}
    if roll < 0.55:
        return {"type": "tool", "name": rng.choice(_TOOLS), "toolCallId": "c", "content": "x"}
    if roll < 0.6:
        return {"type": "compact", "summary": "before", "throughSeq": 1}
    return {"type": "assistant", "text": "ok"}


@pytest.mark.parametrize("seed", range(16))
def test_the_kept_provenance_is_what_a_read_of_the_whole_transcript_gives(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    tracker = ProvenanceTracker()
    for _ in range(150):
        transcript.append(_line(rng))
        roll = rng.random()
        if roll < 0.03:
            tracker = ProvenanceTracker()  # the host restarted
        elif roll < 0.05:
            with open(path, "ab") as f:
                f.write(b'{"type":"tool","name":"read_file"')  # torn: moved aside on the next open
            transcript = Transcript(path)
        if rng.random() < 0.5:
            assert tracker.provenance(transcript) == run_provenance(transcript.read_backwards())


def test_a_memory_call_reads_only_the_lines_appended_since_the_last(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "transcript.jsonl")
    tracker = ProvenanceTracker()
    for n in range(500):
        transcript.append({"type": "user", "text": f"message {n}"})
        transcript.append({"type": "assistant", "text": "ok"})
    first = tracker.provenance(transcript)
    assert first.user_words == ("message 499",) and not first.exposed
    transcript.append({"type": "user", "text": "remember my cat is Miso"})
    transcript.append({"type": "tool", "name": "read_file", "toolCallId": "c", "content": "INJECTED"})
    before = tracker.lines_read
    second = tracker.provenance(transcript)
    assert tracker.lines_read - before == 2
    assert second.user_words == ("remember my cat is Miso",) and second.untrusted == ("tool:read_file",)


def test_an_untrusted_line_long_before_the_run_still_exposes_it(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "transcript.jsonl")
    tracker = ProvenanceTracker()
    transcript.append({"type": "tool", "name": "read_file", "toolCallId": "c", "content": "INJECTED"})
    tracker.provenance(transcript)
    for n in range(50):
        transcript.append({"type": "user", "text": f"message {n}"})
        assert tracker.provenance(transcript).untrusted == ("tool:read_file",)
