"""Meaning read in context: a log entry is searched by its vector composed with the standing entry's before it.

The embedder is a fake with hand-set vectors (the model boundary): a passage's first coordinate is its set
cosine with every query and the rest is a dimension of its own, so two passages' dot is the product of their
cosines, and a composed entry's cosine can be worked out by hand. Every passage it is given is recorded.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Vectors
from host.memory.ranking import DEFAULT_RANKING
from tests.support.embedders import embedder_in_use

USER = Evidence("user")
QUERY = "zebra quartz"
ANCHOR, NEIGHBOUR, LONE = "Lunch was at the harbour", "We stayed until the evening", "A note standing alone"
OTHER_DAY, OVERHEARD, LATER = "Another day entirely", "A peer said the harbour was closed", "We walked back"
COSINES = {ANCHOR: 0.99, NEIGHBOUR: 0.80, LONE: 0.86, OTHER_DAY: 0.1, OVERHEARD: 0.95, LATER: 0.3}
DIMENSIONS = 64
WEIGHT = DEFAULT_RANKING.meaning_context


def composed(own: float, before: float, weight: float = WEIGHT) -> float:
    """The cosine of (a + w b) / |a + w b| with the query, for unit vectors whose dot is own x before."""
    return (own + weight * before) / math.sqrt(1 + weight * weight + 2 * weight * own * before)


class HandVectors:
    """Each passage's first coordinate is its cosine with every query; the rest is a dimension of its own."""

    name = "hand-vectors-3"

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self._dims: dict[str, int] = {}

    def _vector(self, passage: str) -> Vectors:
        dim = self._dims.setdefault(passage, len(self._dims) + 1)
        cosine = COSINES[passage]
        vector = np.zeros(DIMENSIONS, dtype=np.float32)
        vector[0], vector[dim] = cosine, math.sqrt(1 - cosine * cosine)
        return vector

    def passages(self, texts: list[str]) -> Vectors:
        self.embedded += texts
        return np.stack([self._vector(text) for text in texts])

    def query(self, text: str) -> Vectors:
        vector = np.zeros((1, DIMENSIONS), dtype=np.float32)
        vector[0, 0] = 1.0
        return vector

    def background(self) -> None:
        return None


@pytest.fixture
def hand() -> Iterator[HandVectors]:
    with embedder_in_use(HandVectors()) as embedder:
        yield embedder


def meaning(store: MemoryStore, weight: float = WEIGHT) -> list[str]:
    assert store.wait_embedded(60)
    signals = store.recall_signals(QUERY, ranking=replace(DEFAULT_RANKING, meaning_context=weight))
    assert signals is not None
    return [fact.text or "" for fact in signals.meaning]


def score(store: MemoryStore, record_id: str) -> float:
    """The record's composed cosine with the query, as the meaning list ranks it."""
    assert store.wait_embedded(60)
    seq = store.fact(record_id).seq
    scores = store._index.vectors.scores(HandVectors().query(QUERY), [seq], WEIGHT)
    return scores[seq]


def remember(store: MemoryStore) -> dict[str, str]:
    async def main() -> dict[str, str]:
        outcomes = await store.note_many(
            [
                NoteItem(ANCHOR, tier="log", valid_from="2023-05-08T12:00:00"),
                NoteItem(NEIGHBOUR, tier="log", valid_from="2023-05-08T12:01:00"),
                NoteItem(OTHER_DAY, tier="log", valid_from="2023-06-01T09:00:00"),
                NoteItem(LONE),
            ],
            evidence=USER,
        )
        return {o.fact.text or "": o.fact.id for o in outcomes if o.fact is not None}

    return asyncio.run(main())


def test_a_log_entry_is_searched_with_the_entry_before_it_and_each_is_embedded_alone_once(
    agent_dir: Path, hand: HandVectors
) -> None:
    assert composed(COSINES[NEIGHBOUR], COSINES[ANCHOR]) > COSINES[LONE] > COSINES[NEIGHBOUR]
    with MemoryStore(agent_dir) as store:
        ids = remember(store)
        assert meaning(store)[:3] == [ANCHOR, NEIGHBOUR, LONE], "lifted by the anchor before it"
        assert score(store, ids[NEIGHBOUR]) == pytest.approx(composed(COSINES[NEIGHBOUR], COSINES[ANCHOR]), abs=1e-5)
        assert score(store, ids[OTHER_DAY]) == pytest.approx(COSINES[OTHER_DAY], abs=1e-5), "a day's first entry"
        assert score(store, ids[LONE]) == pytest.approx(COSINES[LONE], abs=1e-5), "a note is never composed"
    assert sorted(hand.embedded) == sorted([ANCHOR, NEIGHBOUR, OTHER_DAY, LONE]), "each text once, alone"


def test_at_weight_zero_an_entry_ranks_by_its_own_meaning(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        remember(store)
        assert meaning(store, weight=0.0)[:3] == [ANCHOR, LONE, NEIGHBOUR]


def test_a_retracted_entry_lends_its_meaning_to_no_neighbour_and_nothing_is_embedded_again(
    agent_dir: Path, hand: HandVectors
) -> None:
    with MemoryStore(agent_dir) as store:
        ids = remember(store)
        meaning(store)
        embedded = list(hand.embedded)
        asyncio.run(store.retract(ids[ANCHOR], evidence=USER))
        found = meaning(store)
        assert ANCHOR not in found
        assert found[:2] == [LONE, NEIGHBOUR], "without the anchor the entry is searched alone"
        assert score(store, ids[NEIGHBOUR]) == pytest.approx(COSINES[NEIGHBOUR], abs=1e-5)
        assert hand.embedded == embedded, "its own vector still holds: nothing is computed again"
        assert ANCHOR not in [hit.fact.text for hit in store.search(QUERY)]


def test_an_erased_entry_is_in_no_vector_and_no_composition(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        ids = remember(store)
        meaning(store)
        anchor_seq = store.fact(ids[ANCHOR]).seq
        asyncio.run(store.erase(ids[ANCHOR], evidence=USER))
        found = meaning(store)
        assert ANCHOR not in found and found[:2] == [LONE, NEIGHBOUR]
        assert score(store, ids[NEIGHBOUR]) == pytest.approx(COSINES[NEIGHBOUR], abs=1e-5)
        texts = [hit.fact.text for hit in store.search(QUERY, include_retracted=True)]
        assert ANCHOR not in texts and NEIGHBOUR in texts
    with sqlite3.connect(agent_dir / "memory" / "index.sqlite") as db:
        rows = db.execute("SELECT seq, after FROM vectors").fetchall()
    assert len(rows) == 3 and all(seq != anchor_seq and after is None for seq, after in rows)


def test_a_proposed_entry_is_composed_into_no_neighbour_until_confirmed(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        remember(store)
        meaning(store)
        proposed = asyncio.run(
            store.note(OVERHEARD, tier="log", valid_from="2023-05-08T12:02:00", evidence=Evidence("peer:pat"))
        )
        assert proposed.fact is not None and proposed.fact.trust == "proposed"
        later = asyncio.run(store.note(LATER, tier="log", valid_from="2023-05-08T12:03:00", evidence=USER))
        assert later.fact is not None
        assert OVERHEARD not in meaning(store)
        assert OVERHEARD not in hand.embedded, "never embedded while proposed"
        assert score(store, later.fact.id) == pytest.approx(composed(COSINES[LATER], COSINES[NEIGHBOUR]), abs=1e-5)
        asyncio.run(store.review(proposed.fact.id, "confirm"))
        assert meaning(store)[:3] == [ANCHOR, OVERHEARD, NEIGHBOUR]
        assert score(store, later.fact.id) == pytest.approx(composed(COSINES[LATER], COSINES[OVERHEARD]), abs=1e-5)
        assert hand.embedded.count(LATER) == 1, "the entry after it is composed anew, not embedded anew"
