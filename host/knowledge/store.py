"""One knowledge base on disk, `knowledge/index.sqlite`: sources, their files, chunks, the word index, vectors.

The word index is a contentless FTS5 table (the text is kept once, in `chunks`); a chunk leaves it through
FTS5's `delete` with the very values it was indexed with, recomputed from the chunk. Secure delete is on, so
a removed row's bytes are zeroed, and `purge` merges the index's segments, vacuums and truncates the
write-ahead log, so a removed source leaves no byte of its text in any file. The file is written by the
indexing thread only; searches read through a connection of their own (WAL: a read never waits for a write).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from host.knowledge.chunks import Chunk, heading_text
from host.memory.query import FTS_TOKENIZER, index_body
from host.store.sqlite_tx import write_transaction

__all__ = [
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "ChunkRow",
    "FileState",
    "KnowledgeStore",
    "SourceRow",
    "SourceSpec",
    "word_values",
]

INDEX_FILE = "index.sqlite"
SCHEMA_VERSION = "1"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    id TEXT PRIMARY KEY, path TEXT NOT NULL, kind TEXT NOT NULL, pattern TEXT, paused INTEGER NOT NULL DEFAULT 0,
    added_at TEXT NOT NULL, indexed_at TEXT);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, path TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, unit TEXT NOT NULL DEFAULT 'line', reason TEXT, UNIQUE(source, path));
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY AUTOINCREMENT, file INTEGER NOT NULL, ord INTEGER NOT NULL, heading TEXT NOT NULL,
    start INTEGER NOT NULL, end INTEGER NOT NULL, text TEXT NOT NULL, masked INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file, ord);
CREATE TABLE IF NOT EXISTS vectors(chunk INTEGER PRIMARY KEY, v BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(heading, body, content='', tokenize='{FTS_TOKENIZER}');
"""


@dataclass(frozen=True, slots=True)
class SourceRow:
    """An admitted source with its counts: files indexed, files that failed (with why), chunks, vectors."""

    source_id: str
    path: str
    kind: str
    pattern: str | None
    paused: bool
    added_at: str
    indexed_at: str | None
    files: int
    chunks: int
    vectors: int
    failed: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What the indexer needs of a source: where it is, file or folder, its file pattern, paused or not."""

    source_id: str
    path: str
    kind: str
    pattern: str | None
    paused: bool


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A stored chunk and where it comes from."""

    chunk_id: int
    source_id: str
    path: str
    unit: str
    ord: int
    heading: tuple[str, ...]
    start: int
    end: int
    text: str
    masked: bool


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index holds of one file: its modification time and size when read, and why it failed (if)."""

    mtime_ns: int
    size: int
    reason: str | None


_CHUNK_COLUMNS = (
    "c.id, f.source, f.path, f.unit, c.ord, c.heading, c.start, c.end, c.text, c.masked FROM chunks c "
    "JOIN files f ON f.id = c.file"
)


def _chunk(row: Sequence[Any]) -> ChunkRow:
    heading = tuple(json.loads(row[5]))
    return ChunkRow(row[0], row[1], row[2], row[3], row[4], heading, row[6], row[7], row[8], bool(row[9]))


def word_values(heading: tuple[str, ...], text: str) -> tuple[str, str]:
    """What the word index holds for a chunk: its heading path as one line, and its text's index body."""
    return heading_text(heading), index_body(text)


def _word_values(heading: str, text: str) -> tuple[str, str]:
    return word_values(tuple(json.loads(heading)), text)


class KnowledgeStore:
    """One connection to one base's file. Writes come from one thread; `lock` serialises a connection's users."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA secure_delete = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA busy_timeout = 5000")
        with self.lock:
            self._db.executescript(_SCHEMA)
            found = self._db.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()
            if found is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if name.exists():
                os.chmod(name, 0o600)  # the person's documents: for no other user of the machine

    def close(self) -> None:
        with self.lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock, write_transaction(self._db) as db:
            yield db

    # ---- sources

    def add_source(self, source_id: str, path: str, kind: str, pattern: str | None, added_at: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO sources(id, path, kind, pattern, added_at) VALUES (?, ?, ?, ?, ?)",
                (source_id, path, kind, pattern, added_at),
            )

    def set_paused(self, source_id: str, paused: bool) -> None:
        with self.transaction() as db:
            db.execute("UPDATE sources SET paused = ? WHERE id = ?", (int(paused), source_id))

    def set_indexed(self, source_id: str, when: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE sources SET indexed_at = ? WHERE id = ?", (when, source_id))

    def sources(self) -> list[SourceRow]:
        """Every source with its counts, in the order they were admitted."""
        with self.lock:
            db = self._db
            counts = {
                row[0]: (row[1], row[2])
                for row in db.execute(
                    "SELECT f.source, count(c.id), count(v.chunk) FROM files f JOIN chunks c ON c.file = f.id "
                    "LEFT JOIN vectors v ON v.chunk = c.id GROUP BY f.source"
                )
            }
            files = dict(db.execute("SELECT source, count(*) FROM files WHERE reason IS NULL GROUP BY source"))
            failed: dict[str, list[tuple[str, str]]] = {}
            for source, path, reason in db.execute(
                "SELECT source, path, reason FROM files WHERE reason IS NOT NULL ORDER BY path"
            ):
                failed.setdefault(source, []).append((path, reason))
            rows = db.execute(
                "SELECT id, path, kind, pattern, paused, added_at, indexed_at FROM sources ORDER BY rowid"
            ).fetchall()
        return [
            SourceRow(
                row[0],
                row[1],
                row[2],
                row[3],
                bool(row[4]),
                row[5],
                row[6],
                int(files.get(row[0], 0)),
                counts.get(row[0], (0, 0))[0],
                counts.get(row[0], (0, 0))[1],
                tuple(failed.get(row[0], ())),
            )
            for row in rows
        ]

    def specs(self) -> dict[str, SourceSpec]:
        """Every source's path, kind, pattern and whether it is paused, without its counts."""
        with self.lock:
            rows = self._db.execute("SELECT id, path, kind, pattern, paused FROM sources ORDER BY rowid").fetchall()
        return {row[0]: SourceSpec(row[0], row[1], row[2], row[3], bool(row[4])) for row in rows}

    def counts(self) -> tuple[int, int]:
        """(chunks, chunks with a vector) of the whole base."""
        with self.lock:
            chunks = int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])
            vectors = int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])
        return chunks, vectors

    def has_chunks(self) -> bool:
        with self.lock:
            return bool(self._db.execute("SELECT EXISTS(SELECT 1 FROM chunks)").fetchone()[0])

    def remove_source(self, source_id: str) -> list[int]:
        """Delete a source and everything of it (then `purge`); returns the ids of the chunks removed."""
        with self.transaction() as db:
            files = [row[0] for row in db.execute("SELECT id FROM files WHERE source = ?", (source_id,))]
            removed = self._drop_files(db, files)
            db.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        return removed

    # ---- files

    def files(self, source_id: str) -> dict[str, FileState]:
        with self.lock:
            rows = self._db.execute("SELECT path, mtime_ns, size, reason FROM files WHERE source = ?", (source_id,))
            return {path: FileState(mtime, size, reason) for path, mtime, size, reason in rows}

    def _drop_files(self, db: sqlite3.Connection, files: Sequence[int]) -> list[int]:
        removed: list[int] = []
        for file_id in files:
            rows = db.execute("SELECT id, heading, text FROM chunks WHERE file = ?", (file_id,)).fetchall()
            for chunk_id, heading, text in rows:
                db.execute(
                    "INSERT INTO words(words, rowid, heading, body) VALUES ('delete', ?, ?, ?)",
                    (chunk_id, *_word_values(heading, text)),
                )
                removed.append(chunk_id)
            db.execute("DELETE FROM vectors WHERE chunk IN (SELECT id FROM chunks WHERE file = ?)", (file_id,))
            db.execute("DELETE FROM chunks WHERE file = ?", (file_id,))
            db.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return removed

    def replace_file(
        self,
        source_id: str,
        path: str,
        state: FileState,
        unit: str,
        chunks: Sequence[tuple[Chunk, bool]],
        words: Sequence[tuple[str, str]] = (),
    ) -> tuple[list[int], list[int]]:
        """Store a file's chunks (or, with `state.reason`, that it failed) in place of what it had; `words`, when
        given, holds each chunk's `word_values` (computed by the reading process, not on this thread).

        Returns:
            The ids of the chunks removed and of those added.
        """
        with self.transaction() as db:
            old = [
                row[0] for row in db.execute("SELECT id FROM files WHERE source = ? AND path = ?", (source_id, path))
            ]
            removed = self._drop_files(db, old)
            cursor = db.execute(
                "INSERT INTO files(source, path, mtime_ns, size, unit, reason) VALUES (?, ?, ?, ?, ?, ?)",
                (source_id, path, state.mtime_ns, state.size, unit, state.reason),
            )
            file_id = cursor.lastrowid
            # executemany steps the rows in C: the indexing thread holds the interpreter far less than a loop
            # of one execute per row did (the event loop waits for it while it holds it).
            db.executemany(
                "INSERT INTO chunks(file, ord, heading, start, end, text, masked) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        file_id,
                        ordinal,
                        json.dumps(list(chunk.heading), ensure_ascii=False),
                        chunk.start,
                        chunk.end,
                        chunk.text,
                        int(masked),
                    )
                    for ordinal, (chunk, masked) in enumerate(chunks)
                ],
            )
            added = [row[0] for row in db.execute("SELECT id FROM chunks WHERE file = ? ORDER BY ord", (file_id,))]
            values = words or [word_values(chunk.heading, chunk.text) for chunk, _ in chunks]
            db.executemany(
                "INSERT INTO words(rowid, heading, body) VALUES (?, ?, ?)",
                [(chunk_id, *value) for chunk_id, value in zip(added, values, strict=True)],
            )
        return removed, added

    def drop_file(self, source_id: str, path: str) -> list[int]:
        """Forget one file (it was deleted); returns the ids of its chunks."""
        with self.transaction() as db:
            files = [
                row[0] for row in db.execute("SELECT id FROM files WHERE source = ? AND path = ?", (source_id, path))
            ]
            return self._drop_files(db, files)

    # ---- vectors

    def without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        """Chunks that have no vector yet, oldest first, as (id, heading line, text)."""
        with self.lock:
            rows = self._db.execute(
                "SELECT id, heading, text FROM chunks WHERE id NOT IN (SELECT chunk FROM vectors) ORDER BY id LIMIT ?",
                (limit,),
            ).fetchall()
        return [(row[0], heading_text(tuple(json.loads(row[1]))), row[2]) for row in rows]

    def put_vectors(self, vectors: Sequence[tuple[int, bytes]]) -> list[int]:
        """Store vectors of chunks that still exist; returns the ids stored."""
        stored: list[int] = []
        with self.transaction() as db:
            for chunk_id, blob in vectors:
                if db.execute("SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)).fetchone() is None:
                    continue  # the chunk was removed while its vector was computed
                db.execute("INSERT OR REPLACE INTO vectors(chunk, v) VALUES (?, ?)", (chunk_id, blob))
                stored.append(chunk_id)
        return stored

    def all_vectors(self) -> list[tuple[int, bytes]]:
        with self.lock:
            return self._db.execute("SELECT chunk, v FROM vectors ORDER BY chunk").fetchall()

    # ---- reading

    def words(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Chunks matching an FTS5 expression, best BM25 first (the heading and the text weighed alike)."""
        with self.lock:
            return self._db.execute(
                "SELECT rowid, bm25(words) AS score FROM words WHERE words MATCH ? ORDER BY score LIMIT ?",
                (expression, limit),
            ).fetchall()

    def plain_words(self, expression: str, limit: int) -> list[int]:
        """Plain FTS5 over the same chunks (BM25 over all columns alike): the benchmarks' baseline."""
        with self.lock:
            rows = self._db.execute(
                "SELECT rowid FROM words WHERE words MATCH ? ORDER BY rank LIMIT ?", (expression, limit)
            ).fetchall()
        return [row[0] for row in rows]

    def holding(self, term: str, ids: Sequence[int]) -> list[int]:
        """Those of the chunks `ids` whose heading or text holds `term` (as the index stems it)."""
        if not ids:
            return []
        phrase = '"' + term.replace('"', '""') + '"'
        marks = ", ".join("?" * len(ids))
        with self.lock:
            rows = self._db.execute(
                f"SELECT rowid FROM words WHERE words MATCH ? AND rowid IN ({marks})", (phrase, *ids)
            )
            return [row[0] for row in rows]

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        found: dict[int, ChunkRow] = {}
        with self.lock:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                marks = ", ".join("?" * len(part))
                for row in self._db.execute(f"SELECT {_CHUNK_COLUMNS} WHERE c.id IN ({marks})", part):
                    found[row[0]] = _chunk(row)
        return found

    def neighbours(self, chunk_id: int, before: int, after: int) -> list[ChunkRow]:
        """The chunk and up to `before` / `after` chunks around it in its file, in file order."""
        with self.lock:
            row = self._db.execute("SELECT file, ord FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
            if row is None:
                return []
            rows = self._db.execute(
                f"SELECT {_CHUNK_COLUMNS} WHERE c.file = ? AND c.ord BETWEEN ? AND ? ORDER BY c.ord",
                (row[0], row[1] - before, row[1] + after),
            ).fetchall()
        return [_chunk(r) for r in rows]

    def sizes(self) -> tuple[int, int]:
        """(bytes of chunk text, bytes of the index file and its log), for the benchmark."""
        with self.lock:
            text = int(
                self._db.execute("SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM chunks").fetchone()[0]
            )
        files = [self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")]
        return text, sum(p.stat().st_size for p in files if p.exists())

    def purge(self) -> None:
        """Leave no copy of removed text: merge the index's segments, vacuum, truncate the write-ahead log."""
        with self.lock:
            self._db.execute("INSERT INTO words(words) VALUES ('optimize')")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file (after a large batch of writes)."""
        with self.lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
