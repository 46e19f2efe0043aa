"""The memory section is bounded and says how much did not fit; proposed facts never appear in it."""

from __future__ import annotations

from dataclasses import replace

from host.memory.fold import Conflict, Fact, Standing
from host.memory.section import SectionLimits, render_recall_block, render_section
from tests.host.memory.conftest import BASE_FACT

BASE = BASE_FACT


def fact(seq: int, text: str, tier: str = "note", key: str | None = None) -> Fact:
    return replace(BASE, id=f"m-{seq:012x}", seq=seq, text=text, sig=text, tier=tier, key=key)


def test_everything_fits_and_the_footer_says_so() -> None:
    section = render_section(Standing((fact(1, "User likes tea"), fact(2, "User likes jazz")), ()))
    assert "[m-000000000001] User likes tea" in section.text
    assert section.text.endswith("All 2 standing records are shown.")
    assert section.hidden == 0


def test_when_full_the_newest_notes_stay_profile_first_and_the_rest_are_counted() -> None:
    facts = [fact(1, "User is called Sam", "profile")] + [fact(n, f"Note number {n}") for n in range(2, 40)]
    section = render_section(Standing(tuple(facts), ()), SectionLimits(max_bytes=100_000, max_lines=20))
    lines = section.text.splitlines()
    assert len(lines) <= 20
    assert "m-000000000001" in section.shown_ids and "m-000000000027" in section.shown_ids
    assert "m-000000000002" not in section.shown_ids
    assert section.hidden == 39 - len(section.shown_ids)
    assert lines[-1].startswith(f"{section.hidden} of 39 standing records did not fit here ({section.hidden} notes)")
    assert "memory_recall" in lines[-1]


def test_records_beyond_the_window_read_from_the_index_are_counted_too() -> None:
    window = Standing((fact(998, "Note 998"), fact(999, "Note 999")), ())
    section = render_section(window, totals={"note": 999, "profile": 3})
    assert section.text.splitlines()[-1].startswith(
        "1000 of 1002 standing records did not fit here (997 notes, 3 profile)"
    )
    assert section.shown_ids == ("m-0000000003e7", "m-0000000003e6")


def test_the_byte_bound_holds_with_long_facts() -> None:
    facts = tuple(fact(n, "x" * 400 + f" {n}") for n in range(1, 30))
    section = render_section(Standing(facts, ()), SectionLimits(max_bytes=3000, max_lines=200))
    assert len(section.text.encode()) <= 3000
    assert section.hidden > 0 and len(section.shown_ids) + section.hidden == 29


def test_conflicts_come_first_and_show_every_candidate() -> None:
    berlin, lisbon = (
        fact(1, "User lives in Berlin", key="user.home_city"),
        fact(2, "User lives in Lisbon", key="user.home_city"),
    )
    section = render_section(Standing((fact(3, "User likes tea"),), (Conflict("user.home_city", (berlin, lisbon)),)))
    body = section.text.split("\n\n", 1)[1]
    assert body.index("CONFLICT on user.home_city") < body.index("Berlin") < body.index("Lisbon") < body.index("tea")


def test_the_recall_block_lists_recalled_facts_and_background_additions() -> None:
    block = render_recall_block([fact(1, "User likes tea")], [fact(2, "User likes jazz")], 3)
    assert block is not None
    assert "[m-000000000001] User likes tea" in block and "[m-000000000002] User likes jazz" in block
    assert "3 more were added" in block
    assert render_recall_block([], [], 0) is None
