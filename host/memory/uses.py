"""How often each fact was used, and when last: derived rows of `index.sqlite`, never ledger records.

A fact is *recalled* when memory_recall, memory.search or a turn's recall block returns it, and *shown* when
a memory section that carries it is rendered. The counts are derived data like the rest of the index: a
rebuild starts them again from nothing, and they hold only record ids, counts and instants, no text.
They feed the review's stale candidates (`staleness.py`); nothing is ever removed because of them alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["USE_SCHEMA", "USE_KINDS", "Use", "UseCounts"]

USE_KINDS = ("recalled", "shown")

USE_SCHEMA = """
CREATE TABLE IF NOT EXISTS uses(
    id TEXT PRIMARY KEY, recalled INTEGER NOT NULL DEFAULT 0, shown INTEGER NOT NULL DEFAULT 0, last_used TEXT);
"""


@dataclass(frozen=True, slots=True)
class Use:
    """A fact's use so far: times recalled, times shown in a rendered section, and the last instant of either."""

    recalled: int = 0
    shown: int = 0
    last_used: str | None = None


class UseCounts:
    """The use rows of one index connection (used on the index's own thread)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def reconnect(self, db: sqlite3.Connection) -> None:
        self._db = db

    def forget_all(self) -> None:
        self._db.execute("DELETE FROM uses")

    def forget(self, ids: Iterable[str]) -> None:
        self._db.executemany("DELETE FROM uses WHERE id = ?", [(rid,) for rid in ids])

    def count(self, ids: Iterable[str], kind: str, at: str) -> None:
        """One more use of `kind` (recalled or shown) for each of `ids`, at `at`."""
        if kind not in USE_KINDS:
            raise ValueError(f"unknown use {kind!r}")
        rows = [(rid, at) for rid in dict.fromkeys(ids)]
        self._db.executemany(
            f"INSERT INTO uses(id, {kind}, last_used) VALUES (?, 1, ?) "
            f"ON CONFLICT(id) DO UPDATE SET {kind} = {kind} + 1, last_used = excluded.last_used",
            rows,
        )

    def of(self, ids: Iterable[str]) -> dict[str, Use]:
        """The use of each of `ids` that was ever used (the others are unused)."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Use] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            sql = f"SELECT id, recalled, shown, last_used FROM uses WHERE id IN ({', '.join('?' * len(part))})"
            for rid, recalled, shown, last in self._db.execute(sql, part):
                found[str(rid)] = Use(int(recalled), int(shown), last)
        return found
