"""The speakers a question names: their log entries get a vote, and their names stay out of the meaning query."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Vectors
from host.memory.ranking import DEFAULT_RANKING
from host.memory.speakers import (
    MAX_CANDIDATES,
    match_speakers,
    name_candidates,
    name_forms,
    same_name,
    speaker_key,
    speaker_of,
    without_names,
)
from tests.support.embedders import embedder_in_use

USER = Evidence("user")
DAY = "2023-05-08T12:00:00"
# Melanie's entry holds the question's words; Caroline's own holds them too, and is what she said.
MELANIE = "Melanie: Thanks, Caroline! The support group you went to sounds lovely"
CAROLINE = "Caroline: I went to a support group yesterday, it was lovely"
NOTE = "The user keeps a support group diary"
QUESTION = "When did Caroline go to the support group?"


def test_a_speaker_is_the_label_a_log_entry_starts_with() -> None:
    assert speaker_of("Caroline: I went") == "Caroline"
    assert speaker_of("Mary Ann Smith: hello there") == "Mary Ann Smith"
    assert speaker_of("I think: a clause, not a speaker") is None
    assert speaker_of("Caroline:no space") is None
    assert speaker_of("10:30: a time, not a speaker") is None
    assert speaker_of(None) is None


def test_a_lower_case_or_display_name_label_is_a_speaker_and_a_heading_is_not() -> None:
    """Issue 23.1: a chat whose display names are lower case ("maren"), handles ("dana_k"), or initials."""
    assert speaker_of("maren: i went to the beach") == "maren"
    assert speaker_of("dana_k: see you at 6") == "dana_k"
    assert speaker_of("Mom: call me back") == "Mom"
    assert speaker_of("J.: fine") == "J."
    for heading in ("note: lower case is no name", "Note: buy milk", "Update: we moved", "so basically: no"):
        assert speaker_of(heading) is None, heading


def test_a_label_is_compared_by_its_case_folded_key_and_answers_to_its_first_part() -> None:
    assert speaker_key("Tomas  Berg") == "tomas berg" and speaker_key("maren") == speaker_key("Maren")
    assert name_forms("tomas berg") == {"tomas berg", "tomas"}
    assert name_forms("dana_k") == {"dana_k", "dana"}
    assert name_forms("j.") == {"j."}
    assert name_forms("mom") == {"mom"}


def test_a_question_names_people_by_runs_of_words_and_possessives() -> None:
    found = name_candidates("What did Caroline's friend Mary Ann tell Melanie?")
    assert {"Caroline", "Mary Ann", "Mary", "Ann", "Melanie"} == {c.written for c in found}
    assert [c.written for c in found].index("Mary Ann") < [c.written for c in found].index("Mary"), "longest first"
    assert "What" not in {c.written for c in found}, "a function word names nobody"


def test_lower_case_words_name_people_only_in_a_question_written_without_capitals() -> None:
    assert "maren" in {c.key for c in name_candidates("what did maren say about the beach?")}
    cased = {c.key for c in name_candidates("Did Sam mark the date in June?")}
    assert {"sam", "june"} <= cased and "mark" not in cased, "a cased question capitalises its names"
    assert "sam" in {c.key for c in name_candidates("Where did I meet Sam? I forgot.")}, "sentence starts and I"


def test_a_first_name_names_a_full_name_label_and_a_full_name_names_a_one_word_label() -> None:
    speakers = ["tomas berg", "ravi", "dana_k", "maren"]
    named = match_speakers(name_candidates("What did Tomas tell Ravi Lee about Dana and Maren?"), speakers)
    assert named == {"tomas berg": {"Tomas"}, "ravi": {"Ravi"}, "dana_k": {"Dana"}, "maren": {"Maren"}}
    assert match_speakers(name_candidates("What did Tomas Berg say?"), speakers) == {
        "tomas berg": {"Tomas Berg", "Tomas"}
    }
    assert match_speakers(name_candidates("What did Kate say?"), speakers) == {}, "nobody speaks as Kate"


def test_a_name_spelled_another_way_names_the_one_speaker_spelled_like_it() -> None:
    speakers = ["muhhamed", "fahim khan", "samara", "nebraas", "marena"]
    asked = "Did Muhammad and Fahim go? Was Nebras there in Summer?"
    assert match_speakers(name_candidates(asked), speakers) == {
        "muhhamed": {"Muhammad"},
        "fahim khan": {"Fahim"},
        "nebraas": {"Nebras"},
    }, "Summer is no Samara: its last letter differs"
    assert same_name("muhammad", "muhhamed") and not same_name("maria", "mario"), "five letters are too few"
    assert match_speakers(name_candidates("What did Marena say?"), ["marena", "marene"]) == {"marena": {"Marena"}}
    assert match_speakers(name_candidates("What did Marina say?"), ["marena", "maryna"]) == {}, "two labels fit"


def test_a_long_message_looks_up_a_bounded_number_of_names() -> None:
    message = " ".join(f"Person{n} said hello." for n in range(5 * MAX_CANDIDATES))
    found = name_candidates(message)
    assert len(found) == MAX_CANDIDATES and "Person0" in {c.written for c in found}


def test_the_meaning_query_leaves_the_names_out_but_never_everything() -> None:
    assert without_names("What did Caroline's friend say to Melanie?", ["Caroline", "Melanie"]) == (
        "What did friend say to ?"
    )
    assert without_names("Caroline?", ["Caroline"]) == "Caroline?"
    assert without_names("Carolines plans", ["Caroline"]) == "Carolines plans", "whole words only"
    assert without_names("what did MAREN say?", ["Maren"]) == "what did say?", "any case"


def remember(store: MemoryStore, *items: NoteItem) -> None:
    asyncio.run(store.note_many(list(items), evidence=USER))


def test_a_named_speakers_entry_comes_before_an_entry_that_only_addresses_them(store: MemoryStore) -> None:
    remember(store, NoteItem(MELANIE, tier="log", valid_from=DAY), NoteItem(CAROLINE, tier="log", valid_from=DAY))
    without = [hit.fact.text for hit in store.search(QUESTION, ranking=DEFAULT_RANKING.without("speaker"))]
    assert without == [MELANIE, CAROLINE], "by words alone Melanie's entry (newer, more words) leads"
    assert [hit.fact.text for hit in store.search(QUESTION)] == [CAROLINE, MELANIE]
    assert [hit.fact.text for hit in store.search("When did Melanie hear about the support group?")][0] == MELANIE


def test_a_note_or_a_name_nobody_speaks_under_changes_nothing(store: MemoryStore) -> None:
    remember(store, NoteItem(MELANIE, tier="log", valid_from=DAY), NoteItem(NOTE))
    signals = store.recall_signals("When did Jolene go to the support group?")
    assert signals is not None and signals.speakers == frozenset()
    signals = store.recall_signals(QUESTION)
    assert signals is not None and signals.speakers == frozenset(), "Caroline is addressed, never a speaker"


def test_a_retracted_speakers_only_entry_makes_them_no_speaker(store: MemoryStore) -> None:
    remember(store, NoteItem(CAROLINE, tier="log", valid_from=DAY), NoteItem(MELANIE, tier="log", valid_from=DAY))
    assert store.recall_signals(QUESTION).speakers == {"caroline"}  # type: ignore[union-attr]
    caroline = next(hit.fact for hit in store.search(QUESTION) if hit.fact.text == CAROLINE)
    asyncio.run(store.retract(caroline.id, evidence=USER))
    assert store.recall_signals(QUESTION).speakers == frozenset()  # type: ignore[union-attr]
    assert [hit.fact.text for hit in store.search(QUESTION)] == [MELANIE]


# A chat whose labels are a lower-case display name and a full name. Ravi's entries address them and hold
# more of the questions' words; their own entries are what they said.
MAREN = "maren: the beach trip to Porto was the best part of my winter"
TO_MAREN = "Ravi: Maren, your beach trip to Porto sounds amazing! Did you like Porto?"
TOMAS = "Tomas Berg: honestly the trip to Porto was fun, we went to the beach every single day"
TO_TOMAS = "Ravi: Tomas, how was the beach trip to Porto? Tell me about Porto!"
FILLER = [NoteItem(f"The user's note number {n} is about the garden and the shed") for n in range(12)]
CHAT = [
    NoteItem(text, tier="log", valid_from=f"2023-05-0{day}T12:00:00")
    for day, text in enumerate((MAREN, TO_MAREN, TOMAS, TO_TOMAS), 1)
]
"""On four days, so no entry is indexed with another's words."""


def test_a_lower_case_or_full_name_label_is_lifted_by_the_name_a_question_uses(store: MemoryStore) -> None:
    """Issue 23.1: "Maren" names the speaker "maren", "Tomas" the speaker "Tomas Berg"."""
    remember(store, *FILLER, *CHAT)
    maren, tomas = "What did Maren say about the beach trip to Porto?", "What did Tomas say about the trip to Porto?"
    by_words = DEFAULT_RANKING.without("speaker")
    assert [hit.fact.text for hit in store.search(maren, ranking=by_words)][0] == TO_MAREN
    assert [hit.fact.text for hit in store.search(tomas, ranking=by_words)][0] == TO_TOMAS
    assert [hit.fact.text for hit in store.search(maren)][0] == MAREN
    assert [hit.fact.text for hit in store.search(maren.lower())][0] == MAREN
    assert [hit.fact.text for hit in store.search(tomas)][0] == TOMAS
    signals = store.recall_signals("When did Tomas Berg and Maren plan the beach trip?")
    assert signals is not None and signals.speakers == {"tomas berg", "maren"}


def test_a_name_that_no_standing_entry_speaks_under_lifts_nothing(store: MemoryStore) -> None:
    remember(store, *FILLER, *CHAT)
    remember(store, NoteItem("Kate likes the beach trip to Porto best of all"))
    signals = store.recall_signals("What did Kate say about the beach trip to Porto?")
    assert signals is not None and signals.speakers == frozenset(), "Kate is named in a note, never a speaker"
    question = "What did Kate say about the beach trip to Porto?"
    unlifted = [hit.fact.text for hit in store.search(question, ranking=DEFAULT_RANKING.without("speaker"))]
    assert [hit.fact.text for hit in store.search(question)] == unlifted


class RecordingQueries:
    """Records the text of every query embedded; every vector is the same (the model boundary)."""

    name = "recording-queries-1"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def passages(self, texts: list[str]) -> Vectors:
        return np.tile(np.eye(1, 8, dtype=np.float32), (len(texts), 1))

    def query(self, text: str) -> Vectors:
        self.queries.append(text)
        return np.eye(1, 8, dtype=np.float32)

    def background(self) -> None:
        return None


@pytest.fixture
def recording() -> Iterator[RecordingQueries]:
    with embedder_in_use(RecordingQueries()) as embedder:
        yield embedder


def test_the_meaning_query_is_embedded_without_the_speakers_it_names(
    agent_dir: Path, recording: RecordingQueries
) -> None:
    with MemoryStore(agent_dir) as store:
        remember(store, NoteItem(CAROLINE, tier="log", valid_from=DAY), NoteItem(MELANIE, tier="log", valid_from=DAY))
        assert store.wait_embedded(60)
        asyncio.run(store.prepare_recall(QUESTION))
        store.search(QUESTION)
        store.search("What did Jolene say about Caroline?")
        store.search(QUESTION, ranking=DEFAULT_RANKING.without("names-out"))
    assert recording.queries == [
        "When did go to the support group?",
        "What did Jolene say about ?",
        QUESTION,
    ], "embedded once (prepared off the loop, then reused); Jolene speaks no entry, so her name stays"
