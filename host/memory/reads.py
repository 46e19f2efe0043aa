"""The read side of an agent's memory: views, search, history, verification and the prompt's inputs.

"Now" queries read the persistent projection in the index, so their cost does not grow with the
ledger's length beyond what they return. `knownAt` queries replay the ledger up to that transaction
time (what we believed then); `asOf` picks the valid-time instant (what was true then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

from host.memory.embedder import QUERY_VECTORS, Vectors
from host.memory.errors import InvalidMemoryRequestError, RecordNotFoundError
from host.memory.explain import Explanation, explain
from host.memory.fold import TIER_RANK, Conflict, Fact, Standing, classify, replay, valid_at
from host.memory.index import MemoryIndex
from host.memory.index_queries import IndexQueries
from host.memory.ledger import Ledger, VerifyReport
from host.memory.query import query_terms
from host.memory.ranking import (
    COMMON_ONLY_NEWEST,
    COMMON_TERM_FACTS,
    DEFAULT_RANKING,
    Ranking,
    Signals,
    gather_signals,
    meaning_query,
    rank_facts,
)
from host.memory.recall import RecallBlock, choose_recall, replayed_recall
from host.memory.records import Record, format_instant
from host.memory.section import LogRoom, MemorySection, SectionLimits, render_section
from host.memory.summaries import cut_date, day_instant, parse_span
from host.memory.values import parse_instant
from host.memory.vectors import MeaningState, worker_for
from host.memory.view import ViewSelection, select_view

__all__ = ["MemoryReads", "Listing", "SearchHit", "VIEWS", "COMMON_TERM_FACTS", "COMMON_ONLY_NEWEST"]

VIEWS = ("current", "conflicts", "proposed", "all", "retracted")

FRESH_BACKLOG = 16
"""A recall computes itself the vectors of at most this many facts noted just before it (read your own
writes), rather than wait for the background worker's batch (a longer backlog is a rebuild's backfill)."""


@dataclass(frozen=True, slots=True)
class Listing:
    facts: tuple[Fact, ...]
    conflicts: tuple[Conflict, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchHit:
    fact: Fact
    score: float


class MemoryReads:
    """Queries over one agent's ledger and index (the base of `MemoryStore`)."""

    _clock: Callable[[], datetime]

    def __init__(self, ledger: Ledger, index: MemoryIndex) -> None:
        self._ledger = ledger
        self._index = index

    def _now(self) -> str:
        return format_instant(self._clock())

    @property
    def epoch_mark(self) -> int:
        """The seq of the last record that changed what the system prompt must say."""
        return int(self._index.meta("epoch_mark") or 0)

    @property
    def last_seq(self) -> int:
        return self._ledger.head_seq

    def close(self) -> None:
        self._ledger.close()
        self._index.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def is_erased(self, record_id: str) -> bool:
        """Whether the record was erased (its text is gone)."""
        found = self._index.fact(record_id)
        return found is not None and found.status == "erased"

    def fact(self, record_id: str) -> Fact:
        """The fact record `record_id` as it stands now.

        Raises:
            RecordNotFoundError: no such fact, or it was erased.
        """
        fact = self._index.fact(record_id)
        if fact is None or fact.status == "erased":
            raise RecordNotFoundError(f"no memory record {record_id}")
        return fact

    def standing(self, *, as_of: str | None = None, known_at: str | None = None) -> Standing:
        """Current facts and conflicts at valid time `as_of` (default now), as believed at `known_at`."""
        instant = parse_instant(as_of, "asOf") or self._now()
        if known_at is not None:
            state = replay(self._ledger.records(), known_at=parse_instant(known_at, "knownAt"))
            return classify(state.facts.values(), instant)
        return classify(self._index.candidates(instant), instant)

    def list_facts(self, view: str, *, as_of: str | None = None, known_at: str | None = None) -> Listing:
        """One of the views: current, conflicts, proposed, all, retracted.

        Raises:
            InvalidMemoryRequestError: unknown view or malformed instant.
        """
        if view not in VIEWS:
            raise InvalidMemoryRequestError(f"view must be one of {', '.join(VIEWS)}")
        if view in ("current", "conflicts"):
            standing = self.standing(as_of=as_of, known_at=known_at)
            return Listing(standing.current if view == "current" else (), standing.conflicts)
        if known_at is not None:
            facts = list(replay(self._ledger.records(), known_at=parse_instant(known_at, "knownAt")).facts.values())
            facts = [f for f in facts if f.status != "erased" and f.text is not None]
        else:
            facts = self._index.by_state()
        instant = parse_instant(as_of, "asOf")
        if view == "proposed":
            facts = [f for f in facts if f.trust == "proposed" and f.status == "live"]
        elif view == "retracted":
            facts = [f for f in facts if f.status == "retracted"]
        if instant is not None:
            facts = [f for f in facts if valid_at(f, instant)]
        return Listing(tuple(sorted(facts, key=lambda f: f.seq)))

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        include_retracted: bool = False,
        as_of: str | None = None,
        exclude_ids: Sequence[str] = (),
        ranking: Ranking = DEFAULT_RANKING,
        rewrite: Sequence[str] = (),
    ) -> list[SearchHit]:
        """Recall over confirmed facts by words, meaning and named time: the path `memory_recall` and
        `memory.search` share (`host/memory/ranking.py` ranks).

        Args:
            query: free text.
            limit: the most hits to return.
            include_retracted: also search retracted and replaced facts by their words (labelled by status).
            as_of: only facts valid at this instant.
            exclude_ids: facts not to return (those the prompt already shows).
            ranking: the signals' weights (benchmarks switch them off one at a time).
            rewrite: search words a model gave for the query (`rewrite.py`), a words list of their own.
        """
        statuses = ("live", "retracted", "superseded") if include_retracted else ("live",)
        instant = parse_instant(as_of, "asOf")
        found = rank_facts(
            self._index,
            query,
            limit=limit,
            statuses=statuses,
            instant=instant,
            exclude_ids=exclude_ids,
            now=self._clock(),
            vector=self._query_vector(query, ranking),
            ranking=ranking,
            rewrite=rewrite,
        )
        return [SearchHit(fact, score) for fact, score in found]

    def _query_vector(self, query: str, ranking: Ranking) -> Vectors | None:
        embedder = self._index.vectors.embedder
        if embedder is None or not query_terms(query) or not self._index.vectors.count():
            return None
        if ranking.dense_weight <= 0 and ranking.time_weight <= 0:
            return None
        return QUERY_VECTORS.get(embedder, meaning_query(self._index, query, ranking))

    def recall_signals(
        self, query: str, *, ranking: Ranking = DEFAULT_RANKING, rewrite: Sequence[str] = ()
    ) -> Signals | None:
        """Each signal's ranked facts for `query` before fusion (benchmarks fuse them under many weights)."""
        vector = self._query_vector(query, ranking)
        return gather_signals(
            self._index,
            query,
            depth=ranking.depth,
            statuses=("live",),
            instant=None,
            exclude_ids=(),
            now=self._clock(),
            vector=vector,
            ranking=ranking,
            rewrite=rewrite,
        )

    def wait_embedded(self, timeout: float) -> bool:
        """Block until every standing fact's vector is written (benchmarks, tests); False if `timeout` passed."""
        return self._index.vectors.wait_embedded(timeout)

    @property
    def meaning(self) -> MeaningState:
        """Whether a search ranks by meaning now (`on`), or by words only while the model loads or without it."""
        return self._index.vectors.meaning

    async def prepare_recall(self, query: str) -> None:
        """Get `query`'s vector ready off the event loop, after a few just-noted facts' vectors (see
        `compute_fresh`); while the model is still loading, nothing (the search then runs on words)."""
        vectors = self._index.vectors
        vectors.adopt_loaded(worker_for)
        if vectors.embedder is None or not query_terms(query):
            return
        await vectors.compute_fresh(FRESH_BACKLOG)
        if vectors.embedder is not None and vectors.count():
            await QUERY_VECTORS.prepare(vectors.embedder, meaning_query(self._index, query))

    def history(
        self, record_id: str | None = None, *, limit: int | None = None, before_seq: int | None = None
    ) -> list[Record]:
        """The audit trail: every record touching `record_id`, or all records (newest `limit` before `before_seq`).

        Raises:
            RecordNotFoundError: `record_id` names no record.
        """
        if record_id is None:
            records = [r for r in self._ledger.records() if before_seq is None or r.seq < before_seq]
            return records[-limit:] if limit else records
        related = [
            r
            for r in self._ledger.records()
            if record_id in (r.id, r.target, r.replaces) or record_id in r.targets or record_id in r.scrubbed
        ]
        if not related:
            raise RecordNotFoundError(f"no memory record {record_id}")
        return related[-limit:] if limit else related

    def explain(self, record_id: str, history: Sequence[Record] | None = None) -> Explanation:
        """Everything that bears on one fact (see `host.memory.explain`).

        Args:
            record_id: the fact's id.
            history: its records from `history` (read in a worker thread by the caller); else the ledger is read.

        Raises:
            RecordNotFoundError: no fact has that id.
        """
        return explain(record_id, self._index, list(self._ledger.records()) if history is None else history)

    def committed_ledger(self) -> bytes:
        """The ledger's acknowledged records as bytes (for an export)."""
        return self._ledger.committed_bytes()

    def verify(self) -> VerifyReport:
        """Re-walk the hash chain from disk and name the first bad record."""
        return self._ledger.verify()

    def _recent_facts(
        self, instant: str, limit: int, index: IndexQueries | None = None, tiers: Iterable[str] = TIER_RANK
    ) -> dict[str, Fact]:
        index = index or self._index
        keyed = index.keyed_candidates(instant, limit)
        # Every candidate of those keys, however old, so a conflict is never hidden behind the window.
        facts = {f.id: f for f in index.candidates_for_keys({f.key for f in keyed if f.key}, instant)}
        for tier in tiers:
            facts.update((f.id, f) for f in index.newest_candidates(tier, instant, limit))
        return facts

    def recent_standing(self, limit: int) -> tuple[Standing, dict[str, int]]:
        """Standing facts for bounded renderings, at a cost that does not grow with memory.

        Args:
            limit: the newest facts taken per tier (and of facts with a key, among which conflicts are found).

        Returns:
            The standing facts among those, and how many facts may stand now per tier (for "N did not fit").
        """
        instant = self._now()
        return classify(self._recent_facts(instant, limit).values(), instant), self._index.candidate_counts(instant)

    def view_selection(self, limit: int, index: IndexQueries | None = None) -> tuple[ViewSelection, str]:
        """What MEMORY.md shows now, and the instant it is taken at (bounded, like `recent_standing`); read
        through `index` (the disk worker's connection) when given."""
        instant = self._now()
        index = index or self._index
        facts = self._recent_facts(instant, limit, index)
        proposed, waiting = index.newest_proposed(limit)
        facts.update((f.id, f) for f in proposed)
        totals = index.candidate_counts(instant)
        return select_view(facts.values(), instant, limit, totals=totals, waiting=waiting), instant

    def facts_through(self, seq: int) -> Iterable[Fact]:
        """Every fact as it stood once the ledger reached `seq` (a replay: the cost grows with the ledger)."""
        return replay(self._ledger.records(), through_seq=seq).facts.values()

    def _writing(self) -> bool:
        """Whether a write may be under way (then derived rows are not written from a read)."""
        return False

    def prompt_section(self, *, max_bytes: int = 6000, max_lines: int = 60, tools: bool = True) -> MemorySection:
        """The bounded memory section for the system prompt, from the facts standing now.

        Log entries dated before the horizon's cut come through the summaries of their spans; the rest as
        facts. `tools` says whether the model is offered the memory tools; without them the section names none.
        """
        now = self._clock()
        instant = format_instant(now)
        cut = cut_date(now)
        recent = self._recent_facts(instant, max_lines, tiers=("profile", "note"))
        facts = {fid: f for fid, f in recent.items() if f.tier != "log" or f.key}
        summaries = self._index.summaries.before(cut, instant, persist=not self._writing())
        limits = SectionLimits(max_bytes, max_lines)
        # Recent log entries are read only while they fit beside what ranks above them.
        room = LogRoom(classify(facts.values(), instant), limits, tools=tools, summaries=summaries)
        facts.update((f.id, f) for f in self._index.recent_log(day_instant(cut), instant, max_lines, room.take))
        standing = classify(facts.values(), instant)
        # Counted without walking the log: the summaries already count the entries they cover.
        totals = self._index.candidate_counts(instant, ("profile", "note"))
        logs = self._index.unsummarised_log_count(day_instant(cut), instant) + sum(s.count for s in summaries)
        if logs:
            totals["log"] = logs
        section = render_section(standing, limits, totals, tools=tools, summaries=summaries)
        self.note_use(section.shown_ids, "shown")
        return section

    def note_use(self, ids: Sequence[str], kind: str) -> None:
        """Count one use (`recalled` or `shown`) of each fact (derived counts in the index, `uses.py`)."""
        self._index.uses.count(ids, kind, self._now())

    def summary_covers(self, summary_id: str) -> list[str]:
        """The ids of the standing log entries summary `summary_id` covers now (its citations).

        Raises:
            RecordNotFoundError: `summary_id` does not name a span.
        """
        span = parse_span(summary_id)
        if span is None:
            raise RecordNotFoundError(f"no memory summary {summary_id}")
        return self._index.summaries.covered(span, self._now())

    def recall_block(
        self, text: str, *, since_seq: int, exclude_ids: tuple[str, ...] = (), limit: int = 5, added_limit: int = 10
    ) -> RecallBlock | None:
        """The per-turn block: recall for `text` plus standing facts added after `since_seq` (background).

        Args:
            text: the latest message.
            since_seq: the ledger seq at which the system prompt was frozen.
            exclude_ids: facts the frozen section already shows.
            limit: the most recalled facts.
            added_limit: the most background additions listed (the rest are counted).

        Returns:
            The block (ids and text, within its byte cap), or None when there is nothing to show.
        """
        recalled = [hit.fact for hit in self.search(text, limit=limit, exclude_ids=exclude_ids)]
        self.note_use([fact.id for fact in recalled], "recalled")
        skip = {*exclude_ids, *(fact.id for fact in recalled)}
        added, total = self._index.added_since(since_seq, self._now(), added_limit)
        kept = [fact for fact in added if fact.id not in skip]
        return choose_recall(recalled, kept, max(0, total - len(added)))

    def replayed_recall(self, events: Sequence[Mapping[str, Any]], epoch: int, budget: int) -> dict[int, str]:
        """The recall text of each stored block to replay, rendered from the facts as they stand now.

        See `host.memory.recall.replayed_recall`.
        """
        return replayed_recall(events, epoch, budget, self._index.fact)
