"""The summaries of old log entries as derived rows of `index.sqlite`: built on demand, dropped on change.

A summary row is a cache of what `summaries.summary_text` says about one span's standing log entries. Any
change to a log entry of a span (a new entry, a correction, a retraction, a review, an erase) deletes the
rows of every span that holds its day in the same transaction as the change, so a stale summary is never
read: the next rendering builds it again from the entries as they stand (an erased entry has no text left
to quote). Secure delete zeroes a deleted row, and an erase's compacted copy drops its pages. A row the
agent's model wrote (`model` names it) replaces the deterministic one only while the span's entries are
those it was asked about (`keep_model`, by their fingerprint); it is dropped by the same changes.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import date

from host.memory.fold import Fact
from host.memory.index_queries import FACT_COLUMNS, row_to_fact
from host.memory.summaries import Span, Summary, day_instant, model_summary_text, spans_before, summary_text

__all__ = ["SUMMARY_SCHEMA", "QUOTED", "LogSummaries"]

logger = logging.getLogger(__name__)

QUOTED = 8
"""Entries spread over a span that its summary tries to quote (as many as fit its line)."""

_DAY = "coalesce(valid_from, observed_at)"
_LOG = "tier = 'log' AND status = 'live' AND trust = 'confirmed'"

SUMMARY_SCHEMA = f"""
CREATE INDEX IF NOT EXISTS facts_log_day ON facts({_DAY}) WHERE {_LOG};
CREATE TABLE IF NOT EXISTS summaries(
    id TEXT PRIMARY KEY, start TEXT NOT NULL, end TEXT NOT NULL, count INTEGER NOT NULL, quoted TEXT NOT NULL,
    text TEXT NOT NULL, model TEXT);
CREATE INDEX IF NOT EXISTS summaries_range ON summaries(start, end);
"""

# The planner would walk every standing fact (facts_standing) for a span's few days; the day index reads only them.
_SPAN_ROWS = "facts INDEXED BY facts_log_day"
# A log entry with a key is a standing slot, shown as a fact (conflicts are found among them), never summarised.
_IN_SPAN = (
    f"{_LOG} AND key IS NULL AND text IS NOT NULL AND {_DAY} >= :a AND {_DAY} < :b "
    "AND (valid_until IS NULL OR :t < valid_until)"
)


class LogSummaries:
    """The summary rows of one index connection (used on the index's own thread)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def reconnect(self, db: sqlite3.Connection) -> None:
        self._db = db

    def forget_all(self) -> None:
        self._db.execute("DELETE FROM summaries")

    def invalidate(self, facts: Iterable[Fact]) -> None:
        """Drop the summaries of every span holding the day of a changed log entry (inside the caller's
        transaction)."""
        days = {fact.valid_from or fact.observed_at for fact in facts if fact.tier == "log"}
        for day in days:
            self._db.execute("DELETE FROM summaries WHERE start <= ? AND ? < end", (day, day))

    def before(self, cut: date, instant: str, *, persist: bool = True) -> list[Summary]:
        """The summaries of the spans tiling every standing log entry dated before `cut`, newest first.

        Spans without standing entries are left out. A missing summary is built from the entries now and,
        with `persist`, kept for the next rendering (a caller that may race a write passes False); one the disk
        has no room for is rendered all the same and built again next time.
        """
        row = self._db.execute(
            f"SELECT {_DAY} FROM facts INDEXED BY facts_log_day WHERE {_LOG} AND {_DAY} < ? "
            f"AND key IS NULL AND text IS NOT NULL ORDER BY {_DAY} LIMIT 1",
            (day_instant(cut),),
        ).fetchone()
        if row is None or row[0] is None:
            return []
        spans = spans_before(cut, date.fromisoformat(str(row[0])[:10]))
        kept = {
            r[0]: r
            for r in self._db.execute(
                f"SELECT id, count, quoted, text, model FROM summaries WHERE id IN ({', '.join('?' * len(spans))})",
                [span.id for span in spans],
            )
        }
        out: list[Summary] = []
        for span in spans:
            found = kept.get(span.id)
            summary = (
                Summary(span, int(found[1]), tuple(filter(None, str(found[2]).split(","))), str(found[3]), found[4])
                if found is not None
                else self._build(span, instant, persist)
            )
            if summary.count:
                out.append(summary)
        return out

    def covered(self, span: Span, instant: str) -> list[str]:
        """The ids of the standing log entries a span's summary covers, in date order (its citations)."""
        sql = f"SELECT id FROM {_SPAN_ROWS} WHERE {_IN_SPAN} ORDER BY {_DAY}, seq"
        return [str(r[0]) for r in self._db.execute(sql, self._bounds(span, instant))]

    def _bounds(self, span: Span, instant: str) -> dict[str, str]:
        return {"a": day_instant(span.start), "b": day_instant(span.end), "t": instant}

    def fingerprint(self, span: Span, instant: str) -> str:
        """What a span's standing entries are now: any change to them changes it.

        Every change to an entry gives it (or the entry that replaces it) the new record's seq as its last
        change, the highest there is, and an entry that leaves changes the count or the sum of seqs; so the
        count, the sum of the seqs and the newest last change name the entries (read in one aggregate).
        """
        sql = f"SELECT count(*), total(seq), max(changed_seq) FROM {_SPAN_ROWS} WHERE {_IN_SPAN}"
        count, seqs, newest = self._db.execute(sql, self._bounds(span, instant)).fetchone()
        return f"{count}:{int(seqs)}:{newest}"

    def sample(self, span: Span, instant: str, count: int) -> list[Fact]:
        """Up to `count` of a span's standing entries, spread over it, in date order."""
        return self._samples(self._seqs(span, instant), count)

    def keep_model(self, span: Span, fingerprint: str, instant: str, reply: str, model: str) -> Summary | None:
        """Store a model's summary of `span` (inside the caller's transaction), cut to the line's budget, only
        when its entries are still the ones `fingerprint` names; None when they changed (or no words are left)."""
        if self.fingerprint(span, instant) != fingerprint:
            return None
        count = int(fingerprint.split(":", 1)[0])
        text = model_summary_text(span, count, reply)
        if text is None or not count:
            return None
        summary = Summary(span, count, (), text, model)
        self._put(summary)
        return summary

    def model_texts(self, facts: Iterable[Fact]) -> list[str]:
        """The lines of the model-written summaries whose spans hold a day of these log entries."""
        days = {fact.valid_from or fact.observed_at for fact in facts if fact.tier == "log"}
        sql = "SELECT text FROM summaries WHERE start <= ? AND ? < end AND model IS NOT NULL"
        return sorted({str(r[0]) for day in days for r in self._db.execute(sql, (day, day))})

    def _seqs(self, span: Span, instant: str) -> list[int]:
        sql = f"SELECT seq FROM {_SPAN_ROWS} WHERE {_IN_SPAN} ORDER BY {_DAY}, seq"
        return [int(r[0]) for r in self._db.execute(sql, self._bounds(span, instant))]

    def _samples(self, seqs: Sequence[int], count: int) -> list[Fact]:
        picked = _spread(seqs, count)
        if not picked:
            return []
        rows = self._db.execute(
            f"SELECT {', '.join(FACT_COLUMNS)} FROM facts WHERE seq IN ({', '.join('?' * len(picked))})", picked
        )
        by_seq = {fact.seq: fact for fact in map(row_to_fact, rows)}
        return [by_seq[seq] for seq in picked if seq in by_seq]

    def _put(self, summary: Summary) -> None:
        span = summary.span
        self._db.execute(
            "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                span.id,
                day_instant(span.start),
                day_instant(span.end),
                summary.count,
                ",".join(summary.quoted),
                summary.text,
                summary.model,
            ),
        )

    def _build(self, span: Span, instant: str, persist: bool) -> Summary:
        seqs = self._seqs(span, instant)
        text, quoted = summary_text(span, len(seqs), self._samples(seqs, QUOTED))
        summary = Summary(span, len(seqs), quoted, text)
        if persist and seqs:
            try:
                self._put(summary)
            except sqlite3.OperationalError as exc:  # a full disk: the row is a cache, the rendering needs none
                logger.warning("the summary %s was not kept (%s); the next rendering builds it again", span.id, exc)
        return summary


def _spread(seqs: Sequence[int], count: int) -> list[int]:
    """Up to `count` of `seqs`, evenly spread from the first to the last, in order."""
    if len(seqs) <= count:
        return list(seqs)
    step = (len(seqs) - 1) / (count - 1)
    return [seqs[round(n * step)] for n in range(count)]
