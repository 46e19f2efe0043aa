"""Log episodes: a `log` entry is also indexed with the words of the entry before it and of its neighbours.

An episode is the log entries of one valid-time day, in seq order. A log entry's `before` is the text of the
standing (live, confirmed, with text) entry just before it: what a reply answers, the words-side twin of the
entry its vector reads (`vectors.py`). Its context is the text of the NEIGHBOURS nearest standing entries on
each side; notes and profile facts have neither. Both are kept current write by write and equal what a
rebuild computes from scratch, so a retracted or erased entry's words leave its neighbours' rows with it.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from host.memory.fold import Fact
from host.memory.query import index_body

__all__ = ["NEIGHBOURS", "Context", "episode_of", "contexts", "EpisodeContexts"]

NEIGHBOURS = 2
"""Log entries on each side whose words a log entry is also indexed with."""

_UPDATE = "UPDATE fts SET before = ?, context = ? WHERE rowid = ?"

FactQuery = Callable[[str, Sequence[Any], str], list[Fact]]
"""`(where, params, tail)` -> facts: the index's fact lookup."""


def episode_of(fact: Fact) -> str | None:
    """Log entries of one day form an episode: a log entry is read with its neighbours in it."""
    return "log:" + (fact.valid_from or "")[:10] if fact.tier == "log" else None


def _standing(fact: Fact) -> bool:
    return fact.status == "live" and fact.trust == "confirmed" and fact.text is not None


class Context(NamedTuple):
    """The indexed words a log entry is read with: the entry just before it, and its neighbours."""

    before: str
    near: str


def contexts(episode: Sequence[Fact]) -> dict[int, Context]:
    """The context of every log entry of one episode (in seq order) that has text."""
    standing = [fact for fact in episode if _standing(fact) and fact.text]
    seqs = [fact.seq for fact in standing]
    out: dict[int, Context] = {}
    for fact in episode:
        if fact.text is None:
            continue
        at = bisect_left(seqs, fact.seq)
        after = at + 1 if at < len(seqs) and seqs[at] == fact.seq else at
        near = standing[max(0, at - NEIGHBOURS) : at] + standing[after : after + NEIGHBOURS]
        before = index_body(standing[at - 1].text or "") if at > 0 else ""
        out[fact.seq] = Context(before, " ".join(index_body(f.text or "") for f in near))
    return out


class EpisodeContexts:
    """Writes the `context` column of the FTS table for log entries (inside the index's transaction)."""

    def __init__(self, db: sqlite3.Connection, facts: FactQuery) -> None:
        self._db = db
        self._facts = facts

    def reconnect(self, db: sqlite3.Connection) -> None:
        """Use `db` from now on (the index file was replaced)."""
        self._db = db

    def _side(self, episode: str, seq: int, before: bool) -> list[Fact]:
        """Facts of the episode next to `seq` on one side, nearest first, until 2 x NEIGHBOURS standing ones."""
        order, compare = ("DESC", "<") if before else ("ASC", ">")
        rows = self._facts(f"episode = ? AND seq {compare} ?", (episode, seq), f"ORDER BY seq {order} LIMIT 200")
        side: list[Fact] = []
        standing = 0
        for fact in rows:
            side.append(fact)
            standing += _standing(fact)
            if standing == 2 * NEIGHBOURS:
                break
        return side

    def refresh_around(self, changed: Fact) -> None:
        """Recompute the context of the log entries whose neighbourhood includes `changed`."""
        episode = episode_of(changed)
        if episode is None:
            return
        before, after = self._side(episode, changed.seq, True), self._side(episode, changed.seq, False)
        text = contexts([*reversed(before), changed, *after])
        near = [changed]
        for side in (before, after):
            between = 0
            for fact in side:
                if between >= NEIGHBOURS:
                    break
                near.append(fact)
                between += _standing(fact)
        for fact in near:
            if fact.seq in text:
                self._db.execute(_UPDATE, (*text[fact.seq], fact.seq))

    def fill(self, facts: Iterable[Fact]) -> None:
        """Set the context of every log entry from scratch (after a rebuild)."""
        episodes: dict[str, list[Fact]] = {}
        for fact in facts:
            episode = episode_of(fact)
            if episode is not None:
                episodes.setdefault(episode, []).append(fact)
        for members in episodes.values():
            members.sort(key=lambda fact: fact.seq)
            rows = [(*context, seq) for seq, context in contexts(members).items()]
            self._db.executemany(_UPDATE, rows)
