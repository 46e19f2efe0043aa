"""The transcript: dense seqs, fsynced appends, torn-tail repair, backward pages."""

from __future__ import annotations

import json
from pathlib import Path

from host.store.transcript import Transcript


def _fill(path: Path, n: int) -> Transcript:
    transcript = Transcript(path)
    for i in range(n):
        transcript.append({"type": "user", "text": f"message {i}"})
    return transcript


def test_appends_get_dense_seqs_from_one_and_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    first = _fill(path, 3)
    assert first.last_seq == 3
    again = Transcript(path)
    assert again.last_seq == 3
    assert again.append({"type": "user", "text": "four"})["seq"] == 4
    assert [e["seq"] for e in Transcript(path).read_all()] == [1, 2, 3, 4]


def test_a_torn_last_line_is_moved_aside_and_every_complete_event_kept(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    _fill(path, 2)
    with path.open("ab") as f:
        f.write(b'{"seq":3,"type":"user","text":"half')
    reopened = Transcript(path)
    assert [e["text"] for e in reopened.read_all()] == ["message 0", "message 1"]
    assert reopened.append({"type": "user", "text": "next"})["seq"] == 3
    assert path.read_bytes().endswith(b"\n")
    assert (tmp_path / "transcript.jsonl.torn").read_bytes() == b'{"seq":3,"type":"user","text":"half\n'


def test_a_complete_file_is_left_exactly_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    _fill(path, 3)
    before = path.read_bytes()
    Transcript(path)
    assert path.read_bytes() == before
    assert not (tmp_path / "transcript.jsonl.torn").exists()


def test_an_unreadable_middle_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    _fill(path, 1)
    with path.open("ab") as f:
        f.write(b"garbage that is not json\n")
    transcript = Transcript(path)
    transcript.append({"type": "user", "text": "after"})
    assert [e["text"] for e in transcript.read_all()] == ["message 0", "after"]


def test_pages_walk_backwards_across_block_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    for i in range(500):
        transcript.append({"type": "user", "text": f"{i:04d} " + "x" * 300})
    newest, more = transcript.page(limit=10)
    assert [e["seq"] for e in newest] == list(range(491, 501)) and more
    older, more = transcript.page(before_seq=newest[0]["seq"], limit=10)
    assert [e["seq"] for e in older] == list(range(481, 491)) and more
    oldest, more = transcript.page(before_seq=3, limit=10)
    assert [e["seq"] for e in oldest] == [1, 2] and not more


def test_since_last_compact_starts_at_the_latest_summary(tmp_path: Path) -> None:
    transcript = _fill(tmp_path / "t.jsonl", 3)
    transcript.append({"type": "compact", "summary": "earlier", "throughSeq": 3})
    transcript.append({"type": "user", "text": "after"})
    assert [e["type"] for e in transcript.since_last_compact()] == ["compact", "user"]


def test_events_newer_than_a_compaction_but_written_before_it_are_kept(tmp_path: Path) -> None:
    transcript = _fill(tmp_path / "t.jsonl", 4)
    transcript.append({"type": "compact", "summary": "first", "throughSeq": 2})
    transcript.append({"type": "user", "text": "six"})
    transcript.append({"type": "compact", "summary": "second", "throughSeq": 3})
    context = transcript.since_last_compact()
    assert [(e["type"], e["seq"]) for e in context] == [("compact", 7), ("user", 4), ("user", 6)]
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["ts"].endswith("Z") for line in lines)
