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

from host.memory.fold import TIER_RANK, Effect, Fact
from host.memory.query import FTS_TOKENIZER, index_body
from host.memory.records import Record

__all__ = ["MemoryIndex", "SCHEMA_VERSION"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "1"

_FACT_COLUMNS = (
    "seq",
    "id",
    "op",
    "text",
    "sig",
    "key",
    "tier",
    "source",
    "basis",
    "trust",
    "status",
    "scope",
    "observed_at",
    "valid_from",
    "valid_until",
    "replaces",
    "replace_mode",
    "confidence",
    "evidence_seq",
    "tool_call_id",
    "conflicts_with",
    "changed_seq",
    "changed_by",
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, op TEXT NOT NULL, text TEXT, sig TEXT, key TEXT,
    tier TEXT NOT NULL, source TEXT NOT NULL, basis TEXT, trust TEXT NOT NULL, status TEXT NOT NULL,
    scope TEXT NOT NULL, observed_at TEXT NOT NULL, valid_from TEXT, valid_until TEXT, replaces TEXT,
    replace_mode TEXT, confidence REAL, evidence_seq INTEGER, tool_call_id TEXT, conflicts_with TEXT,
    changed_seq INTEGER NOT NULL, changed_by TEXT, tier_rank INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS facts_standing ON facts(status, trust, tier_rank, seq);
CREATE INDEX IF NOT EXISTS facts_sig ON facts(sig);
CREATE INDEX IF NOT EXISTS facts_key ON facts(key);
CREATE TABLE IF NOT EXISTS tombstones(sig TEXT PRIMARY KEY, record_id TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize='{FTS_TOKENIZER}');
"""

_VALID = "(valid_from IS NULL OR valid_from <= :t) AND (valid_until IS NULL OR :t < valid_until)"
_STANDING = f"status = 'live' AND trust = 'confirmed' AND text IS NOT NULL AND {_VALID}"


def _row_to_fact(row: Sequence[Any]) -> Fact:
    values = dict(zip(_FACT_COLUMNS, row, strict=False))
    values["conflicts_with"] = tuple(filter(None, (values["conflicts_with"] or "").split(",")))
    return Fact(**values)


def _fact_to_row(fact: Fact) -> tuple[Any, ...]:
    values = [getattr(fact, name) for name in _FACT_COLUMNS]
    values[_FACT_COLUMNS.index("conflicts_with")] = ",".join(fact.conflicts_with) or None
    return (*values, TIER_RANK.get(fact.tier, 9))


class MemoryIndex:
    """One connection to one agent's index. Callers serialise writes (the store's lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = self._connect()

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
            self._db.execute("DELETE FROM meta WHERE k != 'schema'")

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

    def put_facts(self, facts: Iterable[Fact], *, new_seq: int | None = None) -> None:
        """Insert or replace facts; a fact is new to the search index when its seq is `new_seq` (or always)."""
        marks = ", ".join("?" * (len(_FACT_COLUMNS) + 1))
        for fact in facts:
            self._db.execute(
                f"INSERT OR REPLACE INTO facts({', '.join(_FACT_COLUMNS)}, tier_rank) VALUES ({marks})",
                _fact_to_row(fact),
            )
            if (new_seq is None or fact.seq == new_seq) and fact.text is not None:
                self._db.execute(
                    "INSERT INTO fts(rowid, body) VALUES (?, ?)", (fact.seq, index_body(fact.text, fact.key))
                )

    def put_tombstones(self, tombstones: dict[str, str]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO tombstones VALUES (?, ?)", tombstones.items())

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
        total = self._db.execute(f"SELECT count(*) FROM facts WHERE seq > :s AND {_STANDING}", params).fetchone()[0]
        if not total:
            return [], 0
        return self._facts(f"seq > :s AND {_STANDING}", params, f"ORDER BY seq DESC LIMIT {int(limit)}"), int(total)

    def search(
        self, expression: str, *, limit: int, statuses: Sequence[str], instant: str | None
    ) -> list[tuple[Fact, float]]:
        """BM25-ranked confirmed facts matching an FTS5 expression, best first."""
        columns = ", ".join("f." + name for name in _FACT_COLUMNS)
        marks = ", ".join("?" * len(statuses))
        valid = ""
        params: list[Any] = [expression, *statuses]
        if instant is not None:
            valid = "AND (f.valid_from IS NULL OR f.valid_from <= ?) AND (f.valid_until IS NULL OR ? < f.valid_until)"
            params += [instant, instant]
        sql = (
            f"SELECT {columns}, bm25(fts) AS score FROM fts JOIN facts f ON f.seq = fts.rowid "
            f"WHERE fts MATCH ? AND f.status IN ({marks}) AND f.trust = 'confirmed' AND f.text IS NOT NULL {valid} "
            f"ORDER BY score LIMIT {int(limit)}"
        )
        return [(_row_to_fact(row[:-1]), float(row[-1])) for row in self._db.execute(sql, params)]
