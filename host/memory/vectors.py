"""Semantic recall's derived data: one embedding per standing fact, kept in `index.sqlite`, computed off the loop.

A fact has a vector only while it stands (live, confirmed, with text): a retraction, supersession, rejection
or erase deletes it in the same transaction (secure delete zeroes the bytes, an erase's vacuum drops the
pages). Vectors are computed by one background thread per process, newest facts first, in small batches,
and written on the index's own thread only if the fact still stands with the very text embedded, so an erase
that races the computation leaves nothing behind. Deleting the index loses nothing: it is computed again.
Search by meaning may read a log entry with its context: its NEIGHBOURS nearest same-episode entries that have
a vector (so only standing ones) on each side, the nearest of them in meaning added at a weight.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from host.memory.embedder import Embedder, Vectors
from host.memory.episodes import NEIGHBOURS
from host.memory.fold import Fact

__all__ = ["FactVectors", "EmbeddingWorker", "BATCH", "VECTOR_SCHEMA", "worker_for"]

logger = logging.getLogger(__name__)

BATCH = 16
"""Texts embedded per engine call: large enough to share the weights' memory traffic, small enough that a
closed memory or an erase waits at most one batch."""

VECTOR_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY, v BLOB NOT NULL);"

_STANDS = "status = 'live' AND trust = 'confirmed' AND text IS NOT NULL"


def _stands(fact: Fact) -> bool:
    return fact.status == "live" and fact.trust == "confirmed" and fact.text is not None


class FactVectors:
    """The vectors of one agent's index: which facts need one, the computed ones, and nearest-neighbour search.

    Methods other than those the worker calls (`_take`, `_deliver`) run on the index's thread.
    """

    def __init__(self, db: sqlite3.Connection, embedder: Embedder | None, worker: EmbeddingWorker | None) -> None:
        self._db = db
        self.embedder = embedder
        self._worker = worker if embedder is not None else None
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._in_flight = 0
        self._pending: dict[int, str] = {}
        self._ready: list[tuple[int, str, Vectors]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._seqs: npt.NDArray[np.int64] | None = None
        self._matrix: Vectors | None = None
        self._episodes: list[str | None] = []
        self._neighbours: npt.NDArray[np.int64] | None = None
        if embedder is not None and self._meta("vector_model") != embedder.name:
            # Vectors of another model are not comparable with this one's queries.
            self._db.execute("DELETE FROM vectors")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (embedder.name,))

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # ---- keeping vectors in step with the facts (inside the index's transaction)

    def track(self, facts: Iterable[Fact]) -> None:
        """A fact that no longer stands loses its vector; one that stands and has none is queued."""
        wanted: dict[int, str] = {}
        for fact in facts:
            if _stands(fact):
                wanted[fact.seq] = fact.text or ""
                continue
            with self._lock:
                self._pending.pop(fact.seq, None)
            if self._db.execute("DELETE FROM vectors WHERE seq = ?", (fact.seq,)).rowcount:
                self._matrix = self._seqs = self._neighbours = None
        if wanted and self._worker is not None:
            seqs = list(wanted)
            have: set[int] = set()
            for start in range(0, len(seqs), 500):
                chunk = seqs[start : start + 500]
                sql = f"SELECT seq FROM vectors WHERE seq IN ({', '.join('?' * len(chunk))})"
                have.update(row[0] for row in self._db.execute(sql, chunk))
            self._queue({seq: text for seq, text in wanted.items() if seq not in have})

    def backfill(self) -> int:
        """Queue every standing fact that has no vector (on open and after a rebuild); returns how many."""
        if self._worker is None:
            return 0
        rows = self._db.execute(
            f"SELECT seq, text FROM facts WHERE {_STANDS} AND seq NOT IN (SELECT seq FROM vectors)"
        ).fetchall()
        self._queue(dict(rows))
        return len(rows)

    def forget_all(self) -> None:
        """Drop every vector and every queued job (the index is being rebuilt)."""
        with self._lock:
            self._pending.clear()
            self._ready.clear()
        self._db.execute("DELETE FROM vectors")
        self._matrix = self._seqs = self._neighbours = None

    def _queue(self, jobs: dict[int, str]) -> None:
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

    def _take(self, limit: int) -> list[tuple[int, str]]:
        with self._lock:
            if self._closed:
                return []
            newest = sorted(self._pending, reverse=True)[:limit]
            self._in_flight += len(newest)
            return [(seq, self._pending.pop(seq)) for seq in newest]

    def _deliver(self, jobs: Sequence[tuple[int, str]], vectors: Vectors | None) -> None:
        """Hand back computed vectors (None: the batch failed; those facts stay without one until reopened)."""
        with self._lock:
            self._in_flight -= len(jobs)
            self._settled.notify_all()
            if self._closed or vectors is None:
                return
            self._ready += [(seq, text, vectors[n]) for n, (seq, text) in enumerate(jobs)]
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

    async def settle(self, backlog: int, timeout: float) -> None:
        """Wait (off the loop) for a backlog of at most `backlog` facts, so a fact noted a moment ago is found
        by meaning; a longer backlog (a rebuild's backfill) is not waited for."""
        if 0 < self.queued <= backlog:
            await asyncio.to_thread(self._wait_computed, timeout)
            self.drain()

    # ---- writing computed vectors, and searching them (the index's thread)

    def drain(self) -> int:
        """Write the computed vectors whose fact still stands with the text that was embedded; returns how many."""
        if self._closed or self._db.in_transaction:
            return 0
        with self._lock:
            ready, self._ready = self._ready, []
        if not ready:
            return 0
        written: list[tuple[int, Vectors]] = []
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for seq, text, vector in ready:
                cursor = self._db.execute(
                    f"INSERT OR REPLACE INTO vectors(seq, v) SELECT seq, ? FROM facts WHERE seq = ? AND {_STANDS} "
                    "AND text = ?",
                    (vector.astype(np.float32).tobytes(), seq, text),
                )
                if cursor.rowcount:
                    written.append((seq, vector))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        if written and self._matrix is not None and self._seqs is not None:
            # Rows stay in seq order (searches look seqs up by bisection; episodes are read in order).
            seqs = np.concatenate([self._seqs, np.array([seq for seq, _ in written], dtype=np.int64)])
            order = np.argsort(seqs, kind="stable")
            matrix = np.vstack([self._matrix, np.stack([vector for _, vector in written])])
            episodes = self._episodes + self._episodes_of([seq for seq, _ in written])
            self._seqs, self._matrix = seqs[order], matrix[order]
            self._episodes = [episodes[row] for row in order]
            self._neighbours = None
        return len(written)

    def _episodes_of(self, seqs: Sequence[int]) -> list[str | None]:
        found: dict[int, str | None] = {}
        for start in range(0, len(seqs), 500):
            chunk = list(seqs[start : start + 500])
            sql = f"SELECT seq, episode FROM facts WHERE seq IN ({', '.join('?' * len(chunk))})"
            found.update(self._db.execute(sql, chunk).fetchall())
        return [found.get(seq) for seq in seqs]

    def _load(self) -> tuple[npt.NDArray[np.int64], Vectors]:
        if self._matrix is None or self._seqs is None:
            rows = self._db.execute(
                "SELECT vectors.seq, v, episode FROM vectors LEFT JOIN facts USING (seq) ORDER BY vectors.seq"
            ).fetchall()
            self._neighbours = None
            if not rows:  # nothing to cache: the first vectors written are read from the table
                return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
            self._seqs = np.array([row[0] for row in rows], dtype=np.int64)
            blob = b"".join(row[1] for row in rows)
            self._matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
            self._episodes = [row[2] for row in rows]
        return self._seqs, self._matrix

    def _context_rows(self) -> npt.NDArray[np.int64]:
        """For each row, the rows of its NEIGHBOURS nearest same-episode vectors on each side (-1: none)."""
        if self._neighbours is None:
            count = len(self._episodes)
            out = np.full((count, 2 * NEIGHBOURS), -1, dtype=np.int64)
            members: dict[str, list[int]] = {}
            for row, episode in enumerate(self._episodes):  # rows are in seq order, so each list is too
                if episode is not None:
                    members.setdefault(episode, []).append(row)
            for rows in members.values():
                for at, row in enumerate(rows):
                    near = rows[max(0, at - NEIGHBOURS) : at] + rows[at + 1 : at + 1 + NEIGHBOURS]
                    out[row, : len(near)] = near
            self._neighbours = out
        return self._neighbours

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

    def nearest(self, query: Vectors, limit: int, *, context: float = 0.0) -> list[tuple[int, float]]:
        """The `limit` vectors most similar to `query`, best first, as (seq, cosine).

        With `context` > 0 a vector is ranked by its cosine plus `context` times the best cosine among its
        episode neighbours (its own when it has none, so notes and log entries compare on one scale).
        """
        self.drain()
        seqs, matrix = self._load()
        if not len(seqs) or limit <= 0:
            return []
        cosines = matrix @ query.reshape(-1)
        values = cosines
        if context > 0:
            padded = np.append(cosines, -np.inf)  # row -1 (no neighbour) reads -inf
            best = padded[self._context_rows()].max(axis=1)
            values = cosines + context * np.where(np.isfinite(best), best, cosines)
        if limit < len(values):
            top = np.argpartition(-values, limit)[:limit]
        else:
            top = np.arange(len(values))
        top = top[np.argsort(-values[top], kind="stable")]
        return [(int(seqs[i]), float(cosines[i])) for i in top]

    def close(self) -> None:
        """Write what is computed and stop taking work (queued facts are computed again on the next open)."""
        self.drain()
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._ready.clear()
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

    def _next(self) -> tuple[FactVectors, list[tuple[int, str]]]:
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
                vectors = self._embedder.passages([text for _, text in jobs])
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
