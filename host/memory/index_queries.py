"""The read queries of an agent's index (`index.sqlite`), on one connection: facts, tombstones, full text.

`MemoryIndex` is these queries on the index's own connection, plus its writes; `MemoryIndex.reader()` gives
them on a second connection for the memory's disk worker, so a bounded rendering (MEMORY.md) can be read
off the event loop. A connection is used by one thread at a time; none of these writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from host.memory.fold import FACT_FIELDS, TIER_RANK, Fact, valid_at

__all__ = ["IndexQueries", "FACT_COLUMNS", "row_to_fact"]

FACT_COLUMNS = FACT_FIELDS
"""The fact columns of the `facts` table, in the dataclass's own field order."""

_VALID = "(valid_from IS NULL OR valid_from <= :t) AND (valid_until IS NULL OR :t < valid_until)"
_STANDS_NOW = "status = 'live' AND trust = 'confirmed' AND text IS NOT NULL"
_STANDING = f"status = 'live' AND trust = 'confirmed' AND text IS NOT NULL AND {_VALID}"


_CONFLICTS = FACT_COLUMNS.index("conflicts_with")


def _row_to_fact(row: Sequence[Any]) -> Fact:
    # Positional, in the dataclass's own field order (FACT_FIELDS): a bounded view reads hundreds per render.
    values = list(row)
    values[_CONFLICTS] = tuple(filter(None, (values[_CONFLICTS] or "").split(",")))
    return Fact(*values)


row_to_fact = _row_to_fact
"""A `facts` row (its FACT_COLUMNS, in order) as a Fact."""


class IndexQueries:
    """Read queries over one connection to an index."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def close(self) -> None:
        self._db.close()

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def fact(self, record_id: str) -> Fact | None:
        row = self._db.execute(f"SELECT {', '.join(FACT_COLUMNS)} FROM facts WHERE id = ?", (record_id,)).fetchone()
        return None if row is None else _row_to_fact(row)

    def tombstone(self, sig: str) -> str | None:
        """The id of the record whose tombstone covers `sig`, if any."""
        row = self._db.execute("SELECT record_id FROM tombstones WHERE sig = ?", (sig,)).fetchone()
        return None if row is None else str(row[0])

    def _facts(
        self, where: str, params: dict[str, Any] | Sequence[Any] = (), tail: str = "", using: str = ""
    ) -> list[Fact]:
        sql = f"SELECT {', '.join(FACT_COLUMNS)} FROM facts {using} WHERE {where} {tail}"
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

    def recent_log(
        self, since: str, instant: str, limit: int, fits: Callable[[Fact], bool] | None = None
    ) -> list[Fact]:
        """The latest-dated log entries dated `since` or later that may stand at `instant`, at most `limit`,
        and, with `fits`, only while it accepts the next one (the reading stops at the first it refuses)."""
        where = (
            "tier = 'log' AND status = 'live' AND trust = 'confirmed' AND text IS NOT NULL "
            f"AND coalesce(valid_from, observed_at) >= :c AND {_VALID}"
        )
        # Read in the day index's order, so only the rows taken are read however many entries the days hold.
        sql = (
            f"SELECT {', '.join(FACT_COLUMNS)} FROM facts INDEXED BY facts_log_day WHERE {where} "
            f"ORDER BY coalesce(valid_from, observed_at) DESC LIMIT {int(limit)}"
        )
        cursor = self._db.execute(sql, {"c": since, "t": instant})
        taken: list[Fact] = []
        try:
            for row in cursor:
                fact = _row_to_fact(row)
                if fits is not None and not fits(fact):
                    break
                taken.append(fact)
        finally:
            cursor.close()
        return taken

    def unsummarised_log_count(self, since: str, instant: str) -> int:
        """How many log entries that may stand at `instant` no summary counts: those dated `since` or later,
        and those with a key."""
        recent = (
            "SELECT count(*) FROM facts INDEXED BY facts_log_day WHERE tier = 'log' AND status = 'live' "
            f"AND trust = 'confirmed' AND coalesce(valid_from, observed_at) >= :c AND {_VALID}"
        )
        keyed = (
            "SELECT count(*) FROM facts WHERE key IS NOT NULL AND status = 'live' AND trust = 'confirmed' "
            f"AND tier = 'log' AND coalesce(valid_from, observed_at) < :c AND {_VALID}"
        )
        params = {"c": since, "t": instant}
        return sum(int(self._db.execute(sql, params).fetchone()[0]) for sql in (recent, keyed))

    def expiring(self, after: str, instant: str) -> list[Fact]:
        """Standing-but-for-time facts whose lifetime (validUntil) ended after `after` and by `instant`."""
        where = (
            "status = 'live' AND trust = 'confirmed' AND text IS NOT NULL AND op != 'retract' "
            "AND valid_until > :a AND valid_until <= :t"
        )
        # Asked every turn: the lifetime index reads only facts that have one, however large memory is.
        return self._facts(where, {"a": after, "t": instant}, "ORDER BY valid_until, seq", "INDEXED BY facts_until")

    def outlived(self, tier: str, born_by: str) -> list[Fact]:
        """Standing facts of `tier` without a validUntil of their own, valid from (or noted) `born_by` or
        earlier: those a lifetime of (now - `born_by`) has ended, oldest first."""
        where = (
            "tier_rank = :r AND valid_until IS NULL AND status = 'live' AND trust = 'confirmed' "
            "AND text IS NOT NULL AND op != 'retract' AND coalesce(valid_from, observed_at) <= :b"
        )
        # Asked every turn: the index of facts with no end reads only those due, however large memory is.
        params = {"r": TIER_RANK.get(tier, 9), "b": born_by}
        order = "ORDER BY coalesce(valid_from, observed_at), seq"
        return self._facts(where, params, order, "INDEXED BY facts_unbounded")

    def asked_to_forget(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` that a request to forget names, waiting or decided (a person has seen them)."""
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            sql = f"SELECT replaces FROM facts WHERE op = 'retract' AND replaces IN ({', '.join('?' * len(part))})"
            found.update(str(row[0]) for row in self._db.execute(sql, part))
        return found

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

    def candidate_counts(self, instant: str, tiers: Sequence[str] = tuple(TIER_RANK)) -> dict[str, int]:
        """How many facts of `tiers` may stand at `instant`, per tier (read from the covering index alone)."""
        ranks = ", ".join(str(TIER_RANK[tier]) for tier in tiers)
        sql = (
            "SELECT tier_rank, count(*) FROM facts WHERE status = 'live' AND trust = 'confirmed' "
            f"AND tier_rank IN ({ranks}) AND {_VALID} GROUP BY tier_rank"
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
