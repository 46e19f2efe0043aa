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
from host.memory.speakers import MAX_CANDIDATES, name_candidates, speaker_of, without_names
from tests.support.embedders import embedder_in_use

USER = Evidence("user")
DAY = "2023-05-08T12:00:00"
# Melanie's entry holds the question's words; Caroline's own holds them too, and is what she said.
MELANIE = "Melanie: Thanks, Caroline! The support group you went to sounds lovely"
CAROLINE = "Caroline: I went to a support group yesterday, it was lovely"
NOTE = "The user keeps a support group diary"
QUESTION = "When did Caroline go to the support group?"


def test_a_speaker_is_the_name_a_log_entry_starts_with() -> None:
    assert speaker_of("Caroline: I went") == "Caroline"
    assert speaker_of("Mary Ann Smith: hello there") == "Mary Ann Smith"
    assert speaker_of("note: lower case is no name") is None
    assert speaker_of("I think: a clause, not a speaker") is None
    assert speaker_of("Caroline:no space") is None
    assert speaker_of(None) is None


def test_a_question_names_people_by_capitalised_runs_and_possessives() -> None:
    found = name_candidates("What did Caroline's friend Mary Ann tell Melanie?")
    assert {"Caroline", "Mary Ann", "Mary", "Ann", "Melanie", "What"} == set(found)
    assert found.index("Mary Ann") < found.index("Mary"), "longest first"


def test_a_long_message_looks_up_a_bounded_number_of_names() -> None:
    message = " ".join(f"Person{n} said hello." for n in range(5 * MAX_CANDIDATES))
    found = name_candidates(message)
    assert len(found) == MAX_CANDIDATES and "Person0" in found


def test_the_meaning_query_leaves_the_names_out_but_never_everything() -> None:
    assert without_names("What did Caroline's friend say to Melanie?", ["Caroline", "Melanie"]) == (
        "What did friend say to ?"
    )
    assert without_names("Caroline?", ["Caroline"]) == "Caroline?"
    assert without_names("Carolines plans", ["Caroline"]) == "Carolines plans", "whole words only"


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
    assert store.recall_signals(QUESTION).speakers == {"Caroline"}  # type: ignore[union-attr]
    caroline = next(hit.fact for hit in store.search(QUESTION) if hit.fact.text == CAROLINE)
    asyncio.run(store.retract(caroline.id, evidence=USER))
    assert store.recall_signals(QUESTION).speakers == frozenset()  # type: ignore[union-attr]
    assert [hit.fact.text for hit in store.search(QUESTION)] == [MELANIE]


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
