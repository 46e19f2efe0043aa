"""The vectors of one base's chunks, held in memory for search: a matrix of unit rows and the chunk of each.

Loaded from the index when the base opens, then kept in step by the indexing thread (rows added once their
chunk is stored, dropped when it is removed), so a search never reads vectors from disk. A chunk's vector is
computed from its heading path and the start of its text (`EMBEDDED_CHARS`): a passage of that length costs
the engine a fraction of a whole chunk, and the headings carry much of what it is about.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from host.memory.embedder import Vectors

__all__ = ["ChunkVectors", "EMBEDDED_CHARS", "passage_text"]

EMBEDDED_CHARS = 240
"""Characters of a chunk's text read into its vector, after its heading path."""


def passage_text(heading: str, text: str) -> str:
    """What a chunk's vector is computed from: its heading path, then the start of its text."""
    head = f"{heading}\n" if heading else ""
    return head + text[:EMBEDDED_CHARS]


class ChunkVectors:
    """Thread-safe: the indexing thread adds and drops rows while searches read them.

    Rows live in buffers with room to spare (doubled when full): adding a batch writes only its own rows,
    where copying the whole matrix for every batch of 16 held the interpreter for milliseconds at 19,000
    chunks (the host's event loop waited on it). A search reads a view of the rows filled when it starts;
    rows are only ever written past that view, and a drop builds new buffers.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: Vectors | None = None
        self._count = 0

    def __len__(self) -> int:
        with self._lock:
            return self._count

    def load(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """Replace every row with the stored (chunk id, float32 bytes) pairs."""
        if not rows:
            with self._lock:
                self._ids, self._matrix, self._count = np.zeros(0, dtype=np.int64), None, 0
            return
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1).copy()
        with self._lock:
            self._ids, self._matrix, self._count = ids, matrix, len(ids)

    def add(self, ids: Sequence[int], vectors: Vectors | None) -> None:
        """Add rows for chunks just stored (`ids` in the order of `vectors`' rows)."""
        if not ids or vectors is None:
            return
        fresh = np.asarray(ids, dtype=np.int64)
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(fresh), -1)
        with self._lock:
            count = self._count
            if count and np.isin(fresh, self._ids[:count]).any():  # a chunk's vector again: rare, rebuild
                keep = ~np.isin(self._ids[:count], fresh)
                assert self._matrix is not None
                self._ids, self._matrix = self._ids[:count][keep], self._matrix[:count][keep]
                count = self._count = len(self._ids)
            needed = count + len(fresh)
            if self._matrix is None or needed > len(self._ids):
                capacity = max(needed, 2 * len(self._ids), 64)
                ids_buffer = np.zeros(capacity, dtype=np.int64)
                matrix_buffer = np.zeros((capacity, rows.shape[1]), dtype=np.float32)
                if self._matrix is not None:
                    ids_buffer[:count] = self._ids[:count]
                    matrix_buffer[:count] = self._matrix[:count]
                self._ids, self._matrix = ids_buffer, matrix_buffer
            self._ids[count:needed] = fresh
            self._matrix[count:needed] = rows
            self._count = needed

    def drop(self, ids: Sequence[int]) -> None:
        """Forget the rows of removed chunks."""
        if not ids:
            return
        with self._lock:
            count = self._count
            keep = ~np.isin(self._ids[:count], np.asarray(ids, dtype=np.int64))
            if keep.all():
                return
            # New buffers of the same room (a search may still read the old ones), so the next add copies nothing.
            kept = int(keep.sum())
            ids_buffer = np.zeros(len(self._ids), dtype=np.int64)
            ids_buffer[:kept] = self._ids[:count][keep]
            if self._matrix is not None:
                matrix_buffer = np.zeros_like(self._matrix)
                matrix_buffer[:kept] = self._matrix[:count][keep]
                self._matrix = matrix_buffer
            self._ids, self._count = ids_buffer, kept

    def nearest(self, query: Vectors, limit: int) -> list[tuple[int, float]]:
        """The `limit` chunks most similar to `query`, best first, as (chunk id, cosine)."""
        with self._lock:
            count = self._count
            ids = self._ids[:count]
            matrix = self._matrix[:count] if self._matrix is not None else None
        if matrix is None or not count or limit <= 0:
            return []
        cosines = matrix @ query.reshape(-1)
        top = np.argpartition(-cosines, limit)[:limit] if limit < len(cosines) else np.arange(len(cosines))
        top = top[np.argsort(-cosines[top], kind="stable")]
        return [(int(ids[i]), float(cosines[i])) for i in top]
