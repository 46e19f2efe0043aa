"""What a peer sees of a transcript: messages and replies, never recall blocks, tool arguments or results."""

from __future__ import annotations

from host.together.peer_view import render_peer_transcript

EVENTS = [
    {"seq": 1, "type": "user", "text": "plan the trip"},
    {"seq": 2, "type": "context", "runId": "r1", "recall": "- [m-1] The user's passport number is private"},
    {
        "seq": 3,
        "type": "assistant",
        "runId": "r1",
        "text": "",
        "toolCalls": [{"id": "c1", "name": "memory_recall", "arguments": {"query": "passport"}}],
    },
    {"seq": 4, "type": "tool", "runId": "r1", "toolCallId": "c1", "name": "memory_recall", "content": "m-1 passport"},
    {"seq": 5, "type": "assistant", "runId": "r1", "text": "Booked for Lisbon."},
    {"seq": 6, "type": "compact", "summary": "earlier: the passport talk", "throughSeq": 2},
    {"seq": 7, "type": "wake", "fromAgent": "bob", "text": "any news?", "hops": 1},
    {"seq": 8, "type": "ended", "runId": "r2", "reason": "error", "error": "boom"},
]


def test_a_peer_sees_what_was_said_and_which_tools_were_used_but_no_memory() -> None:
    text = render_peer_transcript("ann", EVENTS, 10)
    assert "plan the trip" in text and "Booked for Lisbon." in text and "message from agent bob: any news?" in text
    assert "[used tools: memory_recall]" in text and "turn ended: error" in text
    assert "passport" not in text


def test_the_limit_keeps_the_newest_entries() -> None:
    text = render_peer_transcript("ann", EVENTS, 2)
    assert "plan the trip" not in text and "any news?" in text
    assert render_peer_transcript("ann", [], 5) == "ann's transcript has nothing to show yet."
