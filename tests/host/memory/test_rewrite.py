"""A recall question's rewrite by a model: its words vote as a list of their own, cached, and cost reported."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.ranking import DEFAULT_RANKING
from host.memory.rewrite import (
    MAX_REWRITE_TERMS,
    SWITCH,
    Rewrite,
    RewriteCache,
    rewrite_enabled,
    rewrite_prompt,
    rewrite_terms,
)

USER = Evidence("user")
NOVELS = "Maren: I finished three novels this week"
OTHER = "Maren: is the bookworm cafe open on Sunday?"
QUESTION = "Is she a bookworm?"


def test_a_rewrite_keeps_the_search_words_the_question_does_not_hold_and_at_most_a_few() -> None:
    assert rewrite_terms("Reading, novels, books; the bookworm", QUESTION) == ("reading", "novels", "books")
    long = " ".join(f"word{n}" for n in range(3 * MAX_REWRITE_TERMS))
    assert len(rewrite_terms(long, QUESTION)) == MAX_REWRITE_TERMS
    assert rewrite_terms("", QUESTION) == ()
    assert QUESTION in rewrite_prompt(QUESTION)


def test_a_cached_rewrite_costs_nothing_and_another_model_or_question_is_asked_again() -> None:
    cache = RewriteCache(size=2)
    cache.put("model-a", QUESTION, Rewrite(("novels",), 120, 9))
    hit = cache.get("model-a", QUESTION)
    assert hit == Rewrite(("novels",), 0, 0, cached=True) and "no cost" in hit.footer()
    assert cache.get("model-b", QUESTION) is None and cache.get("model-a", "Is he a bookworm?") is None
    assert "120 tokens in, 9 out" in Rewrite(("novels",), 120, 9).footer()
    cache.put("model-a", "two", Rewrite((), 1, 1))
    cache.put("model-a", "three", Rewrite((), 1, 1))
    assert cache.get("model-a", QUESTION) is None, "only the newest are kept"


def test_the_rewrite_is_on_unless_switched_off() -> None:
    assert rewrite_enabled({}) and rewrite_enabled({SWITCH: "on"})
    assert not rewrite_enabled({SWITCH: "off"}) and not rewrite_enabled({SWITCH: " OFF "})


def test_a_rewrites_words_find_what_shares_no_word_with_the_question(store: MemoryStore) -> None:
    """Issue 23.4: an inference question ("a bookworm?") is answered by a turn that says novels."""
    notes = [NoteItem(f"The user's note {n} is about the garden shed") for n in range(10)]
    items = [
        NoteItem(NOVELS, tier="log", valid_from="2023-05-01"),
        NoteItem(OTHER, tier="log", valid_from="2023-06-01"),
    ]
    asyncio.run(store.note_many([*items, *notes], evidence=USER))
    assert [hit.fact.text for hit in store.search(QUESTION)] == [OTHER]
    rewritten = [hit.fact.text for hit in store.search(QUESTION, rewrite=("reading", "novels", "books"))]
    assert rewritten == [OTHER, NOVELS], "the question's own words still rank first"
    off = replace(DEFAULT_RANKING, rewrite_weight=0.0)
    assert [hit.fact.text for hit in store.search(QUESTION, rewrite=("novels",), ranking=off)] == [OTHER]


def test_without_a_model_a_category_question_gets_the_words_of_its_instances(store: MemoryStore) -> None:
    """Issue 23.4's deterministic path: "what food" is answered by a turn that says lava cake."""
    cake = "Ines: I baked a chocolate lava cake last night"
    items = [NoteItem(cake, tier="log", valid_from="2023-05-01"), NoteItem("Ines: Ravi likes it", tier="log")]
    asyncio.run(store.note_many(items, evidence=USER))
    question = "What food does Ravi like?"
    assert cake not in [hit.fact.text for hit in store.search(question, ranking=DEFAULT_RANKING.without("expansion"))]
    assert cake in [hit.fact.text for hit in store.search(question, ranking=DEFAULT_RANKING)]
