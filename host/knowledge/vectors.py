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
    """Thread-safe: the indexing thread adds and drops rows while searches read them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: Vectors | None = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    def load(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """Replace every row with the stored (chunk id, float32 bytes) pairs."""
        if not rows:
            self.add([], None)
            return
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1)
        with self._lock:
            self._ids, self._matrix = ids, matrix

    def add(self, ids: Sequence[int], vectors: Vectors | None) -> None:
        """Add rows for chunks just stored (`ids` in the order of `vectors`' rows)."""
        if not ids or vectors is None:
            return
        with self._lock:
            fresh = np.asarray(ids, dtype=np.int64)
            keep = ~np.isin(self._ids, fresh)
            old = self._matrix[keep] if self._matrix is not None else np.zeros((0, vectors.shape[1]), np.float32)
            self._ids = np.concatenate([self._ids[keep], fresh])
            self._matrix = np.vstack([old, vectors.astype(np.float32)])

    def drop(self, ids: Sequence[int]) -> None:
        """Forget the rows of removed chunks."""
        if not ids:
            return
        with self._lock:
            keep = ~np.isin(self._ids, np.asarray(ids, dtype=np.int64))
            self._ids = self._ids[keep]
            self._matrix = self._matrix[keep] if self._matrix is not None else None

    def nearest(self, query: Vectors, limit: int) -> list[tuple[int, float]]:
        """The `limit` chunks most similar to `query`, best first, as (chunk id, cosine)."""
        with self._lock:
            ids, matrix = self._ids, self._matrix
        if matrix is None or not len(ids) or limit <= 0:
            return []
        cosines = matrix @ query.reshape(-1)
        top = np.argpartition(-cosines, limit)[:limit] if limit < len(cosines) else np.arange(len(cosines))
        top = top[np.argsort(-cosines[top], kind="stable")]
        return [(int(ids[i]), float(cosines[i])) for i in top]
