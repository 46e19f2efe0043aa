"""The derived store `memory/index.sqlite`: the facts as they stand now, the tombstones, and an FTS5 index.

Everything here is rebuilt from the ledger when missing, corrupt or out of step (deleting the file loses
nothing). `meta` remembers how far into the ledger it has folded (byte offset, seq, hash), so opening and
every turn cost the same however long the history is. Secure delete is on, so a purged row's bytes are
zeroed, and `purge` merges the FTS segments and vacuums, leaving no copy of erased text in free pages.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from host.memory.embedder import Embedder, default_embedder
from host.memory.episodes import EpisodeContexts, episode_of
from host.memory.fold import FACT_FIELDS, TIER_RANK, Effect, Fact, valid_at
from host.memory.query import FTS_TOKENIZER, index_body
from host.memory.records import Record
from host.memory.speakers import speaker_key, speaker_of
from host.memory.vectors import VECTOR_SCHEMA, FactVectors, worker_for

__all__ = ["MemoryIndex", "SCHEMA_VERSION", "DEFAULT_EMBEDDER"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "6"

DEFAULT_EMBEDDER = "default"
"""`MemoryIndex(embedder=...)` default: the process-wide embedder (`default_embedder()`)."""

_FACT_COLUMNS = FACT_FIELDS

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, op TEXT NOT NULL, text TEXT, sig TEXT, key TEXT,
    tier TEXT NOT NULL, source TEXT NOT NULL, basis TEXT, trust TEXT NOT NULL, status TEXT NOT NULL,
    scope TEXT NOT NULL, observed_at TEXT NOT NULL, valid_from TEXT, valid_until TEXT, replaces TEXT,
    replace_mode TEXT, confidence REAL, evidence_seq INTEGER, tool_call_id TEXT, conflicts_with TEXT,
    changed_seq INTEGER NOT NULL, changed_by TEXT, tier_rank INTEGER NOT NULL, episode TEXT, speaker TEXT);
CREATE INDEX IF NOT EXISTS facts_standing ON facts(status, trust, tier_rank, seq, valid_from, valid_until);
CREATE INDEX IF NOT EXISTS facts_keyed ON facts(status, trust, seq) WHERE key IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_sig ON facts(sig);
CREATE INDEX IF NOT EXISTS facts_key ON facts(key);
CREATE INDEX IF NOT EXISTS facts_episode ON facts(episode, seq) WHERE episode IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_speaker ON facts(speaker) WHERE speaker IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_valid ON facts(valid_from) WHERE status = 'live' AND trust = 'confirmed';
CREATE TABLE IF NOT EXISTS tombstones(sig TEXT PRIMARY KEY, record_id TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, before, context, tokenize='{FTS_TOKENIZER}');
{VECTOR_SCHEMA}
"""

_VALID = "(valid_from IS NULL OR valid_from <= :t) AND (valid_until IS NULL OR :t < valid_until)"
_STANDS_NOW = "status = 'live' AND trust = 'confirmed' AND text IS NOT NULL"
_STANDING = f"status = 'live' AND trust = 'confirmed' AND text IS NOT NULL AND {_VALID}"


def _row_to_fact(row: Sequence[Any]) -> Fact:
    values = dict(zip(_FACT_COLUMNS, row, strict=False))
    values["conflicts_with"] = tuple(filter(None, (values["conflicts_with"] or "").split(",")))
    return Fact(**values)


def _fact_to_row(fact: Fact) -> tuple[Any, ...]:
    values = [getattr(fact, name) for name in _FACT_COLUMNS]
    values[_FACT_COLUMNS.index("conflicts_with")] = ",".join(fact.conflicts_with) or None
    label = speaker_of(fact.text) if fact.tier == "log" else None
    speaker = None if label is None else speaker_key(label)
    return (*values, TIER_RANK.get(fact.tier, 9), episode_of(fact), speaker)


class MemoryIndex:
    """One connection to one agent's index. Callers serialise writes (the store's lock)."""

    def __init__(
        self, path: Path, *, embedder: Embedder | str | None = DEFAULT_EMBEDDER, meaning_context: bool = True
    ) -> None:
        """Open (or create) the index at `path`; `embedder` None means full-text recall only, and
        `meaning_context` False embeds each log entry alone (see `vectors.py`; benchmarks' ablation)."""
        self.path = path
        self._db = self._connect()
        self._episodes = EpisodeContexts(self._db, self._facts)
        chosen = default_embedder() if isinstance(embedder, str) else embedder
        worker = worker_for(chosen) if chosen is not None else None
        self.vectors = FactVectors(self._db, chosen, worker, context=meaning_context)
        self.vectors.backfill()

    def _connect(self) -> sqlite3.Connection:
        for attempt in (1, 2):
            db = sqlite3.connect(self.path, isolation_level=None)
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

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, **values: str | int) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in values.items()])

    def reset(self) -> None:
        """Forget every derived row (before a rebuild)."""
        with self.transaction():
            self._db.execute("DELETE FROM facts")
            self._db.execute("DELETE FROM tombstones")
            self._db.execute("DELETE FROM fts")
            self.vectors.forget_all()
            self._db.execute("DELETE FROM meta WHERE k NOT IN ('schema', 'vector_model')")

    def fact(self, record_id: str) -> Fact | None:
        row = self._db.execute(f"SELECT {', '.join(_FACT_COLUMNS)} FROM facts WHERE id = ?", (record_id,)).fetchone()
        return None if row is None else _row_to_fact(row)

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

    def fill_contexts(self, facts: Iterable[Fact]) -> None:
        """Set the context of every log entry from scratch (after a rebuild)."""
        self._episodes.fill(facts)

    def put_facts(self, facts: Iterable[Fact], *, new_seq: int | None = None) -> None:
        """Insert or replace facts; a fact is new to the search index when its seq is `new_seq` (or always)."""
        facts = list(facts)
        columns = ", ".join([*_FACT_COLUMNS, "tier_rank", "episode", "speaker"])
        marks = ", ".join("?" * (len(_FACT_COLUMNS) + 3))
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

    def purge(self) -> None:
        """Leave no trace of deleted rows: merge the FTS segments, then rebuild the file without free pages."""
        self._db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        self._db.execute("DELETE FROM meta WHERE k = 'erase_pending'")
        self._db.execute("VACUUM")

    def tombstone(self, sig: str) -> str | None:
        """The id of the record whose tombstone covers `sig`, if any."""
        row = self._db.execute("SELECT record_id FROM tombstones WHERE sig = ?", (sig,)).fetchone()
        return None if row is None else str(row[0])

    def _facts(self, where: str, params: dict[str, Any] | Sequence[Any] = (), tail: str = "") -> list[Fact]:
        sql = f"SELECT {', '.join(_FACT_COLUMNS)} FROM facts WHERE {where} {tail}"
        return [_row_to_fact(row) for row in self._db.execute(sql, params)]

    def live_with_sig(self, sig: str) -> list[Fact]:
        """Live, not rejected facts with this content signature (duplicate check)."""
        return self._facts("sig = ? AND status = 'live' AND trust != 'rejected'", (sig,), "ORDER BY seq")

    def with_sig(self, sig: str) -> list[Fact]:
        return self._facts("sig = ? AND status != 'erased'", (sig,), "ORDER BY seq")

    def standing_for_key(self, key: str, instant: str) -> list[Fact]:
        return self._facts(f"key = :k AND {_STANDING}", {"k": key, "t": instant}, "ORDER BY seq")

    def newest_candidates(self, tier: str, instant: str, limit: int) -> list[Fact]:
        """The newest facts of one tier that may stand at `instant`, at most `limit`."""
        params = {"r": TIER_RANK.get(tier, 9), "t": instant}
        return self._facts(f"{_STANDING} AND tier_rank = :r", params, f"ORDER BY seq DESC LIMIT {int(limit)}")

    def keyed_candidates(self, instant: str, limit: int) -> list[Fact]:
        """The newest facts with a key that may stand at `instant` (conflicts are found among them)."""
        return self._facts(f"key IS NOT NULL AND {_STANDING}", {"t": instant}, f"ORDER BY seq DESC LIMIT {int(limit)}")

    def candidates_for_keys(self, keys: Iterable[str], instant: str) -> list[Fact]:
        """Every fact of these keys that may stand at `instant`."""
        wanted = sorted(keys)
        if not wanted:
            return []
        params: dict[str, Any] = {"t": instant} | {f"k{n}": key for n, key in enumerate(wanted)}
        marks = ", ".join(f":k{n}" for n in range(len(wanted)))
        return self._facts(f"key IN ({marks}) AND {_STANDING}", params, "ORDER BY seq")

    def candidate_counts(self, instant: str) -> dict[str, int]:
        """How many facts may stand at `instant`, per tier (read from the covering index alone)."""
        sql = (
            "SELECT tier_rank, count(*) FROM facts WHERE status = 'live' AND trust = 'confirmed' "
            f"AND {_VALID} GROUP BY tier_rank"
        )
        names = {rank: tier for tier, rank in TIER_RANK.items()}
        return {names.get(rank, "note"): int(n) for rank, n in self._db.execute(sql, {"t": instant})}

    def newest_proposed(self, limit: int) -> tuple[list[Fact], int]:
        """The newest facts waiting for review, at most `limit`, and how many there are."""
        where = "status = 'live' AND trust = 'proposed'"
        total = int(self._db.execute(f"SELECT count(*) FROM facts WHERE {where}").fetchone()[0])
        return self._facts(where, (), f"ORDER BY seq DESC LIMIT {int(limit)}"), total

    def candidates(self, instant: str) -> list[Fact]:
        """Every fact that may stand at `instant` (confirmed, live, valid then)."""
        return self._facts(_STANDING, {"t": instant}, "ORDER BY seq")

    def by_state(self, *, status: str | None = None, trust: str | None = None) -> list[Fact]:
        clauses = ["status != 'erased'"]
        params: list[Any] = []
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if trust is not None:
            clauses.append("trust = ?")
            params.append(trust)
        return self._facts(" AND ".join(clauses), params, "ORDER BY seq")

    def added_since(self, seq: int, instant: str, limit: int) -> tuple[list[Fact], int]:
        """Standing facts written after `seq`, newest first, at most `limit`, and how many there are."""
        params = {"s": seq, "t": instant}
        # The seq range drives the scan (the status columns are kept out of index choice with a unary +),
        # so the cost follows what was added since the freeze, not the size of memory.
        where = f"seq > :s AND +status = 'live' AND +trust = 'confirmed' AND text IS NOT NULL AND {_VALID}"
        total = self._db.execute(f"SELECT count(*) FROM facts WHERE {where}", params).fetchone()[0]
        if not total:
            return [], 0
        return self._facts(where, params, f"ORDER BY seq DESC LIMIT {int(limit)}"), int(total)

    def speakers_among(self, keys: Iterable[str]) -> set[str]:
        """Those of the speaker `keys` (`speakers.speaker_key`) that speak a standing log entry ("Name: ...")."""
        sql = f"SELECT EXISTS(SELECT 1 FROM facts WHERE speaker = ? AND {_STANDS_NOW})"
        return {key for key in keys if self._db.execute(sql, (key,)).fetchone()[0]}

    def speaker_keys(self, limit: int) -> list[str]:
        """The distinct speaker keys of log entries, standing or not, at most `limit` (in key order).

        Each is found by one probe of the speaker index past the one before it, so the cost follows the
        number of speakers, not of their entries.
        """
        sql = (
            "WITH RECURSIVE s(k) AS (SELECT min(speaker) FROM facts WHERE speaker IS NOT NULL "
            "UNION ALL SELECT (SELECT min(speaker) FROM facts WHERE speaker > s.k) FROM s WHERE s.k IS NOT NULL) "
            f"SELECT k FROM s WHERE k IS NOT NULL LIMIT {int(limit)}"
        )
        return [str(row[0]) for row in self._db.execute(sql)]

    def document_frequencies(self, words: Sequence[str], cap: int) -> list[int]:
        """How many indexed facts hold each word, counted no higher than `cap` + 1 (so the cost is bounded)."""
        counts = []
        for word in words:
            phrase = '"' + word.replace('"', '""') + '"'
            sql = "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)"
            counts.append(int(self._db.execute(sql, (phrase, cap + 1)).fetchone()[0]))
        return counts

    def search(
        self,
        expression: str,
        *,
        limit: int,
        statuses: Sequence[str],
        instant: str | None,
        newest_first: bool = False,
        exclude_ids: Sequence[str] = (),
        before_weight: float = 0.0,
        context_weight: float = 0.3,
    ) -> list[tuple[Fact, float]]:
        """Confirmed facts matching an FTS5 expression with their BM25 score (lower is better), best first.

        The full-text index ranks first and only its best rows are looked up among the facts, widening the
        window when too many of them are filtered out. With `newest_first` the newest matches come newest
        first, unscored (0.0): BM25 reads every match of each word to weigh it, which this mode avoids.
        `before_weight` and `context_weight` are the BM25 weights of the words of a log entry's entry before it
        and of its neighbours (`episodes.py`), against its own (1.0).
        """
        order = "rowid DESC" if newest_first else "score"
        score = "0.0" if newest_first else f"bm25(fts, 1.0, {float(before_weight)}, {float(context_weight)})"
        skip = ""
        if exclude_ids:
            skip = f"AND rowid NOT IN (SELECT seq FROM facts WHERE id IN ({', '.join('?' * len(exclude_ids))}))"
        ranked_sql = f"SELECT rowid, {score} AS score FROM fts WHERE fts MATCH ? {skip} ORDER BY {order} LIMIT ?"
        window = limit * 2
        while True:
            ranked = self._db.execute(ranked_sql, (expression, *exclude_ids, window)).fetchall()
            facts = {fact.seq: fact for fact in self._facts_by_seq([seq for seq, _ in ranked])}
            found = [
                (fact, float(value))
                for seq, value in ranked
                if (fact := facts.get(seq)) is not None
                and fact.status in statuses
                and fact.trust == "confirmed"
                and fact.text is not None
                and (instant is None or valid_at(fact, instant))
            ]
            if len(found) >= limit or len(ranked) < window:
                return found[:limit]
            window *= 4

    def _facts_by_seq(self, seqs: Sequence[int]) -> list[Fact]:
        if not seqs:
            return []
        return self._facts(f"seq IN ({', '.join('?' * len(seqs))})", list(seqs))

    def facts_by_seq(self, seqs: Sequence[int]) -> list[Fact]:
        """The facts with these seqs (any status), in no particular order."""
        found: list[Fact] = []
        for start in range(0, len(seqs), 500):
            found += self._facts_by_seq(seqs[start : start + 500])
        return found

    def valid_in(self, start: str, end: str, limit: int = 5000) -> list[int]:
        """The seqs of standing facts whose valid time begins in [start, end), newest first, at most `limit`."""
        sql = (
            "SELECT seq FROM facts WHERE status = 'live' AND trust = 'confirmed' AND text IS NOT NULL "
            f"AND valid_from >= ? AND valid_from < ? ORDER BY valid_from DESC LIMIT {int(limit)}"
        )
        return [row[0] for row in self._db.execute(sql, (start, end))]
