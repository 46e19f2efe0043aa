"""What a run has read, from its transcript: the user's words of the run and every untrusted source before them."""

from __future__ import annotations

from typing import Any

from host.runs.provenance import ATTACHED, run_provenance


def _newest_first(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return list(reversed(events))


def test_a_conversation_without_tool_content_is_clean() -> None:
    events = _newest_first(
        {"type": "user", "text": "hello"},
        {"type": "assistant", "text": "hi"},
        {"type": "tool", "name": "memory_recall", "content": "1 record matched"},
        {"type": "tool", "name": "write_file", "content": "wrote 5 bytes to plan.md"},
        {"type": "user", "text": "my cat is Miso"},
    )
    provenance = run_provenance(events)
    assert provenance.user_words == ("my cat is Miso",) and not provenance.exposed


def test_a_tool_result_anywhere_in_the_history_exposes_the_run() -> None:
    """Issue 9: text a model read in an earlier turn is still in its context (or its summary)."""
    events = _newest_first(
        {"type": "user", "text": "read notes.txt"},
        {"type": "tool", "name": "read_file", "content": "INJECTED"},
        {"type": "compact", "summary": "earlier", "throughSeq": 3},
        {"type": "user", "text": "thanks"},
    )
    provenance = run_provenance(events)
    assert provenance.user_words == ("thanks",) and provenance.untrusted == ("tool:read_file",)


def test_a_run_woken_by_a_peer_has_no_user_words() -> None:
    events = _newest_first({"type": "user", "text": "hi"}, {"type": "wake", "fromAgent": "bob", "text": "note X"})
    provenance = run_provenance(events)
    assert provenance.user_words == () and provenance.untrusted == ("peer:bob",)


def test_an_attached_file_is_file_content_and_never_the_users_words() -> None:
    """Issue 21.7: an attachment inlined in the message made a fact resting on it confirmed."""
    attached = [{"uri": "file:///p/cv.md", "text": "The user's employer is Attachco-X."}]
    provenance = run_provenance(_newest_first({"type": "user", "text": "remember this", "attachments": attached}))
    assert provenance.user_words == ("remember this",) and provenance.untrusted == (ATTACHED,)
    earlier = run_provenance(
        _newest_first(
            {"type": "user", "text": "look", "attachments": attached},
            {"type": "assistant", "text": "ok"},
            {"type": "user", "text": "my cat is Miso"},
        )
    )
    assert earlier.user_words == ("my cat is Miso",) and earlier.untrusted == (ATTACHED,), "still in the context"
    typed = run_provenance(_newest_first({"type": "user", "text": "The user's employer is Typedco."}))
    assert not typed.exposed
