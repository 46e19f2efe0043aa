"""Semantic recall's derived data: one embedding per standing fact, kept in `index.sqlite`, computed off the loop.

A fact has a vector only while it stands (live, confirmed, with text): a retraction, supersession, rejection
or erase deletes it in the same transaction (secure delete zeroes the bytes, an erase's vacuum drops the
pages). A log entry is embedded in its context: the text of the standing log entry just before it in its
episode (the same day), then its own. When that entry stops standing, or one before it stands again, the
vector is deleted in the same transaction and computed again, so a removed fact's text lives on in no
neighbour's vector. Vectors are computed by one background thread per process, newest facts first, in small
batches, and written on the index's own thread only if the fact still stands with the very text and
context embedded, so an erase that races the computation leaves nothing behind. Deleting the index loses
nothing: it is computed again.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from host.memory.embedder import Embedder, Vectors, loaded_embedder
from host.memory.fold import Fact
from host.store.sqlite_tx import write_transaction

__all__ = ["FactVectors", "EmbeddingWorker", "BATCH", "BACKFILL_STEP", "VECTOR_SCHEMA", "worker_for", "MeaningState"]

logger = logging.getLogger(__name__)

BATCH = 16
"""Texts embedded per background engine call. The engine keeps the working memory of the largest batch it has
run, so the batch bounds what the host holds: LoCoMo turn pairs at 64 a call took 95 MB more and 16 took 26 MB,
at about the same speed (7.6 and 8.9 passages per CPU-second, one thread). Nothing waits for a batch: a search
computes a small backlog itself (`compute_fresh`)."""

BACKFILL_STEP = 500
"""Facts a backfill reads the passages of in one event-loop turn (about 6 ms of the loop's time)."""

MeaningState = Literal["on", "loading", "off"]
"""Whether a search ranks by meaning: `on`; `loading`, the model is still loading, so words only; `off`,
semantic recall is switched off or the engine is missing or failed to load."""

VECTOR_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY, v BLOB NOT NULL, after INTEGER);"
"""`after`: the log entry whose text was embedded before the fact's own (NULL: the fact alone)."""

_STANDS = "status = 'live' AND trust = 'confirmed' AND text IS NOT NULL"


def _stands(fact: Fact) -> bool:
    return fact.status == "live" and fact.trust == "confirmed" and fact.text is not None


class Passage(NamedTuple):
    """What one fact's vector is computed from: its own text, and the entry read before it (if any)."""

    text: str
    after: int | None
    embedded: str


class FactVectors:
    """The vectors of one agent's index: which facts need one, the computed ones, and nearest-neighbour search.

    Methods other than those the worker calls (`_take`, `_deliver`) run on the index's thread. With
    `context` False every fact is embedded alone (benchmarks' ablation). With `loading` True the process's
    embedder is still loading: words only until `adopt_loaded` finds it decided.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        embedder: Embedder | None,
        worker: EmbeddingWorker | None,
        *,
        context: bool = True,
        loading: bool = False,
    ) -> None:
        self._db = db
        self.embedder: Embedder | None = None
        self._context = context
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
        if embedder is not None:
            self._use(embedder, worker)

    def _use(self, embedder: Embedder, worker: EmbeddingWorker | None) -> None:
        self.embedder, self._worker = embedder, worker
        model = embedder.name + ("+before" if self._context else "")
        if self._meta("vector_model") != model:
            # Vectors of another model (or read another way) are not comparable with this one's queries.
            self._db.execute("DELETE FROM vectors")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (model,))
            self._matrix = self._seqs = None

    @property
    def meaning(self) -> MeaningState:
        """Whether searches rank by meaning now."""
        return "on" if self.embedder is not None else "loading" if self._loading else "off"

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
        self._matrix = self._seqs = None

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

    def _before(self, seq: int, episode: str | None) -> tuple[int, str] | None:
        """The standing log entry just before `seq` in its episode, as (seq, text)."""
        if episode is None or not self._context:
            return None
        row = self._db.execute(
            f"SELECT seq, text FROM facts WHERE episode = ? AND seq < ? AND {_STANDS} ORDER BY seq DESC LIMIT 1",
            (episode, seq),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def _passages(self, seqs: Iterable[int]) -> dict[int, Passage]:
        """The passage of each standing fact among `seqs`, as it stands now."""
        seqs = list(seqs)
        out: dict[int, Passage] = {}
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            sql = f"SELECT seq, text, episode FROM facts WHERE seq IN ({', '.join('?' * len(chunk))}) AND {_STANDS}"
            for seq, text, episode in self._db.execute(sql, chunk).fetchall():
                before = self._before(seq, episode)
                if before is None:
                    out[seq] = Passage(text, None, text)
                else:
                    out[seq] = Passage(text, before[0], f"{before[1]}\n{text}")
        return out

    def _next_after(self, fact: Fact) -> int | None:
        """The standing log entry just after `fact` in its episode: the one that reads `fact` as its context."""
        episode = self._db.execute("SELECT episode FROM facts WHERE seq = ?", (fact.seq,)).fetchone()
        if episode is None or episode[0] is None or not self._context:
            return None
        row = self._db.execute(
            f"SELECT seq FROM facts WHERE episode = ? AND seq > ? AND {_STANDS} ORDER BY seq LIMIT 1",
            (episode[0], fact.seq),
        ).fetchone()
        return None if row is None else int(row[0])

    # ---- keeping vectors in step with the facts (inside the index's transaction)

    def _drop(self, seq: int) -> None:
        with self._lock:
            self._pending.pop(seq, None)
        if self._db.execute("DELETE FROM vectors WHERE seq = ?", (seq,)).rowcount:
            self._matrix = self._seqs = None

    def track(self, facts: Iterable[Fact]) -> None:
        """A fact that no longer stands loses its vector, and so does the entry that read it as context (it is
        queued again); one that stands without a vector, or with one read in another context, is queued."""
        facts = list(facts)
        check = {fact.seq for fact in facts if _stands(fact)}
        for fact in facts:
            if not _stands(fact):
                self._drop(fact.seq)
            if fact.tier == "log" and (follower := self._next_after(fact)) is not None:
                check.add(follower)
        if not check:
            return
        passages = self._passages(check)
        have: dict[int, int | None] = {}
        seqs = list(passages)
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            sql = f"SELECT seq, after FROM vectors WHERE seq IN ({', '.join('?' * len(chunk))})"
            have.update(self._db.execute(sql, chunk).fetchall())
        stale = {seq: p for seq, p in passages.items() if seq not in have or have[seq] != p.after}
        for seq in stale:
            if seq in have:
                self._drop(seq)
        self._queue(stale)

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
        self._matrix = self._seqs = None

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
        """Write the computed vectors whose fact still stands with the text and context that were embedded;
        returns how many."""
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
                    continue  # removed, or read in another context now: its new passage is queued
                self._db.execute(
                    "INSERT OR REPLACE INTO vectors(seq, v, after) VALUES (?, ?, ?)",
                    (seq, vector.astype(np.float32).tobytes(), passage.after),
                )
                written.append((seq, vector))
        if written and self._matrix is not None and self._seqs is not None:
            fresh = np.array([seq for seq, _ in written], dtype=np.int64)
            if np.isin(fresh, self._seqs).any():
                self._matrix = self._seqs = None  # a vector replaced: read them all again
            else:
                # Rows stay in seq order (searches look seqs up by bisection).
                seqs = np.concatenate([self._seqs, fresh])
                order = np.argsort(seqs, kind="stable")
                matrix = np.vstack([self._matrix, np.stack([vector for _, vector in written])])
                self._seqs, self._matrix = seqs[order], matrix[order]
        return len(written)

    def _load(self) -> tuple[npt.NDArray[np.int64], Vectors]:
        if self._matrix is None or self._seqs is None:
            rows = self._db.execute("SELECT seq, v FROM vectors ORDER BY seq").fetchall()
            if not rows:  # nothing to cache: the first vectors written are read from the table
                return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
            self._seqs = np.array([row[0] for row in rows], dtype=np.int64)
            blob = b"".join(row[1] for row in rows)
            self._matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
        return self._seqs, self._matrix

    def scores(self, query: Vectors, seqs: Iterable[int]) -> dict[int, float]:
        """Cosine similarity of `query` with the vectors of `seqs` (those that have one)."""
        self.drain()
        all_seqs, matrix = self._load()
        wanted = np.unique(np.fromiter(seqs, dtype=np.int64))
        if not len(all_seqs) or not len(wanted):
            return {}
        rows = np.minimum(np.searchsorted(all_seqs, wanted), len(all_seqs) - 1)
        rows = rows[all_seqs[rows] == wanted]
        values = matrix[rows] @ query.reshape(-1)
        return {int(all_seqs[row]): float(value) for row, value in zip(rows, values, strict=True)}

    def count(self) -> int:
        """How many facts have a vector now."""
        self.drain()
        return len(self._load()[0])

    def nearest(self, query: Vectors, limit: int) -> list[tuple[int, float]]:
        """The `limit` vectors most similar to `query`, best first, as (seq, cosine)."""
        self.drain()
        seqs, matrix = self._load()
        if not len(seqs) or limit <= 0:
            return []
        cosines = matrix @ query.reshape(-1)
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
