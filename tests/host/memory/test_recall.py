"""Recall blocks: chosen within a byte cap, stored as ids, rendered from the facts as they stand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from host.memory.fold import Fact, fact_from_record
from host.memory.recall import choose_recall, render_block, replay_budget, replayed_recall
from host.memory.records import Record, content_signature


def fact(n: int, text: str, **changes: Any) -> Fact:
    record = Record(
        seq=n,
        id=f"m-{n:012x}",
        op="assert",
        source="user",
        observed_at="2024-01-01T00:00:00.000000Z",
        trust="confirmed",
    )
    made = fact_from_record(replace(record, text=text, sig=content_signature(text)))
    return replace(made, **changes)


def test_a_block_within_its_cap_shows_everything_and_states_no_cut() -> None:
    block = choose_recall([fact(1, "User likes tea")], [fact(2, "User likes jazz")], 0, max_bytes=4000)
    assert block is not None and block.recalled == ("m-000000000001",) and block.added == ("m-000000000002",)
    assert block.cut == 0 and "did not fit" not in block.text


def test_a_block_over_its_cap_keeps_what_fits_and_says_how_many_were_cut() -> None:
    """Issue 11.5: a block is bounded in bytes, and the cut is stated in it."""
    recalled = [fact(n, f"Fact number {n} " + "word " * 60) for n in range(1, 11)]
    block = choose_recall(recalled, [], 0, max_bytes=1200)
    assert block is not None and 0 < len(block.recalled) < 10
    assert len(block.text.encode("utf-8")) <= 1200
    assert block.cut == 10 - len(block.recalled)
    assert f"({block.cut} more matching facts did not fit" in block.text


def test_a_stored_block_renders_without_a_fact_that_was_retracted_replaced_or_erased() -> None:
    facts = {
        f.id: f
        for f in (
            fact(1, "User likes tea"),
            fact(2, "User has a cat", status="retracted"),
            fact(3, "User lives in Oslo", status="superseded"),
            replace(fact(4, "User is Ada"), status="erased", text=None),
            fact(5, "User drives", trust="proposed"),
        )
    }
    event = {"type": "context", "seq": 9, "recalled": list(facts), "added": []}
    text = render_block(event, facts.get)
    assert text is not None and "tea" in text
    for gone in ("cat", "Oslo", "Ada", "drives"):
        assert gone not in text
    assert render_block({"recalled": ["m-000000000002"]}, facts.get) is None


def test_replayed_blocks_of_earlier_epochs_share_a_budget_newest_first_and_this_epochs_are_all_kept() -> None:
    facts = {f.id: f for f in (fact(n, f"Fact {n} " + "x" * 200) for n in range(1, 7))}
    events = [
        {"type": "context", "seq": 10 + n, "epoch": 1 if n < 4 else 2, "recalled": [f"m-{n:012x}"]} for n in range(1, 7)
    ]
    one = len(render_block(events[0], facts.get) or "")
    kept = replayed_recall(events, 2, one * 2, facts.get)
    assert sorted(kept) == [12, 13, 14, 15, 16], "two blocks of epoch 1 fit the budget, every block of epoch 2 stays"
    assert replayed_recall(events, 2, one * 2, facts.get) == kept, "the choice is stable within an epoch"
    assert sorted(replayed_recall(events, 3, 0, facts.get)) == [16], "a new epoch drops old ones, never this turn's"


def test_the_replay_budget_is_a_tenth_of_the_window() -> None:
    assert replay_budget(8192) == 8192 * 4 // 10
