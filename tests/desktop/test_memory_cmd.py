"""How `hearth memory` prints a record: a request to forget names the fact it would retract."""

from __future__ import annotations

from typing import Any

from desktop.memory_cmd import record_row, record_text


def format_record(record: dict[str, Any]) -> str:
    """The row `hearth memory AGENT list` prints for a record, as one line."""
    return "  ".join(record_row(record))


BASE = {"id": "m-aaaaaaaaaaaa", "source": "agent", "observedAt": "2026-01-01T00:00:00.000000Z"}


def test_a_request_to_forget_says_which_fact_it_would_retract() -> None:
    request = {**BASE, "op": "retract", "trust": "proposed", "status": "live", "replaces": "m-bbbbbbbbbbbb"}
    line = format_record({**request, "text": "The user's cat is Miso."})
    assert "forget m-bbbbbbbbbbbb: The user's cat is Miso." in line and "proposed" in line
    fact = format_record({**BASE, "op": "assert", "trust": "proposed", "status": "live", "text": "A fact."})
    assert "forget" not in fact and "A fact." in fact


def test_a_proposal_of_the_consolidation_pass_says_why_and_a_fact_reason_is_not_shown_as_one() -> None:
    reason = "stale: never recalled or shown since it was noted on 2026-01-01"
    request = {**BASE, "op": "retract", "trust": "proposed", "replaces": "m-bbbbbbbbbbbb", "reason": reason}
    assert record_text({**request, "text": "User tried pottery."}) == (
        f"forget m-bbbbbbbbbbbb: User tried pottery. (why: {reason})"
    )
    assert record_text({**BASE, "op": "assert", "text": "A fact.", "reason": "noted"}) == "A fact."
