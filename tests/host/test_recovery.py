"""Start-up recovery closes exactly the runs a dead host left open, and leaves every other line alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host.recovery import HOST_STOPPED, close_open_runs, recover_data_dir
from host.store.transcript import Transcript


def _transcript(path: Path, *events: dict[str, Any]) -> Transcript:
    transcript = Transcript(path)
    for event in events:
        transcript.append(event)
    return transcript


def test_a_run_with_events_after_the_last_end_is_closed_with_its_own_id(tmp_path: Path) -> None:
    transcript = _transcript(
        tmp_path / "t.jsonl",
        {"type": "user", "text": "one"},
        {"type": "ended", "runId": "r1", "reason": "idle"},
        {"type": "user", "text": "two"},
        {"type": "context", "runId": "r2", "epoch": 1},
        {"type": "assistant", "runId": "r2", "text": "half"},
    )
    assert close_open_runs(transcript) == ["r2"]
    last = transcript.read_all()[-1]
    assert (last["type"], last["runId"], last["reason"], last["error"]) == ("ended", "r2", "error", HOST_STOPPED)
    assert close_open_runs(Transcript(tmp_path / "t.jsonl")) == [], "closing is done once"


def test_a_run_killed_right_after_its_message_is_closed_under_the_id_its_message_names(tmp_path: Path) -> None:
    transcript = _transcript(
        tmp_path / "t.jsonl",
        {"type": "user", "text": "one", "runId": "r1"},
        {"type": "ended", "runId": "r1", "reason": "error", "error": HOST_STOPPED},
        {"type": "user", "text": "one", "runId": "r2"},  # the next attempt, killed before any other line
    )
    assert close_open_runs(transcript) == ["r2"]
    assert [(e["type"], e["runId"]) for e in transcript.read_all()] == [
        ("user", "r1"),
        ("ended", "r1"),
        ("user", "r2"),
        ("ended", "r2"),
    ]


def test_a_message_written_before_messages_named_their_run_is_closed_under_a_new_run_id(tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", {"type": "user", "text": "never answered"})
    closed = close_open_runs(transcript)
    assert len(closed) == 1 and closed[0].startswith("run-")
    assert [e["type"] for e in transcript.read_all()] == ["user", "ended"]


def test_a_finished_transcript_and_a_line_written_after_its_own_end_are_left_alone(tmp_path: Path) -> None:
    events = (
        {"type": "user", "text": "one"},
        {"type": "ended", "runId": "r1", "reason": "cancelled"},
        {"type": "context", "runId": "r1", "epoch": 1},  # a preparation that finished after the cancel
    )
    path = tmp_path / "t.jsonl"
    _transcript(path, *events)
    before = path.read_bytes()
    assert close_open_runs(Transcript(path)) == []
    assert close_open_runs(_transcript(tmp_path / "empty.jsonl")) == []
    assert path.read_bytes() == before


def test_recovery_covers_every_agent_even_beside_a_broken_one(tmp_path: Path) -> None:
    for agent_id, profile in (("a1", b"\xff"), ("b1", b'{"name": "B"}')):
        directory = tmp_path / "agents" / agent_id
        (directory / "memory").mkdir(parents=True)
        (directory / "profile.json").write_bytes(profile)
        _transcript(directory / "transcript.jsonl", {"type": "user", "text": f"to {agent_id}"})
    (tmp_path / "agents/b1/memory/.MEMORY.md.q1w2e3r4.tmp").write_text("half a view", encoding="utf-8")
    member = tmp_path / "works/trip/members/a1"
    member.mkdir(parents=True)
    _transcript(member / "transcript.jsonl", {"type": "context", "runId": "w1", "epoch": 1})
    (tmp_path / "works/trip/scratch").mkdir()
    (tmp_path / "works/trip/scratch/.plan.q1w2e3r4.tmp").write_text("a member's own", encoding="utf-8")
    recovered = recover_data_dir(tmp_path)
    assert recovered.closed_runs == {
        "agents/a1/transcript.jsonl": recovered.closed_runs["agents/a1/transcript.jsonl"],
        "agents/b1/transcript.jsonl": recovered.closed_runs["agents/b1/transcript.jsonl"],
        "works/trip/members/a1/transcript.jsonl": ["w1"],
    }
    assert recovered.temps_removed == 1
    assert (tmp_path / "works/trip/scratch/.plan.q1w2e3r4.tmp").exists()
    assert recover_data_dir(tmp_path).closed_runs == {}


def test_a_wake_whose_run_never_ended_is_closed_too(tmp_path: Path) -> None:
    transcript = _transcript(
        tmp_path / "t.jsonl",
        {"type": "ended", "runId": "r1", "reason": "idle"},
        {"type": "wake", "text": "ping", "fromAgent": "bob", "hops": 1},
    )
    assert close_open_runs(transcript) != []
    assert [e["type"] for e in transcript.read_all()] == ["ended", "wake", "ended"]
