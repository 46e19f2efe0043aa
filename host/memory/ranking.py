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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from host.memory.embedder import Vectors
from host.memory.expansion import category_terms
from host.memory.fold import Fact, valid_at
from host.memory.index import MemoryIndex
from host.memory.query import match_expression, query_terms
from host.memory.speakers import match_speakers, name_candidates, speaker_key, speaker_of, without_names
from host.memory.timespan import Span, named_span
from host.rank_fusion import fuse

__all__ = [
    "Ranking",
    "DEFAULT_RANKING",
    "COMMON_TERM_FACTS",
    "COMMON_ONLY_NEWEST",
    "Signals",
    "gather_signals",
    "combine",
    "rank_facts",
    "fuse",
    "meaning_query",
]

COMMON_TERM_FACTS = 300
"""A query word held by more facts than this is left out of ranking while rarer words remain (bounded cost)."""
COMMON_ONLY_NEWEST = 120
"""When every query word is common, this many of the newest matches are ranked (by words shared), whatever the
depth: each is read and split into words, and a deeper window bought no recall for its cost."""
MAX_SPEAKERS = 500
"""Speakers whose name forms a query is compared with; past this many, a query names a speaker by its key alone."""


@dataclass(frozen=True, slots=True)
class Ranking:
    """The weights of recall's signals. The defaults and how they were chosen are in docs/memory.md."""

    before_weight: float = 0.0
    """BM25 weight of the words of the entry a log entry follows (what a reply answers); 0: off."""
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
    expansion_weight: float = 0.5
    """The vote of the words a question's category stands for (`expansion.py`); 0: off."""
    rewrite_weight: float = 0.5
    """The vote of the search words the agent's model gave for the question (`rewrite.py`), when it gave any."""
    words_floor: float = 0.0
    """Share of every prefix of the result kept for plain BM25's order (a fact's own words, no log context):
    its hit of rank r is never placed below position ceil(r / share), so fusion cannot bury what the words
    alone find; 0: off."""
    meaning_context: float = 0.4
    """The weight of the entry before a log entry in the meaning it is searched by: its vector composed with
    that entry's (`vectors.compose`), so a reply is found by what it answers; 0: each entry alone."""
    dense_floor: float = 0.8
    """Cosine below which the embedder's pairs are unrelated: such facts get no vote by meaning."""
    rrf_k: int = 10
    """Reciprocal rank fusion's constant (its authors used 60; 10 was chosen on half of LoCoMo's conversations)."""
    depth: int = 80
    """Facts each signal ranks (at least `limit`): a fact far down two lists still sums two votes. 80 was
    chosen on half of LoCoMo's conversations (docs/memory.md)."""

    def without(self, feature: str) -> Ranking:
        """This ranking with one feature switched off, for ablations: one of `FEATURES`."""
        switched = {
            "before": lambda: replace(self, before_weight=0.0),
            "context": lambda: replace(self, context_weight=0.0),
            "dense": lambda: replace(self, dense_weight=0.0),
            "time": lambda: replace(self, time_weight=0.0),
            "expansion": lambda: replace(self, expansion_weight=0.0),
            "rewrite": lambda: replace(self, rewrite_weight=0.0),
            "speaker": lambda: replace(self, speaker_boost=0.0),
            "names-out": lambda: replace(self, names_out_of_meaning=False),
            "meaning-context": lambda: replace(self, meaning_context=0.0),
            "floor": lambda: replace(self, words_floor=0.0),
        }
        if feature not in switched:
            raise ValueError(f"no ranking feature {feature!r}")
        return switched[feature]()


FEATURES = (
    "before",
    "context",
    "meaning-context",
    "dense",
    "time",
    "expansion",
    "rewrite",
    "speaker",
    "names-out",
    "floor",
)
"""The features `Ranking.without` switches off (`names-out`: the speakers' names kept in the meaning query)."""

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
        limit=depth if rare else max(depth, COMMON_ONLY_NEWEST),
        statuses=statuses,
        instant=instant,
        newest_first=not rare,
        exclude_ids=exclude_ids,
        before_weight=ranking.before_weight,
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
    relatedness (a log entry's vector composed with the entry before it's: `vectors.py`)."""
    window = depth * 2
    while True:
        near = index.vectors.nearest(vector, window, ranking.meaning_context)
        seqs = [seq for seq, score in near if score >= ranking.dense_floor]
        found = _first_visible(index, seqs, depth, statuses, instant, excluded)
        if len(found) >= depth or len(seqs) < len(near) or len(near) < window:
            return found
        window *= 4


def _first_visible(
    index: MemoryIndex, seqs: list[int], depth: int, statuses: Sequence[str], instant: str | None, excluded: set[str]
) -> list[Fact]:
    """The first `depth` visible facts of `seqs`, in their order. Facts are read only as far as needed: most
    are visible, so the first read of `depth` of them is usually the last (a fact read is most of a list's cost)."""
    found: list[Fact] = []
    start, size = 0, depth
    while len(found) < depth and start < len(seqs):
        chunk = seqs[start : start + size]
        start += len(chunk)
        facts = {fact.seq: fact for fact in index.facts_by_seq(chunk)}
        found += [f for seq in chunk if (f := facts.get(seq)) is not None and _visible(f, statuses, instant, excluded)]
        size = 2 * (depth - len(found))  # what is still missing, twice over
    return found[:depth]


def _by_time(
    index: MemoryIndex,
    span: Span,
    vector: Vectors | None,
    words: list[Fact],
    depth: int,
    statuses: Sequence[str],
    instant: str | None,
    excluded: set[str],
    context: float,
) -> list[Fact]:
    """The time list: facts valid in the named span, nearest in meaning first (or in word order without vectors)."""
    if vector is None:
        return [fact for fact in words if fact.valid_from is not None and span.start <= fact.valid_from < span.end]
    # Only the nearest few of the span's facts are read from the index: a year can hold thousands.
    scores = index.vectors.scores(vector, index.valid_in(span.start, span.end), context)
    return _first_visible(index, sorted(scores, key=lambda seq: -scores[seq]), depth, statuses, instant, excluded)


@dataclass(frozen=True, slots=True)
class Signals:
    """Each signal's ranked facts for one query, before fusion."""

    words: list[Fact]
    meaning: list[Fact]
    timed: list[Fact]
    speakers: frozenset[str] = frozenset()
    """The keys of the speakers of log entries the query names (`speakers.speaker_key`)."""
    expanded: list[Fact] = field(default_factory=list)
    """Facts ranked by the words the question's category stands for (`expansion.py`)."""
    rewritten: list[Fact] = field(default_factory=list)
    """Facts ranked by the search words a model's rewrite of the question gave (`rewrite.py`)."""
    plain: list[Fact] | None = None
    """Facts ranked by their own words alone (no log context), for the words floor; None: as `words`."""


def named_speakers(index: MemoryIndex, query: str) -> dict[str, set[str]]:
    """The speakers (by key) of standing log entries that `query` names, each with the words that name them."""
    candidates = name_candidates(query)
    if not candidates:
        return {}
    keys = index.speaker_keys(MAX_SPEAKERS + 1)
    if len(keys) > MAX_SPEAKERS:
        keys = [candidate.key for candidate in candidates]  # too many labels to compare forms: exact keys only
    named = match_speakers(candidates, keys)
    standing = index.speakers_among(named)
    return {key: written for key, written in named.items() if key in standing}


def meaning_query(index: MemoryIndex, query: str, ranking: Ranking = DEFAULT_RANKING) -> str:
    """The text embedded to rank by meaning: `query` without the names of the speakers it names."""
    if not ranking.names_out_of_meaning:
        return query
    return without_names(query, {name for names in named_speakers(index, query).values() for name in names})


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
    rewrite: Sequence[str] = (),
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
    timed = (
        _by_time(index, span, vector, words, depth, statuses, instant, excluded, ranking.meaning_context)
        if span
        else []
    )
    speakers = frozenset(named_speakers(index, query)) if ranking.speaker_boost > 0 else frozenset()
    wider = category_terms(terms) if ranking.expansion_weight > 0 else []
    expanded = _by_words(index, wider, depth, statuses, instant, exclude_ids, ranking) if wider else []
    given = [term for term in dict.fromkeys(rewrite) if term not in terms] if ranking.rewrite_weight > 0 else []
    rewritten = _by_words(index, given, depth, statuses, instant, exclude_ids, ranking) if given else []
    plain = None
    if ranking.words_floor > 0 and (ranking.before_weight > 0 or ranking.context_weight > 0):
        alone = replace(ranking, before_weight=0.0, context_weight=0.0)
        plain = _by_words(index, terms, depth, statuses, instant, exclude_ids, alone)
    return Signals(words, meaning, timed, speakers, expanded, rewritten, plain)


def _spoken_by(fact: Fact, speakers: frozenset[str]) -> bool:
    label = speaker_of(fact.text) if fact.tier == "log" else None
    return label is not None and speaker_key(label) in speakers


def _with_floor(fused: list[int], words: list[int], share: float, limit: int) -> list[int]:
    """`fused` (seqs best first) with each of the first `words` placed no lower than ceil(rank / share)."""
    placed: list[int] = []
    taken: set[int] = set()
    owed = iter(words)
    due = next(owed, None)
    rest = iter(fused)
    while len(placed) < limit:
        while due is not None and due in taken:
            due = next(owed, None)
        # The words hit due soonest takes this place when its deadline has come; otherwise fusion's next one.
        if due is not None and math.ceil((words.index(due) + 1) / share) <= len(placed) + 1:
            chosen: int | None = due
        else:
            chosen = next((seq for seq in rest if seq not in taken), None)
            if chosen is None:
                chosen = due
        if chosen is None:
            break
        placed.append(chosen)
        taken.add(chosen)
    return placed


def combine(signals: Signals, ranking: Ranking, limit: int) -> list[tuple[Fact, float]]:
    """Fuse the signals by weighted reciprocal rank, one fact per content signature, at most `limit`.

    When the query names speakers, their log entries' fused scores are raised by `speaker_boost`. With a
    `words_floor`, plain BM25's hits keep places of their own in every prefix of the result.
    """
    lists = [
        (1.0, signals.words),
        (ranking.dense_weight, signals.meaning),
        (ranking.time_weight, signals.timed),
        (ranking.expansion_weight, signals.expanded),
        (ranking.rewrite_weight, signals.rewritten),
    ]
    facts: dict[int, Fact] = {}
    for _, found in lists:
        for fact in found:
            facts.setdefault(fact.seq, fact)
    fused = fuse([(weight, [fact.seq for fact in found]) for weight, found in lists], ranking.rrf_k)
    if signals.speakers and ranking.speaker_boost > 0:
        lift = 1.0 + ranking.speaker_boost
        fused = [(seq, score * lift if _spoken_by(facts[seq], signals.speakers) else score) for seq, score in fused]
    # A tie goes to the fact whose own words match best (a neighbour's context can tie with it), then the newest.
    by_words = {fact.seq: rank for rank, fact in enumerate(signals.words)}
    fused.sort(key=lambda item: (-item[1], by_words.get(item[0], len(by_words)), -item[0]))
    # One fact per content signature, in both lists, before the floor places them.
    scores: dict[int, float] = {}
    kept: dict[str, int] = {}
    for seq, score in fused:
        signature = facts[seq].sig or facts[seq].id
        if signature not in kept:
            kept[signature] = seq
            scores[seq] = score
    order = list(scores)
    if ranking.words_floor > 0:
        plain = signals.words if signals.plain is None else signals.plain
        for fact in plain:  # a plain hit no list voted for is still owed its place, with no fused score
            if (fact.sig or fact.id) not in kept:
                kept[fact.sig or fact.id] = fact.seq
                facts[fact.seq], scores[fact.seq] = fact, 0.0
        words = list(dict.fromkeys(kept[fact.sig or fact.id] for fact in plain))
        order = _with_floor(order, words, ranking.words_floor, limit)
    return [(facts[seq], scores[seq]) for seq in order[:limit]]


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
    rewrite: Sequence[str] = (),
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
        rewrite: search words a model gave for the question (`rewrite.py`): a list of their own.
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
        rewrite=rewrite,
    )
    return [] if signals is None else combine(signals, ranking, limit)
