"""Ranked recall: words (FTS5 BM25), meaning (embeddings), the time and the speakers a question names, fused by rank.

Each signal ranks the facts the caller may see on its own (confirmed, of the asked statuses, valid at the
instant, not excluded), and reciprocal rank fusion (Cormack et al., 2009) sums weight / (RRF_K + rank) over
the lists, so no signal's score scale is calibrated against another's. A question that names someone whose
words the log holds ("Caroline: ...") lifts what they said, and its meaning is read without their names
(`speakers.py`). Only standing facts have vectors, so a retracted or erased fact is never found by meaning,
nor lends its meaning to a neighbour's vector. A query without content words finds nothing; without an
embedder (or with a weight of 0) the full-text list alone decides, as before fusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from host.memory.embedder import Vectors
from host.memory.fold import Fact, valid_at
from host.memory.index import MemoryIndex
from host.memory.query import match_expression, query_terms
from host.memory.speakers import name_candidates, speaker_of, without_names
from host.memory.timespan import Span, named_span
from host.rank_fusion import fuse

__all__ = [
    "Ranking",
    "DEFAULT_RANKING",
    "COMMON_TERM_FACTS",
    "COMMON_ONLY_WINDOW",
    "Signals",
    "gather_signals",
    "combine",
    "rank_facts",
    "fuse",
    "meaning_query",
]

COMMON_TERM_FACTS = 300
"""A query word held by more facts than this is left out of ranking while rarer words remain (bounded cost)."""
COMMON_ONLY_WINDOW = 4
"""When every query word is common, `limit` x this many newest matches are ranked (by words shared)."""


@dataclass(frozen=True, slots=True)
class Ranking:
    """The weights of recall's signals. The defaults and how they were chosen are in docs/memory.md."""

    context_weight: float = 0.3
    """BM25 weight of a log entry's neighbours' words against its own (1.0); 0 switches log context off."""
    dense_weight: float = 1.0
    """The meaning list's vote against the full-text list's (1.0); 0 switches embeddings off."""
    time_weight: float = 1.5
    """The vote of facts valid in the time the query names, ranked by meaning (or by words without vectors)."""
    speaker_boost: float = 0.5
    """A log entry spoken by someone the question names has its fused score raised by this share; 0: off."""
    names_out_of_meaning: bool = True
    """Embed the question without the names of the speakers it names (the boost brings their entries)."""
    dense_floor: float = 0.8
    """Cosine below which the embedder's pairs are unrelated: such facts get no vote by meaning."""
    rrf_k: int = 10
    """Reciprocal rank fusion's constant (its authors used 60; 10 was chosen on half of LoCoMo's conversations)."""
    depth: int = 30
    """Facts each signal ranks (at least `limit`)."""

    def without(self, feature: str) -> Ranking:
        """This ranking with one feature switched off, for ablations: `context`, `dense`, `time`, `speaker` or
        `names-out` (the speakers' names kept in the meaning query)."""
        if feature == "context":
            return replace(self, context_weight=0.0)
        if feature == "dense":
            return replace(self, dense_weight=0.0)
        if feature == "time":
            return replace(self, time_weight=0.0)
        if feature == "speaker":
            return replace(self, speaker_boost=0.0)
        if feature == "names-out":
            return replace(self, names_out_of_meaning=False)
        raise ValueError(f"no ranking feature {feature!r}")


DEFAULT_RANKING = Ranking()


def _visible(fact: Fact, statuses: Sequence[str], instant: str | None, excluded: set[str]) -> bool:
    return (
        fact.status in statuses
        and fact.trust == "confirmed"
        and fact.text is not None
        and fact.id not in excluded
        and (instant is None or valid_at(fact, instant))
    )


def _by_words(
    index: MemoryIndex,
    terms: list[str],
    depth: int,
    statuses: Sequence[str],
    instant: str | None,
    exclude_ids: Sequence[str],
    ranking: Ranking,
) -> list[Fact]:
    """The full-text list: BM25 over the rarer words, or the newest facts holding only common ones."""
    frequencies = index.document_frequencies(terms, COMMON_TERM_FACTS)
    # Words held by very many facts add little to BM25 but cost a scan of all of them: leave them out
    # while rarer words remain; when none remain, rank only the newest facts holding the common ones.
    rare = [term for term, count in zip(terms, frequencies, strict=True) if 0 < count <= COMMON_TERM_FACTS]
    common = [term for term, count in zip(terms, frequencies, strict=True) if count > COMMON_TERM_FACTS]
    expression = match_expression(rare or common)
    if expression is None:
        return []
    found = index.search(
        expression,
        limit=depth if rare else depth * COMMON_ONLY_WINDOW,
        statuses=statuses,
        instant=instant,
        newest_first=not rare,
        exclude_ids=exclude_ids,
        context_weight=ranking.context_weight,
    )
    if not rare:
        # The newest facts holding common words, those that share the most words with the query first.
        wanted = set(terms)
        shared = {fact.id: len(wanted.intersection(query_terms(fact.text or ""))) for fact, _ in found}
        found = sorted(found, key=lambda hit: -shared[hit[0].id])
    return [fact for fact, _ in found]


def _by_meaning(
    index: MemoryIndex,
    vector: Vectors,
    depth: int,
    statuses: Sequence[str],
    instant: str | None,
    excluded: set[str],
    ranking: Ranking,
) -> list[Fact]:
    """The meaning list: the standing facts nearest the query, each at or above the embedder's floor of
    relatedness (a log entry's vector reads it with the entry before it: `vectors.py`)."""
    window = depth * 2
    while True:
        near = index.vectors.nearest(vector, window)
        seqs = [seq for seq, score in near if score >= ranking.dense_floor]
        facts = {fact.seq: fact for fact in index.facts_by_seq(seqs)}
        found = [f for seq in seqs if (f := facts.get(seq)) is not None and _visible(f, statuses, instant, excluded)]
        if len(found) >= depth or len(seqs) < len(near) or len(near) < window:
            return found[:depth]
        window *= 4


def _by_time(
    index: MemoryIndex,
    span: Span,
    vector: Vectors | None,
    words: list[Fact],
    depth: int,
    statuses: Sequence[str],
    instant: str | None,
    excluded: set[str],
) -> list[Fact]:
    """The time list: facts valid in the named span, nearest in meaning first (or in word order without vectors)."""
    if vector is None:
        return [fact for fact in words if fact.valid_from is not None and span.start <= fact.valid_from < span.end]
    # Only the nearest few of the span's facts are read from the index: a year can hold thousands.
    scores = index.vectors.scores(vector, index.valid_in(span.start, span.end))
    nearest = sorted(scores, key=lambda seq: -scores[seq])[: depth * 2]
    facts = [f for f in index.facts_by_seq(nearest) if _visible(f, statuses, instant, excluded)]
    return sorted(facts, key=lambda fact: -scores[fact.seq])[:depth]


@dataclass(frozen=True, slots=True)
class Signals:
    """Each signal's ranked facts for one query, before fusion."""

    words: list[Fact]
    meaning: list[Fact]
    timed: list[Fact]
    speakers: frozenset[str] = frozenset()
    """The speakers of log entries the query names."""


def named_speakers(index: MemoryIndex, query: str) -> set[str]:
    """The people `query` names whose words the log holds (as "Name: ..." entries)."""
    return index.speakers_among(name_candidates(query))


def meaning_query(index: MemoryIndex, query: str, ranking: Ranking = DEFAULT_RANKING) -> str:
    """The text embedded to rank by meaning: `query` without the names of the speakers it names."""
    if not ranking.names_out_of_meaning:
        return query
    return without_names(query, named_speakers(index, query))


def gather_signals(
    index: MemoryIndex,
    query: str,
    *,
    depth: int,
    statuses: Sequence[str],
    instant: str | None,
    exclude_ids: Sequence[str],
    now: datetime,
    vector: Vectors | None,
    ranking: Ranking = DEFAULT_RANKING,
) -> Signals | None:
    """Rank the visible facts by each signal (None: the query has no content words). See `rank_facts`."""
    terms = query_terms(query)
    if not terms:
        return None
    excluded = set(exclude_ids)
    words = _by_words(index, terms, depth, statuses, instant, exclude_ids, ranking)
    meaning: list[Fact] = []
    if vector is not None and ranking.dense_weight > 0:
        meaning = _by_meaning(index, vector, depth, statuses, instant, excluded, ranking)
    span = named_span(query, now) if ranking.time_weight > 0 else None
    timed = _by_time(index, span, vector, words, depth, statuses, instant, excluded) if span else []
    speakers = frozenset(named_speakers(index, query)) if ranking.speaker_boost > 0 else frozenset()
    return Signals(words, meaning, timed, speakers)


def _spoken_by(fact: Fact, speakers: frozenset[str]) -> bool:
    return fact.tier == "log" and speaker_of(fact.text) in speakers


def combine(signals: Signals, ranking: Ranking, limit: int) -> list[tuple[Fact, float]]:
    """Fuse the signals by weighted reciprocal rank, one fact per content signature, at most `limit`.

    When the query names speakers, their log entries' fused scores are raised by `speaker_boost`.
    """
    lists = [(1.0, signals.words), (ranking.dense_weight, signals.meaning), (ranking.time_weight, signals.timed)]
    facts = {fact.seq: fact for _, found in lists for fact in found}
    fused = fuse([(weight, [fact.seq for fact in found]) for weight, found in lists], ranking.rrf_k)
    if signals.speakers and ranking.speaker_boost > 0:
        lift = 1.0 + ranking.speaker_boost
        fused = [(seq, score * lift if _spoken_by(facts[seq], signals.speakers) else score) for seq, score in fused]
    # A tie goes to the fact whose own words match best (a neighbour's context can tie with it), then the newest.
    by_words = {fact.seq: rank for rank, fact in enumerate(signals.words)}
    fused.sort(key=lambda item: (-item[1], by_words.get(item[0], len(by_words)), -item[0]))
    hits: list[tuple[Fact, float]] = []
    seen: set[str] = set()
    for seq, score in fused:
        fact = facts[seq]
        if (fact.sig or fact.id) in seen:
            continue
        seen.add(fact.sig or fact.id)
        hits.append((fact, score))
        if len(hits) == limit:
            break
    return hits


def rank_facts(
    index: MemoryIndex,
    query: str,
    *,
    limit: int,
    statuses: Sequence[str],
    instant: str | None,
    exclude_ids: Sequence[str],
    now: datetime,
    vector: Vectors | None,
    ranking: Ranking = DEFAULT_RANKING,
) -> list[tuple[Fact, float]]:
    """The facts that best answer `query`, best first, with their fused score, one per content signature.

    Args:
        index: the agent's index.
        query: free text.
        limit: the most facts to return.
        statuses: fact statuses that may be returned (`live`, and `retracted`/`superseded` when asked).
        instant: only facts valid then (None: any).
        exclude_ids: facts not to return.
        now: the reference for relative times ("last week").
        vector: the query's embedding, or None (no meaning or time-by-meaning list).
        ranking: the signals' weights.
    """
    if limit <= 0:
        return []
    signals = gather_signals(
        index,
        query,
        depth=max(limit, ranking.depth),
        statuses=statuses,
        instant=instant,
        exclude_ids=exclude_ids,
        now=now,
        vector=vector,
        ranking=ranking,
    )
    return [] if signals is None else combine(signals, ranking, limit)
