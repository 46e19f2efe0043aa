"""Meaning read in context: a log entry is lifted by its nearest same-day neighbour in meaning, only a standing one.

The embedder is a fake with hand-set vectors (the model boundary), so each cosine below is exact.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Vectors, use_embedder
from host.memory.ranking import DEFAULT_RANKING

USER = Evidence("user")
QUERY = "zebra quartz"
# Cosine with the query: the anchor is nearest, its neighbour is lifted by it, the lone note is in between.
ANCHOR, NEIGHBOUR, LONE = "Lunch was at the harbour", "We stayed until the evening", "A note standing alone"
COSINES = {ANCHOR: 0.99, NEIGHBOUR: 0.85, LONE: 0.88, "Another day entirely": 0.1}


class HandVectors:
    """Each known text's vector has the set cosine with every query, the rest in a dimension of its own."""

    name = "hand-vectors-1"

    def _vector(self, text: str, dim: int) -> Vectors:
        vector = np.zeros(len(COSINES) + 1, dtype=np.float32)
        cosine = COSINES[text]
        vector[0], vector[dim] = cosine, math.sqrt(1 - cosine * cosine)
        return vector

    def passages(self, texts: list[str]) -> Vectors:
        dims = {text: n for n, text in enumerate(COSINES, start=1)}
        return np.stack([self._vector(text, dims[text]) for text in texts])

    def query(self, text: str) -> Vectors:
        vector = np.zeros((1, len(COSINES) + 1), dtype=np.float32)
        vector[0, 0] = 1.0
        return vector

    def background(self) -> None:
        return None


@pytest.fixture
def opened(agent_dir: Path) -> Iterator[MemoryStore]:
    """A store opened with the hand-set vectors as its embedder."""
    use_embedder(HandVectors())
    try:
        with MemoryStore(agent_dir) as store:
            yield store
    finally:
        use_embedder(None)


def meaning(store: MemoryStore, context: bool = True) -> list[str]:
    ranking = DEFAULT_RANKING if context else DEFAULT_RANKING.without("dense-context")
    signals = store.recall_signals(QUERY, ranking=ranking)
    assert signals is not None
    return [fact.text or "" for fact in signals.meaning]


def remember(store: MemoryStore) -> dict[str, str]:
    async def main() -> dict[str, str]:
        outcomes = await store.note_many(
            [
                NoteItem(ANCHOR, tier="log", valid_from="2023-05-08T12:00:00"),
                NoteItem(NEIGHBOUR, tier="log", valid_from="2023-05-08T12:01:00"),
                NoteItem("Another day entirely", tier="log", valid_from="2023-06-01T09:00:00"),
                NoteItem(LONE),
            ],
            evidence=USER,
        )
        assert store.wait_embedded(60)
        return {o.fact.text or "": o.fact.id for o in outcomes if o.fact is not None}

    return asyncio.run(main())


def test_a_log_entry_is_lifted_by_its_neighbour_in_meaning(opened: MemoryStore) -> None:
    remember(opened)
    assert meaning(opened, context=False)[:3] == [ANCHOR, LONE, NEIGHBOUR], "by its own cosine alone"
    assert meaning(opened)[:3] == [ANCHOR, NEIGHBOUR, LONE], "0.85 + 0.5 x 0.99 beats 0.88 x 1.5"


def test_a_retracted_neighbour_lifts_nothing_and_is_never_found_by_meaning(opened: MemoryStore) -> None:
    ids = remember(opened)
    asyncio.run(opened.retract(ids[ANCHOR], evidence=USER))
    found = meaning(opened)
    assert ANCHOR not in found
    assert found[:2] == [LONE, NEIGHBOUR], "without its standing neighbour the entry reads as itself"
    assert ANCHOR not in [hit.fact.text for hit in opened.search(QUERY)]


def test_an_erased_neighbour_lifts_nothing_and_is_never_found(opened: MemoryStore) -> None:
    ids = remember(opened)
    asyncio.run(opened.erase(ids[ANCHOR], evidence=USER))
    found = meaning(opened)
    assert ANCHOR not in found
    assert found[:2] == [LONE, NEIGHBOUR]
    texts = [hit.fact.text for hit in opened.search(QUERY, include_retracted=True)]
    assert ANCHOR not in texts and NEIGHBOUR in texts
