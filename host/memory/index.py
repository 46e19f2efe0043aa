"""The derived store `memory/index.sqlite`: the facts as they stand now, the tombstones, and an FTS5 index.

Everything here is rebuilt from the ledger when missing, corrupt or out of step (deleting the file loses
nothing). `meta` remembers how far into the ledger it has folded (byte offset, seq, hash), so opening and
every turn cost the same however long the history is. Secure delete is on, so a purged row's bytes are
zeroed. After an erase, `compacted_copy` builds (on a connection of its own, in a worker thread, while this
one keeps answering) a copy with the FTS segments merged and no free pages, and `swap_in` puts it in place
on the index's own thread, so no copy of erased text is left in the file and no reader waits for a vacuum.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from host.memory.embedder import Embedder, loaded_embedder
from host.memory.episodes import EpisodeContexts, episode_of
from host.memory.fold import TIER_RANK, Effect, Fact
from host.memory.index_queries import FACT_COLUMNS, IndexQueries
from host.memory.query import FTS_TOKENIZER, index_body
from host.memory.records import Record
from host.memory.speakers import speaker_key, speaker_of
from host.memory.summary_index import SUMMARY_SCHEMA, LogSummaries
from host.memory.uses import USE_SCHEMA, UseCounts
from host.memory.vectors import VECTOR_SCHEMA, FactVectors, worker_for
from host.store.sqlite_tx import write_transaction

__all__ = ["MemoryIndex", "SCHEMA_VERSION", "DEFAULT_EMBEDDER"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "8"

DEFAULT_EMBEDDER = "default"
"""`MemoryIndex(embedder=...)` default: the process-wide embedder (`loaded_embedder()`), once it has loaded."""


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, op TEXT NOT NULL, text TEXT, sig TEXT, key TEXT,
    tier TEXT NOT NULL, source TEXT NOT NULL, basis TEXT, trust TEXT NOT NULL, status TEXT NOT NULL,
    scope TEXT NOT NULL, observed_at TEXT NOT NULL, valid_from TEXT, valid_until TEXT, replaces TEXT,
    replace_mode TEXT, confidence REAL, evidence_seq INTEGER, tool_call_id TEXT, conflicts_with TEXT,
    changed_seq INTEGER NOT NULL, changed_by TEXT, reason TEXT, tier_rank INTEGER NOT NULL, episode TEXT, speaker TEXT);
CREATE INDEX IF NOT EXISTS facts_standing ON facts(status, trust, tier_rank, seq, valid_from, valid_until);
CREATE INDEX IF NOT EXISTS facts_keyed ON facts(status, trust, seq) WHERE key IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_sig ON facts(sig);
CREATE INDEX IF NOT EXISTS facts_key ON facts(key);
CREATE INDEX IF NOT EXISTS facts_episode ON facts(episode, seq) WHERE episode IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_speaker ON facts(speaker) WHERE speaker IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_valid ON facts(valid_from) WHERE status = 'live' AND trust = 'confirmed';
CREATE INDEX IF NOT EXISTS facts_until ON facts(valid_until)
    WHERE valid_until IS NOT NULL AND status = 'live' AND trust = 'confirmed';
CREATE INDEX IF NOT EXISTS facts_unbounded ON facts(tier_rank, coalesce(valid_from, observed_at))
    WHERE valid_until IS NULL AND status = 'live' AND trust = 'confirmed';
CREATE TABLE IF NOT EXISTS tombstones(sig TEXT PRIMARY KEY, record_id TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, before, context, tokenize='{FTS_TOKENIZER}');
{VECTOR_SCHEMA}
{SUMMARY_SCHEMA}
{USE_SCHEMA}
"""


def _fact_to_row(fact: Fact) -> tuple[Any, ...]:
    values = [getattr(fact, name) for name in FACT_COLUMNS]
    values[FACT_COLUMNS.index("conflicts_with")] = ",".join(fact.conflicts_with) or None
    label = speaker_of(fact.text) if fact.tier == "log" else None
    speaker = None if label is None else speaker_key(label)
    return (*values, TIER_RANK.get(fact.tier, 9), episode_of(fact), speaker)


class MemoryIndex(IndexQueries):
    """One connection to one agent's index (its queries and its writes), and a second one for the memory's disk
    worker (`reader`). Callers serialise writes (the store's lock)."""

    def __init__(self, path: Path, *, embedder: Embedder | str | None = DEFAULT_EMBEDDER) -> None:
        """Open (or create) the index at `path`; `embedder` None means full-text recall only."""
        self.path = path
        for stale in path.parent.glob(f".{path.name}.*.tmp"):
            stale.unlink()  # a compacted copy an erase never put in place
        self._db = self._connect()
        self._reader: IndexQueries | None = None
        self._episodes = EpisodeContexts(self._db, self._facts)
        self.summaries = LogSummaries(self._db)
        self.uses = UseCounts(self._db)
        # The process's embedder may still be loading: words only until it is ready (`adopt_loaded`).
        chosen, decided = loaded_embedder() if isinstance(embedder, str) else (embedder, True)
        worker = worker_for(chosen) if chosen is not None else None
        self.vectors = FactVectors(self._db, chosen, worker, loading=not decided)
        self.vectors.backfill()

    def _connect(self) -> sqlite3.Connection:
        for attempt in (1, 2):
            # Used on the index's thread only, but closed in a worker after an erase's swap (a large file's
            # connection takes a while to close).
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA secure_delete = ON")
                db.execute("PRAGMA journal_mode = DELETE")
                # The index is derived: after a crash it is checked against the ledger and rebuilt if needed.
                db.execute("PRAGMA synchronous = OFF")
                db.executescript(_SCHEMA)
                version = db.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()
                if version is None:
                    db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                elif version[0] != SCHEMA_VERSION:
                    raise sqlite3.DatabaseError(f"schema {version[0]}")
                return db
            except sqlite3.DatabaseError as exc:
                db.close()
                if attempt == 2:
                    raise
                logger.warning("index %s is unusable (%s); rebuilding it from the ledger", self.path, exc)
                for suffix in ("", "-journal", "-wal", "-shm"):
                    Path(str(self.path) + suffix).unlink(missing_ok=True)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.vectors.close()
        self._db.close()
        if self._reader is not None:
            self._reader.close()

    def reader(self) -> IndexQueries:
        """The queries on a second connection, for the memory's disk worker (one call at a time; it opens on
        first use, in the thread that asks). Nothing may write the index meanwhile: callers hold its writers
        off (the store's lock) and its computed vectors (`vectors.held`), so neither waits on the other."""
        if self._reader is None:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA query_only = ON")
            self._reader = IndexQueries(db)
        return self._reader

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with write_transaction(self._db):
            yield

    def set_meta(self, **values: str | int) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in values.items()])

    def reset(self) -> None:
        """Forget every derived row (before a rebuild)."""
        with self.transaction():
            self._db.execute("DELETE FROM facts")
            self._db.execute("DELETE FROM tombstones")
            self._db.execute("DELETE FROM fts")
            self.vectors.forget_all()
            self.summaries.forget_all()
            self.uses.forget_all()
            self._db.execute("DELETE FROM meta WHERE k NOT IN ('schema', 'vector_model')")

    def apply(self, record: Record, effect: Effect) -> None:
        """Write one record's effect (inside the caller's transaction)."""
        self.put_facts(effect.facts, new_seq=record.seq)
        for sig in effect.lifted:
            self._db.execute("DELETE FROM tombstones WHERE sig = ?", (sig,))
        self._db.executemany("INSERT OR IGNORE INTO tombstones VALUES (?, ?)", effect.tombstones)
        if record.op == "erase":
            # Cleared by `finish_erasures` once no content of the erased records is left anywhere.
            self.set_meta(erase_pending=record.seq)
        for rid in effect.erased:
            row = self._db.execute("SELECT seq FROM facts WHERE id = ?", (rid,)).fetchone()
            if row is not None:
                self._db.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
                self._db.execute("DELETE FROM vectors WHERE seq = ?", (row[0],))
        for fact in effect.facts:
            if fact.tier == "log":
                self._episodes.refresh_around(fact)
        self.summaries.invalidate(effect.facts)
        self.uses.forget(effect.erased)
        if record.op == "expire":
            expired = self.fact(record.target or "")
            self.summaries.invalidate([expired] if expired is not None else [])
            through = max(self.meta("expired_through") or "", record.valid_until or "")
            self.set_meta(expired_through=through)

    def fill_contexts(self, facts: Iterable[Fact]) -> None:
        """Set the context of every log entry from scratch (after a rebuild)."""
        self._episodes.fill(facts)

    def put_facts(self, facts: Iterable[Fact], *, new_seq: int | None = None) -> None:
        """Insert or replace facts; a fact is new to the search index when its seq is `new_seq` (or always)."""
        facts = list(facts)
        columns = ", ".join([*FACT_COLUMNS, "tier_rank", "episode", "speaker"])
        marks = ", ".join("?" * (len(FACT_COLUMNS) + 3))
        for fact in facts:
            self._db.execute(f"INSERT OR REPLACE INTO facts({columns}) VALUES ({marks})", _fact_to_row(fact))
            if (new_seq is None or fact.seq == new_seq) and fact.text is not None:
                self._db.execute(
                    "INSERT INTO fts(rowid, body, before, context) VALUES (?, ?, '', '')",
                    (fact.seq, index_body(fact.text, fact.key)),
                )
        self.vectors.track(facts)

    def put_tombstones(self, tombstones: dict[str, str]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO tombstones VALUES (?, ?)", tombstones.items())

    def merge_search_index(self) -> None:
        """Merge the FTS segments into one, so a lookup probes one b-tree (run after bulk writes)."""
        self._db.execute("INSERT INTO fts(fts) VALUES ('optimize')")

    def compacted_copy(self, **checkpoint: str | int) -> Path:
        """A copy of the index with no trace of deleted rows: FTS segments merged, no free pages, `checkpoint`
        set in its meta and the erase no longer pending.

        Runs on connections of its own (safe in a worker thread while this one reads; nothing may write the
        index until `swap_in`). The copy is a private temporary beside the index, removed if this fails.
        """
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        try:
            source = sqlite3.connect(self.path, isolation_level=None)
            try:
                source.execute("VACUUM INTO ?", (name,))  # a consistent snapshot, read under a shared lock
            finally:
                source.close()
            copy = sqlite3.connect(name, isolation_level=None)
            try:
                copy.execute("PRAGMA secure_delete = ON")
                copy.execute("PRAGMA synchronous = OFF")
                copy.execute("BEGIN IMMEDIATE")
                copy.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in checkpoint.items()]
                )
                copy.execute("DELETE FROM meta WHERE k = 'erase_pending'")
                copy.execute("INSERT INTO fts(fts) VALUES ('optimize')")
                copy.execute("COMMIT")
                copy.execute("VACUUM")
            finally:
                copy.close()
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        return Path(name)

    def swap_in(self, copy: Path) -> list[IndexQueries]:
        """Make `copy` (from `compacted_copy`) the index: renamed over the file, then this connection reopened.

        Returns:
            The old connections, for the caller to close (in a worker: nothing uses them any more).
        """
        os.replace(copy, self.path)
        old = [IndexQueries(self._db), *([self._reader] if self._reader is not None else [])]
        self._db, self._reader = self._connect(), None
        self._episodes.reconnect(self._db)
        self.summaries.reconnect(self._db)
        self.uses.reconnect(self._db)
        self.vectors.reconnect(self._db)
        return old
