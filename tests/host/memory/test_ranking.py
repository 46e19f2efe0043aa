"""Ranked recall: reciprocal rank fusion of words, meaning and the time a question names (real SQLite)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Embedder
from host.memory.fold import Fact
from host.memory.ranking import DEFAULT_RANKING, Signals, _first_visible, combine, fuse

USER = Evidence("user")
MAY = NoteItem("Caroline went to the support group; the support group was big", tier="log", valid_from="2023-05-08")
JULY = NoteItem("Caroline went to the support group", tier="log", valid_from="2023-07-15")
QUESTION = "What did Caroline do at the support group in July 2023?"


def test_fusion_sums_each_lists_weight_over_its_rank() -> None:
    fused = fuse([(1.0, [10, 20, 30]), (0.5, [30, 40])], k=60)
    assert [seq for seq, _ in fused] == [30, 10, 20, 40]
    assert fused[0][1] == pytest.approx(1 / 63 + 0.5 / 61)
    assert fused[-1][1] == pytest.approx(0.5 / 62)


def test_a_list_without_weight_has_no_vote_and_ties_go_to_the_newest() -> None:
    assert fuse([(1.0, [1]), (0.0, [2, 3])], k=60) == [(1, pytest.approx(1 / 61))]
    assert [seq for seq, _ in fuse([(1.0, [5]), (1.0, [9])], k=60)] == [9, 5]


def test_a_question_that_names_a_time_prefers_the_facts_valid_then(store: MemoryStore) -> None:
    asyncio.run(store.note_many([MAY, JULY], evidence=USER))
    by_words = DEFAULT_RANKING.without("time")
    assert [h.fact.text for h in store.search(QUESTION, ranking=by_words)] == [MAY.text, JULY.text]
    assert [h.fact.text for h in store.search(QUESTION)] == [JULY.text, MAY.text]
    assert [h.fact.text for h in store.search("the support group in May 2023")] == [MAY.text, JULY.text]


def test_the_time_vote_ranks_by_meaning_when_there_are_vectors(semantic: Embedder, store: MemoryStore) -> None:
    async def main() -> None:
        await store.note_many(
            [
                NoteItem("Melanie painted a lake at sunrise", tier="log", valid_from="2023-07-20"),
                NoteItem("Melanie bought new running shoes", tier="log", valid_from="2023-07-21"),
                NoteItem("Melanie painted her fence", tier="log", valid_from="2023-09-02"),
            ],
            evidence=USER,
        )
        assert store.wait_embedded(60)

    asyncio.run(main())
    signals = store.recall_signals("What artwork did Melanie make in July 2023?")
    assert signals is not None
    assert [f.text for f in signals.timed] == ["Melanie painted a lake at sunrise", "Melanie bought new running shoes"]
    hits = [h.fact.text for h in store.search("What artwork did Melanie make in July 2023?", limit=3)]
    assert "Melanie painted a lake at sunrise" in hits[:2], "meaning and time both vote for it"
    assert hits.index("Melanie painted a lake at sunrise") < hits.index("Melanie bought new running shoes")


def test_a_query_without_content_words_finds_nothing_even_by_meaning(semantic: Embedder, store: MemoryStore) -> None:
    async def main() -> None:
        await store.note("User likes tea", evidence=USER)
        assert store.wait_embedded(60)

    asyncio.run(main())
    assert store.search("is it the one?") == []
    assert [h.fact.text for h in store.search("favourite drink")] == ["User likes tea"]


def test_a_tie_goes_to_the_better_word_match_then_the_newest(store: MemoryStore) -> None:
    items = [NoteItem("the ferry leaves at nine"), NoteItem("the bus leaves at ten")]
    asyncio.run(store.note_many(items, evidence=USER))
    older, newer = sorted((hit.fact for hit in store.search("leaves")), key=lambda fact: fact.seq)
    tied = Signals(words=[older, newer], meaning=[newer, older], timed=[])
    assert [fact for fact, _ in combine(tied, DEFAULT_RANKING, 2)] == [older, newer], "equal votes, better words"
    swapped = Signals(words=[newer, older], meaning=[older, newer], timed=[])
    assert [fact for fact, _ in combine(swapped, DEFAULT_RANKING, 2)] == [newer, older]
    no_words = Signals(words=[], meaning=[older], timed=[newer])
    assert [fact for fact, _ in combine(no_words, replace(DEFAULT_RANKING, time_weight=1.0), 2)] == [newer, older]


def test_the_words_floor_keeps_the_full_text_lists_hits_however_the_other_lists_vote(store: MemoryStore) -> None:
    """Issue 23.2: fusion never buries what its own words ranking finds first."""
    asyncio.run(store.note_many([NoteItem(f"fact number {n}") for n in range(8)], evidence=USER))
    facts = sorted((hit.fact for hit in store.search("fact number", limit=8)), key=lambda fact: fact.seq)
    words, others = facts[:2], facts[2:]
    # Meaning and time agree on six other facts: each outvotes the words list's first hit.
    signals = Signals(words=words, meaning=others, timed=others)
    loud = replace(DEFAULT_RANKING, time_weight=1.5)
    assert not set(words) & {fact for fact, _ in combine(signals, replace(loud, words_floor=0.0), 3)}
    floored = [fact for fact, _ in combine(signals, replace(loud, words_floor=0.5), 4)]
    assert floored[:4] == [others[0], words[0], others[1], words[1]], "rank r of the words list by place r / 0.5"
    for limit in range(1, 7):
        kept = [fact for fact, _ in combine(signals, replace(loud, words_floor=0.5), limit)]
        assert len(kept) == limit and set(words[: limit // 2]) <= set(kept)
    # With log context, the floor keeps plain BM25's order (a fact's own words), even for a fact no list voted for.
    diluted = Signals(words=others, meaning=others, timed=others, plain=words)
    assert [fact for fact, _ in combine(diluted, replace(loud, words_floor=0.5), 4)][1::2] == words


def test_a_reply_is_found_by_the_words_of_the_message_it_answers(store: MemoryStore) -> None:
    """Issue 23.3: "they said six" answers the entry before it, whose words the question shares."""
    chat = [
        "Ravi: how many came to your birthday?",
        "Ines: they said six",
        "Ines: yes",
        "Ines: it was lovely",
        "Ravi: a birthday to remember, so many came",
        "Ravi: ok",
    ]
    notes = [NoteItem(f"note {n}: the shed needs paint") for n in range(10)]
    items = [NoteItem(text, tier="log", valid_from="2023-05-08T12:00:00") for text in chat]
    asyncio.run(store.note_many([*items, *notes], evidence=USER))
    question = "How many came to the birthday?"
    alone = [hit.fact.text for hit in store.search(question, limit=4, ranking=DEFAULT_RANKING.without("before"))]
    assert "Ines: they said six" not in alone, "its neighbours' words alone tie it with entries further away"
    found = [
        hit.fact.text for hit in store.search(question, limit=4, ranking=replace(DEFAULT_RANKING, before_weight=0.5))
    ]
    assert "Ines: they said six" in found and found[:2] == [chat[0], chat[4]], "the entries that say it stay first"


class CountedReads:
    """Stands in for the index's fact reads: the facts of seqs 1..n, those in `hidden` not confirmed."""

    def __init__(self, n: int, hidden: set[int]) -> None:
        self.facts = {
            seq: Fact(
                f"r{seq}", seq, "note", f"fact {seq}", f"s{seq}", None, "log", "user", None,
                "proposed" if seq in hidden else "confirmed", "live", "agent", "2024-01-01T00:00:00Z",
                None, None, None, None, None, None, None, (), seq,
            )
            for seq in range(1, n + 1)
        }  # fmt: skip
        self.read: list[int] = []

    def facts_by_seq(self, seqs: list[int]) -> list[Fact]:
        self.read += seqs
        return [self.facts[seq] for seq in seqs]


def test_a_list_reads_only_the_facts_it_keeps_and_reads_on_past_those_it_may_not_show() -> None:
    order = list(range(40, 0, -1))  # nearest first
    index = CountedReads(40, hidden=set())
    kept = _first_visible(index, order, 8, ("live",), None, set())  # type: ignore[arg-type]
    assert [f.seq for f in kept] == order[:8] and index.read == order[:8], "one read of the depth kept"

    # The nearest three are only proposed, one is excluded: the list reads on, in order, for the depth it keeps.
    index = CountedReads(40, hidden={40, 39, 38})
    kept = _first_visible(index, order, 8, ("live",), None, {"r35"})  # type: ignore[arg-type]
    assert [f.seq for f in kept] == [37, 36, 34, 33, 32, 31, 30, 29]
    assert index.read == order[:16], "eight read, four kept: twice the four missing read next"
