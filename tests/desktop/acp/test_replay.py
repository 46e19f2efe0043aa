"""A loaded session's history: what of the transcript the editor is shown, and what it never is."""

from __future__ import annotations

from typing import Any

from desktop.acp.replay import replay_updates
from protocol.project_note import project_note

EVENTS: list[dict[str, Any]] = [
    {"seq": 1, "type": "user", "text": f"{project_note('/p')}\n\nsave the plan"},
    {"seq": 2, "type": "context", "runId": "r1", "recall": "RECALLED PRIVATE FACT"},
    {"seq": 3, "type": "assistant", "runId": "r1", "text": "Saving.", "toolCalls": [
        {"id": "c1", "name": "write_file", "arguments": {"path": "/p/plan.md", "content": "plan"}},
        {"id": "c2", "name": "shell", "arguments": {"command": "make"}},
    ]},
    {"seq": 4, "type": "tool", "runId": "r1", "toolCallId": "c1", "name": "write_file", "content": "wrote 4 bytes"},
    {"seq": 5, "type": "ended", "runId": "r1", "reason": "error", "error": "the kernel stopped"},
    {"seq": 6, "type": "wake", "text": "done?", "fromAgent": "bob"},
    {"seq": 7, "type": "compact", "summary": "SUMMARY TEXT", "throughSeq": 5},
    {"seq": 8, "type": "tool", "runId": "r0", "toolCallId": "c0", "name": "grep", "content": "orphan result"},
]  # fmt: skip


def _dump(events: list[dict[str, Any]], *, has_more: bool = False) -> list[dict[str, Any]]:
    return [
        u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in replay_updates(events, has_more=has_more)
    ]


def test_messages_calls_and_results_are_replayed_and_bookkeeping_is_not() -> None:
    updates = _dump(EVENTS)
    assert [u["sessionUpdate"] for u in updates] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "agent_message_chunk",
        "user_message_chunk",
    ]
    assert updates[0]["content"]["text"] == "save the plan"
    assert (updates[4]["toolCallId"], updates[4]["status"]) == ("c1", "completed")
    assert (updates[5]["toolCallId"], updates[5]["status"]) == ("c2", "failed"), "cut by its run's end"
    assert "the kernel stopped" in updates[6]["content"]["text"]
    assert updates[7]["content"]["text"] == "(from bob) done?"
    shown = str(updates)
    assert "RECALLED PRIVATE FACT" not in shown and "SUMMARY TEXT" not in shown and "orphan result" not in shown


def test_a_cut_tail_says_older_messages_are_not_shown() -> None:
    updates = _dump(EVENTS[:1], has_more=True)
    assert updates[0]["sessionUpdate"] == "agent_thought_chunk"
    assert _dump(EVENTS[:1])[0]["sessionUpdate"] == "user_message_chunk"


def test_an_attached_file_is_replayed_as_the_resource_the_editor_sent() -> None:
    attached = [{"uri": "file:///p/a.md", "text": "file body", "mimeType": "text/markdown"}, {"uri": "file:///p/b.bin"}]
    updates = _dump([{"seq": 1, "type": "user", "text": "see this", "attachments": attached}])
    assert [u["content"]["type"] for u in updates] == ["text", "resource", "text"]
    assert updates[1]["content"]["resource"] == {
        "uri": "file:///p/a.md",
        "text": "file body",
        "mimeType": "text/markdown",
    }
    assert updates[2]["content"]["text"] == "[attached file:///p/b.bin, not shown]"
