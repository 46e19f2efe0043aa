"""Semantic recall's derived data: one embedding per standing fact, kept in `index.sqlite`, computed off the loop.

A fact has a vector only while it stands (live, confirmed, with text): a retraction, supersession, rejection
or erase deletes it in the same transaction (secure delete zeroes the bytes, an erase's vacuum drops the
pages). Each vector is of the fact's own text alone. A log entry is searched in its context: its vector
composed with that of the standing log entry just before it in its episode (the same day), at the weight
the ranking gives (`nearest`, `scores`), so a reply is found by what it answers. The composition is made at
search time from the vectors that stand, so a removed fact's meaning lives on in no neighbour, and an entry
is embedded once, whatever comes to stand before it. Vectors are computed by one background thread per
process, newest facts first, in small batches, and written on the index's own thread only if the fact still
stands with the very text embedded, so an erase that races the computation leaves nothing behind. Deleting
the index loses nothing: it is computed again.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from host.memory.embedder import Embedder, Vectors, loaded_embedder, when_decided
from host.memory.fold import Fact
from host.store.sqlite_tx import write_transaction

__all__ = ["FactVectors", "EmbeddingWorker", "BATCH", "BACKFILL_STEP", "VECTOR_SCHEMA", "worker_for", "MeaningState"]

logger = logging.getLogger(__name__)

BATCH = 4
"""Texts embedded per background engine call. The engine runs a batch's texts one after another, so a larger
batch buys no speed and costs memory (it keeps the working memory of the largest batch it has run: batches of
64 LoCoMo turn pairs took 95 MB more than 16). Single LoCoMo turns on two idle cores, interleaved runs of 320:
34.8 a second one at a time, 35.0 at 4, 32.1 at 16; the host's background rate from a start, 29.8 notes/s at 4
against 27.7 at 16 (alternating starts). Nothing waits for a batch: a search computes a small backlog itself
(`compute_fresh`)."""

ADOPT_RETRY = 0.1
"""Seconds before an index that was mid-write when the model loaded tries again to start its vectors."""

BACKFILL_STEP = 500
"""Facts a backfill reads the passages of in one event-loop turn (about 6 ms of the loop's time)."""

MeaningState = Literal["on", "loading", "off"]
"""Whether a search ranks by meaning: `on`; `loading`, the model is still loading, so words only; `off`,
semantic recall is switched off or the engine is missing or failed to load."""

VECTOR_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY, v BLOB NOT NULL, after INTEGER);"
"""`after` is NULL: vectors are of a fact alone (files written before composition held pairs, under another
`vector_model`, and are computed again)."""


def _stands_sql(table: str = "") -> str:
    """The SQL condition that a fact stands (as `_stands`), on the columns of `table` (an alias) or unqualified."""
    at = f"{table}." if table else ""
    return f"{at}status = 'live' AND {at}trust = 'confirmed' AND {at}text IS NOT NULL"


_STANDS = _stands_sql()


def _stands(fact: Fact) -> bool:
    return fact.status == "live" and fact.trust == "confirmed" and fact.text is not None


class Passage(NamedTuple):
    """What one fact's vector is computed from: its own text."""

    embedded: str


def compose(cosines: Vectors, before: npt.NDArray[np.int64], dots: Vectors, weight: float) -> Vectors:
    """Each row's cosine with the query once its vector is composed with the row `before` it (-1: none).

    The composed vector is (a + w b) / |a + w b| for unit vectors a (the row) and b (the one before it), so its
    cosine with a query q is (q.a + w q.b) / sqrt(1 + w^2 + 2w a.b): `dots` holds each row's a.b.
    """
    if weight <= 0 or not len(cosines):
        return cosines
    has = before >= 0
    lifted = np.where(has, cosines[np.maximum(before, 0)], 0.0)
    norms = np.sqrt(1.0 + has * (weight * weight + 2.0 * weight * dots))
    return ((cosines + weight * lifted) / norms).astype(np.float32)


class FactVectors:
    """The vectors of one agent's index: which facts need one, the computed ones, and nearest-neighbour search.

    Methods other than those the worker calls (`_take`, `_deliver`) run on the index's thread. With
    `loading` True the process's embedder is still loading: words only until `adopt_loaded` finds it decided.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        embedder: Embedder | None,
        worker: EmbeddingWorker | None,
        *,
        loading: bool = False,
    ) -> None:
        self._db = db
        self.embedder: Embedder | None = None
        self._worker: EmbeddingWorker | None = None
        self._loading = loading and embedder is None
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._in_flight = 0
        self._flying: dict[int, Passage] = {}  # what the worker is computing now
        self._computed_here: dict[int, Passage] = {}  # computed by a search while the worker computed it too
        self._pending: dict[int, Passage] = {}
        self._ready: list[tuple[int, Passage, Vectors]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._held = False
        self._seqs: npt.NDArray[np.int64] | None = None
        self._matrix: Vectors | None = None
        self._before_of: dict[int, int] | None = None  # standing log entry -> the standing one before it
        self._pairs: tuple[npt.NDArray[np.int64], Vectors] | None = None  # each row's before row, and a.b
        if embedder is not None:
            self._use(embedder, worker)
        if self._loading:
            self._adopt_when_decided()

    def _use(self, embedder: Embedder, worker: EmbeddingWorker | None) -> None:
        self.embedder, self._worker = embedder, worker
        model = embedder.name
        if self._meta("vector_model") != model:
            # Vectors of another model (or read another way) are not comparable with this one's queries.
            self._db.execute("DELETE FROM vectors")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (model,))
            self._forget_matrix()

    @property
    def meaning(self) -> MeaningState:
        """Whether searches rank by meaning now."""
        return "on" if self.embedder is not None else "loading" if self._loading else "off"

    def _adopt_when_decided(self) -> None:
        """Adopt the embedder on this index's loop as soon as it has loaded (without a loop: at the next search)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def adopt() -> None:
            if self._closed:
                return
            self.adopt_loaded(worker_for)
            if self._loading:  # the index was mid-write: try again in a moment
                loop.call_later(ADOPT_RETRY, adopt)

        def on_loop() -> None:
            with suppress(RuntimeError):  # the loop has ended: the next open adopts it
                loop.call_soon_threadsafe(adopt)

        when_decided(on_loop)

    def adopt_loaded(self, worker: Callable[[Embedder], EmbeddingWorker]) -> None:
        """Once the process's embedder has loaded (or failed to), use it and queue every standing fact's vector."""
        if not self._loading or self._db.in_transaction:
            return
        embedder, decided = loaded_embedder()
        if not decided:
            return
        self._loading = False
        if embedder is not None and not self._closed:
            self._use(embedder, worker(embedder))
            self.backfill()

    def reconnect(self, db: sqlite3.Connection) -> None:
        """Use `db` from now on (the index file was replaced by a compacted copy of the same rows)."""
        self._db = db
        self._forget_matrix()

    def _forget_matrix(self) -> None:
        """Read the vectors, and which entry stands before which, from the table again at the next search."""
        self._matrix = self._seqs = None
        self._before_of = None
        self._pairs = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Computed vectors wait in memory meanwhile instead of being written (the index is being copied, and
        a write would be lost with the file it went to); they are written when it ends."""
        self._held = True
        try:
            yield
        finally:
            self._held = False
        self.drain()

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # ---- what a fact is embedded from

    def _passages(self, seqs: Iterable[int]) -> dict[int, Passage]:
        """The passage of each standing fact among `seqs`: its text as it stands now."""
        seqs = list(seqs)
        out: dict[int, Passage] = {}
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            sql = f"SELECT seq, text FROM facts WHERE seq IN ({', '.join('?' * len(chunk))}) AND {_STANDS}"
            out.update((int(seq), Passage(str(text))) for seq, text in self._db.execute(sql, chunk).fetchall())
        return out

    # ---- keeping vectors in step with the facts (inside the index's transaction)

    def _drop(self, seq: int) -> None:
        with self._lock:
            self._pending.pop(seq, None)
        self._db.execute("DELETE FROM vectors WHERE seq = ?", (seq,))
        # Also when it had no vector: the entry after it is composed with the one before it from now on.
        self._forget_matrix()

    def track(self, facts: Iterable[Fact]) -> None:
        """A fact that no longer stands loses its vector (and lends its meaning to no neighbour from the next
        search on); one that stands without a vector is queued."""
        facts = list(facts)
        for fact in facts:
            if not _stands(fact):
                self._drop(fact.seq)
        passages = self._passages(fact.seq for fact in facts if _stands(fact))
        have: set[int] = set()
        seqs = list(passages)
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            sql = f"SELECT seq FROM vectors WHERE seq IN ({', '.join('?' * len(chunk))})"
            have.update(int(row[0]) for row in self._db.execute(sql, chunk).fetchall())
        self._queue({seq: passage for seq, passage in passages.items() if seq not in have})

    def backfill(self) -> int:
        """Queue every standing fact that has no vector (on open and after a rebuild); returns how many.

        Under a running event loop the newest `BACKFILL_STEP` are queued now and the rest a step a loop turn,
        so a search waits for none of it (reading 10,000 passages at once held the loop for 140 ms).
        """
        if self._worker is None:
            return 0
        rows = self._db.execute(
            f"SELECT seq FROM facts WHERE {_STANDS} AND seq NOT IN (SELECT seq FROM vectors) ORDER BY seq DESC"
        )
        seqs = [int(row[0]) for row in rows.fetchall()]
        self._backfill_step(seqs)
        return len(seqs)

    def _backfill_step(self, seqs: list[int]) -> None:
        if self._closed:
            return
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        now, rest = (seqs[:BACKFILL_STEP], seqs[BACKFILL_STEP:]) if loop is not None else (seqs, [])
        self._queue(self._passages(now))
        if rest and loop is not None:
            loop.call_soon(self._backfill_step, rest)

    def forget_all(self) -> None:
        """Drop every vector and every queued job (the index is being rebuilt)."""
        with self._lock:
            self._pending.clear()
            self._ready.clear()
        self._db.execute("DELETE FROM vectors")
        self._forget_matrix()

    def _queue(self, jobs: dict[int, Passage]) -> None:
        if not jobs or self._worker is None:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            pass
        with self._lock:
            self._pending.update(jobs)
        self._worker.wake(self)

    # ---- the worker's side (its own thread)

    def _take(self, limit: int) -> list[tuple[int, Passage]]:
        with self._lock:
            if self._closed:
                return []
            newest = sorted(self._pending, reverse=True)[:limit]
            self._in_flight += len(newest)
            jobs = [(seq, self._pending.pop(seq)) for seq in newest]
            self._flying.update(jobs)
            return jobs

    def _deliver(self, jobs: Sequence[tuple[int, Passage]], vectors: Vectors | None) -> None:
        """Hand back computed vectors (None: the batch failed; those facts stay without one until reopened)."""
        with self._lock:
            self._in_flight -= len(jobs)
            for seq, passage in jobs:
                if self._flying.get(seq) == passage:
                    del self._flying[seq]
            self._settled.notify_all()
            for n, (seq, passage) in enumerate(jobs):
                if self._computed_here.get(seq) == passage:
                    del self._computed_here[seq]  # a search computed it already
                elif vectors is not None and not self._closed:
                    self._ready.append((seq, passage, vectors[n]))
            loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self.drain)
            except RuntimeError:  # that loop has ended; the next search or close writes them
                self._loop = None

    @property
    def queued(self) -> int:
        """Facts waiting for their vector (queued, being computed, or computed but not yet written)."""
        with self._lock:
            return len(self._pending) + self._in_flight + len(self._ready)

    def _wait_computed(self, timeout: float) -> bool:
        """Block (any thread) until nothing is queued or being computed; False if `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._settled:
            while self._pending or self._in_flight:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    return False
                self._settled.wait(remaining)
        return True

    def wait_embedded(self, timeout: float) -> bool:
        """Block until every queued fact's vector is written (benchmarks, tests); False if `timeout` passed."""
        done = self._wait_computed(timeout)
        self.drain()
        return done and not self.queued

    async def compute_fresh(self, backlog: int) -> None:
        """Compute, off the loop and without waiting for the worker, the vectors of the facts that wait for one
        when at most `backlog` do (queued, or in the worker's batch), so a fact noted a moment ago is found by
        meaning; a longer backlog (a rebuild's backfill) is left to the worker."""
        embedder = self.embedder
        with self._lock:
            if embedder is None or self._closed or not 0 < len(self._pending) + len(self._flying) <= backlog:
                return
            jobs = list(self._pending.items()) + [item for item in self._flying.items() if item[0] not in self._pending]
        vectors = await asyncio.to_thread(embedder.passages, [passage.embedded for _, passage in jobs])
        with self._lock:
            if self._closed:
                return
            for n, (seq, passage) in enumerate(jobs):
                if self._pending.get(seq) == passage:
                    del self._pending[seq]
                elif self._flying.get(seq) == passage:
                    self._computed_here[seq] = passage  # the worker's copy is dropped when it arrives
                else:
                    continue  # delivered meanwhile, or queued again with another passage
                self._ready.append((seq, passage, vectors[n]))
        self.drain()

    # ---- writing computed vectors, and searching them (the index's thread)

    def drain(self) -> int:
        """Write the computed vectors whose fact still stands with the text that was embedded; returns how many."""
        if self._closed or self._held or self._db.in_transaction:
            return 0
        with self._lock:
            ready, self._ready = self._ready, []
        if not ready:
            return 0
        written: list[tuple[int, Vectors]] = []
        with write_transaction(self._db):
            for seq, passage, vector in ready:
                if self._passages([seq]).get(seq) != passage:
                    continue  # removed meanwhile
                self._db.execute(
                    "INSERT OR REPLACE INTO vectors(seq, v, after) VALUES (?, ?, NULL)",
                    (seq, vector.astype(np.float32).tobytes()),
                )
                written.append((seq, vector))
        if written and self._matrix is not None and self._seqs is not None:
            fresh = np.array([seq for seq, _ in written], dtype=np.int64)
            if np.isin(fresh, self._seqs).any():
                self._forget_matrix()  # a vector replaced: read them all again
            else:
                # Rows stay in seq order (searches look seqs up by bisection).
                seqs = np.concatenate([self._seqs, fresh])
                order = np.argsort(seqs, kind="stable")
                matrix = np.vstack([self._matrix, np.stack([vector for _, vector in written])])
                self._seqs, self._matrix = seqs[order], matrix[order]
                self._learn_befores([seq for seq, _ in written])
        return len(written)

    def _learn_befores(self, seqs: Sequence[int]) -> None:
        """Which standing entry is before each of `seqs`, and before the entry after each (one that stands
        again now comes between two): the only pairs a new vector changes."""
        self._pairs = None
        if self._before_of is None:
            return
        for start in range(0, len(seqs), 500):
            chunk = list(seqs[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            sql = (
                "SELECT f.seq, "
                f"(SELECT p.seq FROM facts p WHERE p.episode = f.episode AND p.seq < f.seq AND {_stands_sql('p')} "
                "ORDER BY p.seq DESC LIMIT 1), "
                f"(SELECT n.seq FROM facts n WHERE n.episode = f.episode AND n.seq > f.seq AND {_stands_sql('n')} "
                "ORDER BY n.seq LIMIT 1) "
                f"FROM facts f WHERE f.seq IN ({marks}) AND f.episode IS NOT NULL"
            )
            for seq, before, after in self._db.execute(sql, chunk).fetchall():
                if before is not None:
                    self._before_of[int(seq)] = int(before)
                if after is not None:
                    self._before_of[int(after)] = int(seq)

    def _load_befores(self) -> dict[int, int]:
        if self._before_of is None:
            sql = (
                "SELECT seq, LAG(seq) OVER (PARTITION BY episode ORDER BY seq) FROM facts "
                f"WHERE episode IS NOT NULL AND {_STANDS}"
            )
            rows = self._db.execute(sql).fetchall()
            self._before_of = {int(seq): int(before) for seq, before in rows if before is not None}
        return self._before_of

    def _pairing(self) -> tuple[npt.NDArray[np.int64], Vectors]:
        """For each row, the row of the entry before it (-1: none has a vector), and the two vectors' dot."""
        seqs, matrix = self._load()
        if self._pairs is None:
            befores = self._load_befores()
            wanted = np.array([befores.get(int(seq), -1) for seq in seqs], dtype=np.int64)
            rows = np.minimum(np.searchsorted(seqs, wanted), max(len(seqs) - 1, 0))
            found = (wanted >= 0) & (seqs[rows] == wanted) if len(seqs) else wanted >= 0
            before = np.where(found, rows, -1)
            dots = np.where(found, np.einsum("ij,ij->i", matrix, matrix[np.maximum(before, 0)]), 0.0)
            self._pairs = (before, dots.astype(np.float32))
        return self._pairs

    def _load(self) -> tuple[npt.NDArray[np.int64], Vectors]:
        if self._matrix is None or self._seqs is None:
            rows = self._db.execute("SELECT seq, v FROM vectors ORDER BY seq").fetchall()
            if not rows:  # nothing to cache: the first vectors written are read from the table
                return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
            self._seqs = np.array([row[0] for row in rows], dtype=np.int64)
            blob = b"".join(row[1] for row in rows)
            self._matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
            self._pairs = None
        return self._seqs, self._matrix

    def _cosines(self, query: Vectors, context: float) -> Vectors:
        """Every row's cosine with `query`, each log entry's vector composed with the one before it at `context`."""
        _, matrix = self._load()
        cosines = matrix @ query.reshape(-1)
        if context <= 0:
            return cosines
        before, dots = self._pairing()
        return compose(cosines, before, dots, context)

    def scores(self, query: Vectors, seqs: Iterable[int], context: float = 0.0) -> dict[int, float]:
        """Cosine similarity of `query` with the vectors of `seqs` (those that have one), composed at `context`."""
        self.drain()
        all_seqs, _ = self._load()
        wanted = np.unique(np.fromiter(seqs, dtype=np.int64))
        if not len(all_seqs) or not len(wanted):
            return {}
        rows = np.minimum(np.searchsorted(all_seqs, wanted), len(all_seqs) - 1)
        rows = rows[all_seqs[rows] == wanted]
        values = self._cosines(query, context)[rows]
        return {int(all_seqs[row]): float(value) for row, value in zip(rows, values, strict=True)}

    def count(self) -> int:
        """How many facts have a vector now."""
        self.drain()
        return len(self._load()[0])

    def nearest(self, query: Vectors, limit: int, context: float = 0.0) -> list[tuple[int, float]]:
        """The `limit` vectors most similar to `query`, best first, as (seq, cosine), each log entry's composed
        with the one before it at weight `context` (0: each alone)."""
        self.drain()
        seqs, _ = self._load()
        if not len(seqs) or limit <= 0:
            return []
        cosines = self._cosines(query, context)
        if limit < len(cosines):
            top = np.argpartition(-cosines, limit)[:limit]
        else:
            top = np.arange(len(cosines))
        top = top[np.argsort(-cosines[top], kind="stable")]
        return [(int(seqs[i]), float(cosines[i])) for i in top]

    def close(self) -> None:
        """Write what is computed and stop taking work (queued facts are computed again on the next open)."""
        self.drain()
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._ready.clear()
            self._computed_here.clear()
        if self._worker is not None:
            self._worker.forget(self)


class EmbeddingWorker:
    """One background thread per process that computes vectors for every open index, newest facts first."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._owners: list[FactVectors] = []
        self._wakeup = threading.Condition()
        self._thread: threading.Thread | None = None
        self._failed = False

    def wake(self, owner: FactVectors) -> None:
        with self._wakeup:
            if owner not in self._owners:
                self._owners.append(owner)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memory-embeddings", daemon=True)
                self._thread.start()
            self._wakeup.notify()

    def forget(self, owner: FactVectors) -> None:
        with self._wakeup:
            if owner in self._owners:
                self._owners.remove(owner)

    def _next(self) -> tuple[FactVectors, list[tuple[int, Passage]]]:
        with self._wakeup:
            while True:
                for owner in list(self._owners):
                    jobs = owner._take(BATCH)
                    if jobs:
                        # Round robin: the next batch comes from another memory if one is waiting.
                        self._owners.remove(owner)
                        self._owners.append(owner)
                        return owner, jobs
                self._wakeup.wait()

    def _run(self) -> None:
        self._embedder.background()
        while True:
            owner, jobs = self._next()
            try:
                vectors = self._embedder.passages([passage.embedded for _, passage in jobs])
            except Exception:  # a failing engine must not end the thread; those facts stay on full-text recall
                if not self._failed:
                    logger.exception("memory embeddings: computing %d vectors failed", len(jobs))
                    self._failed = True
                vectors = None
            owner._deliver(jobs, vectors)


_workers: dict[int, EmbeddingWorker] = {}
_workers_lock = threading.Lock()


def worker_for(embedder: Embedder) -> EmbeddingWorker:
    """The one background worker of `embedder` in this process."""
    with _workers_lock:
        worker = _workers.get(id(embedder))
        if worker is None:
            worker = _workers[id(embedder)] = EmbeddingWorker(embedder)
        return worker
