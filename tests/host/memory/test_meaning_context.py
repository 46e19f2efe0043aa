"""Meaning read in context: a log entry is embedded after the standing entry before it, and only a standing one.

The embedder is a fake with hand-set vectors (the model boundary): a passage's cosine with every query is its
own (last) line's set cosine, or 0.9 x the line before it when that is higher, so an entry read after the
anchor is lifted by it; every passage it is given is recorded.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Vectors
from tests.support.embedders import embedder_in_use

USER = Evidence("user")
QUERY = "zebra quartz"
ANCHOR, NEIGHBOUR, LONE = "Lunch was at the harbour", "We stayed until the evening", "A note standing alone"
OTHER_DAY, OVERHEARD, LATER = "Another day entirely", "A peer said the harbour was closed", "We walked back"
COSINES = {ANCHOR: 0.99, NEIGHBOUR: 0.80, LONE: 0.88, OTHER_DAY: 0.1, OVERHEARD: 0.95, LATER: 0.3}
DIMENSIONS = 64


class HandVectors:
    """Each passage's first coordinate is its cosine with every query; the rest is a dimension of its own."""

    name = "hand-vectors-2"

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self._dims: dict[str, int] = {}

    def _vector(self, passage: str) -> Vectors:
        dim = self._dims.setdefault(passage, len(self._dims) + 1)
        *before, own = passage.split("\n")
        cosine = max([COSINES[own], *(0.9 * COSINES[line] for line in before)])
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


def meaning(store: MemoryStore) -> list[str]:
    assert store.wait_embedded(60)
    signals = store.recall_signals(QUERY)
    assert signals is not None
    return [fact.text or "" for fact in signals.meaning]


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


def test_a_log_entry_is_read_after_the_entry_before_it(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        remember(store)
        assert meaning(store)[:3] == [ANCHOR, NEIGHBOUR, LONE], "read after the anchor, 0.9 x 0.99 beats 0.88"
    assert f"{ANCHOR}\n{NEIGHBOUR}" in hand.embedded
    assert LONE in hand.embedded and OTHER_DAY in hand.embedded, "a note, and a day's first entry, stand alone"


def test_read_alone_an_entry_ranks_by_its_own_meaning(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir, meaning_context=False) as store:
        remember(store)
        assert meaning(store)[:3] == [ANCHOR, LONE, NEIGHBOUR]
    assert not [passage for passage in hand.embedded if "\n" in passage]


def test_a_retracted_entry_leaves_the_next_ones_vector(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        ids = remember(store)
        meaning(store)
        asyncio.run(store.retract(ids[ANCHOR], evidence=USER))
        found = meaning(store)
        assert ANCHOR not in found
        assert found[:2] == [LONE, NEIGHBOUR], "without the anchor the entry is read alone"
        assert hand.embedded[-1] == NEIGHBOUR, "computed again, alone"
        assert ANCHOR not in [hit.fact.text for hit in store.search(QUERY)]


def test_an_erased_entry_is_in_no_vector(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        ids = remember(store)
        meaning(store)
        anchor_seq = next(hit.fact.seq for hit in store.search(QUERY) if hit.fact.id == ids[ANCHOR])
        asyncio.run(store.erase(ids[ANCHOR], evidence=USER))
        found = meaning(store)
        assert ANCHOR not in found and found[:2] == [LONE, NEIGHBOUR]
        texts = [hit.fact.text for hit in store.search(QUERY, include_retracted=True)]
        assert ANCHOR not in texts and NEIGHBOUR in texts
    with sqlite3.connect(agent_dir / "memory" / "index.sqlite") as db:
        rows = db.execute("SELECT seq, after FROM vectors").fetchall()
    assert len(rows) == 3 and all(after != anchor_seq and seq != anchor_seq for seq, after in rows)


def test_a_proposed_entry_is_read_by_no_neighbour_until_confirmed(agent_dir: Path, hand: HandVectors) -> None:
    with MemoryStore(agent_dir) as store:
        remember(store)
        meaning(store)
        proposed = asyncio.run(
            store.note(OVERHEARD, tier="log", valid_from="2023-05-08T12:02:00", evidence=Evidence("peer:pat"))
        )
        assert proposed.fact is not None and proposed.fact.trust == "proposed"
        asyncio.run(store.note(LATER, tier="log", valid_from="2023-05-08T12:03:00", evidence=USER))
        found = meaning(store)
        assert OVERHEARD not in found and LATER not in found, "0.9 x 0.80 is below the floor of 0.8"
        assert not [passage for passage in hand.embedded if OVERHEARD in passage], "never embedded"
        assert f"{NEIGHBOUR}\n{LATER}" in hand.embedded
        asyncio.run(store.review(proposed.fact.id, "confirm"))
        found = meaning(store)
        assert found[:3] == [ANCHOR, OVERHEARD, NEIGHBOUR]
        assert f"{OVERHEARD}\n{LATER}" in hand.embedded, "the entry after it is read after it now"
        assert LATER in found, "0.9 x 0.95 clears the floor"
