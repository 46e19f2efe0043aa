"""Views and bitemporal queries: asOf is valid time (what was true), knownAt transaction time (what we believed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from host.memory import Evidence, Fact, MemoryStore, NoteItem
from host.memory.errors import InvalidMemoryRequestError
from host.memory.reads import COMMON_TERM_FACTS
from protocol.errors import INVALID_PARAMS

USER = Evidence("user")


def texts(facts: Iterable[Fact]) -> list[str]:
    return [f.text or "" for f in facts]


def test_as_of_answers_what_was_true_then_after_a_dated_correction(store: MemoryStore) -> None:
    async def main() -> None:
        berlin = await store.note("User lives in Berlin", evidence=USER, key="user.home_city", valid_from="2019-01-01")
        assert berlin.fact is not None
        moved = await store.correct(berlin.fact.id, "User lives in Lisbon", evidence=USER, valid_from="2024-03-01")
        assert moved.kind == "corrected"
        assert texts(store.standing(as_of="2021-06-01").current) == ["User lives in Berlin"]
        assert texts(store.standing(as_of="2025-01-01").current) == ["User lives in Lisbon"]
        assert texts(store.standing().current) == ["User lives in Lisbon"]
        assert texts(store.standing(as_of="2018-01-01").current) == []

    asyncio.run(main())


def test_an_undated_correction_rewrites_the_past_too(store: MemoryStore) -> None:
    async def main() -> None:
        wrong = await store.note("User was born in Porto", evidence=USER, key="user.birthplace")
        assert wrong.fact is not None
        await store.correct(wrong.fact.id, "User was born in Braga", evidence=USER)
        assert texts(store.standing(as_of="1990-01-01").current) == ["User was born in Braga"]

    asyncio.run(main())


def test_known_at_answers_what_we_believed_then(store: MemoryStore) -> None:
    async def main() -> None:
        tea = await store.note("User likes tea", evidence=USER)
        coffee = await store.note("User likes coffee", evidence=USER)
        assert tea.fact is not None and coffee.fact is not None
        believed_both = coffee.fact.observed_at
        await store.retract(tea.fact.id, evidence=USER)
        assert texts(store.standing(known_at=believed_both).current) == ["User likes tea", "User likes coffee"]
        assert texts(store.standing().current) == ["User likes coffee"]
        assert texts(store.standing(known_at=tea.fact.observed_at).current) == ["User likes tea"]

    asyncio.run(main())


def test_views_list_proposed_retracted_and_all(store: MemoryStore) -> None:
    async def main() -> None:
        tea = await store.note("User likes tea", evidence=USER)
        await store.note("User likes coffee", evidence=USER)
        await store.note("Acme was founded in 1999", evidence=Evidence("tool:web_search"))
        assert tea.fact is not None
        await store.retract(tea.fact.id, evidence=USER)
        assert texts(store.list_facts("current").facts) == ["User likes coffee"]
        assert texts(store.list_facts("proposed").facts) == ["Acme was founded in 1999"]
        assert texts(store.list_facts("retracted").facts) == ["User likes tea"]
        assert len(store.list_facts("all").facts) == 3
        assert texts(store.list_facts("retracted", known_at=tea.fact.observed_at).facts) == []

    asyncio.run(main())


def test_a_malformed_instant_or_view_is_invalid_params(store: MemoryStore) -> None:
    for call in (lambda: store.standing(as_of="yesterday"), lambda: store.list_facts("everything")):
        with pytest.raises(InvalidMemoryRequestError) as caught:
            call()
        assert caught.value.code == INVALID_PARAMS


def test_history_shows_every_act_on_a_record(store: MemoryStore) -> None:
    async def main() -> None:
        fact = await store.note("User's sister is Ann", evidence=USER)
        other = await store.note("User likes tea", evidence=USER)
        assert fact.fact is not None and other.fact is not None
        fixed = await store.correct(fact.fact.id, "User's sister is Anna", evidence=USER)
        assert fixed.fact is not None
        await store.retract(fixed.fact.id, evidence=USER, reason="no longer relevant")
        assert [r.op for r in store.history(fact.fact.id)] == ["assert", "correct"]
        assert [r.op for r in store.history(fixed.fact.id)] == ["correct", "retract"]
        assert [r.op for r in store.history(limit=2)] == ["correct", "retract"]
        assert [r.op for r in store.history(before_seq=3)] == ["assert", "assert"]

    asyncio.run(main())


def test_recall_finds_other_word_forms_and_skips_retracted_facts_unless_asked(store: MemoryStore) -> None:
    async def main() -> None:
        moving = await store.note("User is moving to Lisbon in spring", evidence=USER)
        await store.note("User's brother moved to Oslo", evidence=USER)
        assert moving.fact is not None
        found = {h.fact.text for h in store.search("when did he move?")}
        assert found == {"User is moving to Lisbon in spring", "User's brother moved to Oslo"}
        await store.retract(moving.fact.id, evidence=USER)
        assert [h.fact.text for h in store.search("moving Lisbon")] == ["User's brother moved to Oslo"]
        hits = store.search("spring Lisbon", include_retracted=True)
        assert [(h.fact.text, h.fact.status) for h in hits] == [("User is moving to Lisbon in spring", "retracted")]
        assert store.search("spring Lisbon") == []
        assert store.search("the and of") == []

    asyncio.run(main())


def test_recall_reads_han_text_by_bigrams(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("用户住在柏林", evidence=USER)
        await store.note("用户喜欢喝茶", evidence=USER)
        assert [h.fact.text for h in store.search("柏林")] == ["用户住在柏林"]
        assert [h.fact.text for h in store.search("喝茶吗")] == ["用户喜欢喝茶"]

    asyncio.run(main())


def test_a_word_held_by_very_many_facts_is_left_out_while_a_rarer_word_remains(store: MemoryStore) -> None:
    async def main() -> None:
        items = [NoteItem(f"User drank tea on day {n}") for n in range(COMMON_TERM_FACTS + 5)]
        await store.note_many(items, evidence=USER)
        await store.note("User bought tea from Darjeeling", evidence=USER)
        assert [h.fact.text for h in store.search("Darjeeling tea", limit=1)] == ["User bought tea from Darjeeling"]
        newest = [h.fact.text for h in store.search("tea", limit=3)]
        assert newest == [
            "User bought tea from Darjeeling",
            f"User drank tea on day {COMMON_TERM_FACTS + 4}",
            f"User drank tea on day {COMMON_TERM_FACTS + 3}",
        ]

    asyncio.run(main())


def test_a_conflict_with_an_old_record_is_found_however_many_facts_came_between(store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User lives in Berlin", evidence=USER, key="user.home_city")
        await store.note_many(
            [NoteItem(f"User's slot {n} is set", key=f"user.slot{n}") for n in range(30)], evidence=USER
        )
        await store.note("User lives in Lisbon", evidence=USER, key="user.home_city")
        standing, totals = store.recent_standing(5)
        assert [[f.text for f in c.facts] for c in standing.conflicts] == [
            ["User lives in Berlin", "User lives in Lisbon"]
        ]
        assert totals == {"note": 32}
        section = store.prompt_section(max_lines=12)
        assert "CONFLICT on user.home_city" in section.text and "Berlin" in section.text

    asyncio.run(main())
