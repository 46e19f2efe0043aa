"""The transcript: dense seqs, fsynced appends, torn-tail repair, backward pages."""

from __future__ import annotations

import json
import os
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


def test_read_after_gives_only_the_lines_appended_since_a_mark(tmp_path: Path) -> None:
    """Issue 22.12: a reader that keeps what it read reads only what was appended since."""
    transcript = _fill(tmp_path / "transcript.jsonl", 3)
    events, mark = transcript.context_at()
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert transcript.read_after(mark) == ([], mark)
    transcript.append({"type": "user", "text": "four"})
    appended = transcript.read_after(mark)
    assert appended is not None and [e["text"] for e in appended[0]] == ["four"]
    assert transcript.read_after(appended[1]) == ([], appended[1])


def test_a_line_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = _fill(path, 1)
    mark = transcript.mark()
    line = json.dumps({"type": "user", "text": "two", "seq": 2}).encode() + b"\n"
    with open(path, "ab") as f:
        f.write(line[:10])
        f.flush()
        halfway = transcript.read_after(mark)
        assert halfway is not None and halfway[0] == [] and halfway[1].size == mark.size
        f.write(line[10:])
    done = transcript.read_after(halfway[1])
    assert done is not None and [e["seq"] for e in done[0]] == [2]


def test_read_after_refuses_another_file_a_shorter_one_or_one_rewritten_in_place(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = _fill(path, 3)
    mark = transcript.mark()
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"message 1", b"#########"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert transcript.read_after(mark) is None  # the same size, a newer mtime: a line rewritten in place
    mark = transcript.mark()
    path.write_bytes(path.read_bytes()[: mark.size // 2])
    assert transcript.read_after(mark) is None  # shorter
    other = tmp_path / "other.jsonl"
    _fill(other, 5)
    mark = Transcript(path).mark()
    os.replace(other, path)
    assert transcript.read_after(mark) is None  # another file


def test_context_after_a_seq_is_the_context_above_it(tmp_path: Path) -> None:
    transcript = _fill(tmp_path / "transcript.jsonl", 6)
    transcript.append({"type": "compact", "summary": "s", "throughSeq": 4})
    transcript.append({"type": "user", "text": "eight"})
    context = transcript.since_last_compact()
    for seq in range(0, 9):
        expected = sorted((e for e in context if e["seq"] > seq), key=lambda e: e["seq"])
        assert transcript.context_after(seq) == expected
    assert [e["seq"] for e in transcript.context_backwards()] == [8, 7, 6, 5]
