"""Rebuilding the model's messages from a transcript."""

from __future__ import annotations

from host.runs.context import NO_REPLY_NOTES, build_messages
from protocol.models.kernel import ChatMessage

SYSTEM = [ChatMessage(role="system", content="You are A.", cache_breakpoint=True)]


def test_a_conversation_maps_to_messages_in_order_with_tool_results_paired() -> None:
    events = [
        {"type": "user", "seq": 1, "text": "find it"},
        {"type": "context", "seq": 2, "runId": "r1", "epoch": 3, "recalled": ["m-000000000001"]},
        {
            "type": "assistant",
            "seq": 3,
            "runId": "r1",
            "text": "",
            "toolCalls": [{"id": "c1", "name": "grep", "arguments": {"pattern": "it"}}],
        },
        {"type": "tool", "seq": 4, "runId": "r1", "toolCallId": "c1", "name": "grep", "content": "notes:1:it"},
        {"type": "assistant", "seq": 5, "runId": "r1", "text": "Found it."},
        {"type": "ended", "seq": 6, "runId": "r1", "reason": "idle"},
    ]
    messages = build_messages(SYSTEM, events, {2: "fact: it is in notes"})
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[1].content == "find it\n\n<memory-recall>\nfact: it is in notes\n</memory-recall>"
    assert messages[3].tool_call_id == "c1"
    assert build_messages(SYSTEM, events, {2: "fact: it is in notes"}) == messages


def test_a_recall_block_is_attached_only_as_rendered_now_and_stored_text_is_never_replayed() -> None:
    """Issue 11: recall text stored by earlier versions may name a removed fact; it is not replayed."""
    events = [
        {"type": "user", "seq": 1, "text": "first"},
        {"type": "context", "seq": 2, "runId": "r1", "epoch": 1, "recall": "User's cat is Miso"},
        {"type": "assistant", "seq": 3, "runId": "r1", "text": "ok"},
        {"type": "user", "seq": 4, "text": "second"},
        {"type": "context", "seq": 5, "runId": "r2", "epoch": 1, "recalled": ["m-000000000002"]},
    ]
    messages = build_messages(SYSTEM, events, {5: "User likes tea"})
    assert messages[1].content == "first"
    assert messages[3].content == "second\n\n<memory-recall>\nUser likes tea\n</memory-recall>"
    assert "Miso" not in "".join(m.content for m in messages)


def test_a_tool_call_without_a_result_gets_a_did_not_complete_result() -> None:
    events = [
        {"type": "user", "seq": 1, "text": "go"},
        {
            "type": "assistant",
            "seq": 2,
            "runId": "r1",
            "text": "",
            "toolCalls": [{"id": "c1", "name": "shell", "arguments": {}}],
        },
        {"type": "ended", "seq": 3, "runId": "r1", "reason": "error", "error": "kernel died"},
        {"type": "user", "seq": 4, "text": "again"},
    ]
    messages = build_messages(SYSTEM, events)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert "did not complete" in messages[3].content


def test_history_before_the_latest_compaction_is_replaced_by_its_summary() -> None:
    events = [
        {"type": "compact", "seq": 10, "summary": "We planned the trip.", "throughSeq": 9},
        {"type": "user", "seq": 11, "text": "and then?"},
        {"type": "wake", "seq": 12, "text": "done", "fromAgent": "b1", "hops": 1},
        {"type": "assistant", "seq": 13, "runId": "r", "text": "half", "partial": True},
    ]
    messages = build_messages(SYSTEM, events)
    assert "We planned the trip." in messages[1].content
    assert messages[4].name == "b1" and "agent b1" in messages[4].content
    assert messages[5].content == "half\n[interrupted]"


def test_a_run_that_ended_before_any_reply_leaves_a_note_not_two_user_turns_in_a_row() -> None:
    """Issue 10 item 10: a host killed mid-turn left the next turn sending two user messages in a row."""
    events = [
        {"type": "user", "seq": 1, "text": "first"},
        {"type": "context", "seq": 2, "runId": "r1", "epoch": 1},
        {"type": "ended", "seq": 3, "runId": "r1", "reason": "error", "error": "the host stopped"},
        {"type": "user", "seq": 4, "text": "second"},
        {"type": "ended", "seq": 5, "runId": "r2", "reason": "cancelled"},
        {"type": "user", "seq": 6, "text": "third"},
        {"type": "assistant", "seq": 7, "runId": "r3", "text": "answered"},
        {"type": "ended", "seq": 8, "runId": "r3", "reason": "idle"},
        {"type": "user", "seq": 9, "text": "fourth"},
    ]
    messages = build_messages(SYSTEM, events)
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[2].content == NO_REPLY_NOTES["error"]
    assert messages[4].content == NO_REPLY_NOTES["cancelled"]
    assert messages[6].content == "answered", "a run with a reply gets no note"
