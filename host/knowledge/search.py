"""Knowledge search: chunks ranked by words (FTS5 BM25) and by meaning (e5), fused by rank.

Both lists go through `host.rank_fusion.fuse`, the function memory's recall uses, with knowledge's own
weights. The word list is FTS5's own BM25 ranking of the query's content words ORed (memory's query rules:
Porter stems, stopwords out, CJK bigrams), the heading path and the text weighed alike, so fusion's words
are plain FTS5's and meaning only adds to them. The meaning list holds the chunks whose vector is at least
`dense_floor` from the query's. Each hit says why it matched: its rank in each list, the query words it
holds, its cosine. A query without content words and without a vector finds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from host.knowledge.store import ChunkRow, KnowledgeStore
from host.knowledge.vectors import ChunkVectors
from host.memory.embedder import Vectors
from host.memory.query import match_expression, query_terms
from host.rank_fusion import fuse

__all__ = ["KnowledgeRanking", "DEFAULT_KNOWLEDGE_RANKING", "KnowledgeHit", "search_chunks", "words_only"]


@dataclass(frozen=True, slots=True)
class KnowledgeRanking:
    """The weights of knowledge search's two lists (docs/knowledge.md says how they were chosen)."""

    dense_weight: float = 1.0
    """The meaning list's vote against the word list's (1.0); 0 switches meaning off."""
    dense_floor: float = 0.8
    """Cosine below which a chunk gets no vote by meaning (memory's floor for the same engine)."""
    rrf_k: int = 10
    """Reciprocal rank fusion's constant (memory's)."""
    depth: int = 30
    """Chunks each list ranks (at least `limit`)."""


DEFAULT_KNOWLEDGE_RANKING = KnowledgeRanking()


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    """One result: the chunk, its fused score, and why it matched."""

    chunk: ChunkRow
    score: float
    words_rank: int | None
    meaning_rank: int | None
    cosine: float | None
    terms: tuple[str, ...]


def words_only(store: KnowledgeStore, query: str, limit: int) -> list[int]:
    """The word list alone: chunk ids by BM25 over the query's content words, best first."""
    expression = match_expression(query_terms(query))
    return [] if expression is None else [chunk for chunk, _ in store.words(expression, limit)]


def _matched_terms(store: KnowledgeStore, terms: list[str], chunk_ids: list[int]) -> dict[int, tuple[str, ...]]:
    held: dict[int, list[str]] = {chunk_id: [] for chunk_id in chunk_ids}
    for term in terms:
        for chunk_id in store.holding(term, chunk_ids):
            held[chunk_id].append(term)
    return {chunk_id: tuple(found) for chunk_id, found in held.items()}


def search_chunks(
    store: KnowledgeStore,
    vectors: ChunkVectors,
    query: str,
    *,
    limit: int,
    vector: Vectors | None,
    ranking: KnowledgeRanking = DEFAULT_KNOWLEDGE_RANKING,
) -> list[KnowledgeHit]:
    """The chunks that best answer `query`, best first.

    Args:
        store: the base's index (a reading connection).
        vectors: the base's chunk vectors.
        query: free text.
        limit: the most hits.
        vector: the query's embedding, or None (words only).
        ranking: the lists' weights.
    """
    if limit <= 0:
        return []
    depth = max(limit, ranking.depth)
    terms = query_terms(query)
    expression = match_expression(terms)
    words = [chunk for chunk, _ in store.words(expression, depth)] if expression else []
    near: list[tuple[int, float]] = []
    if vector is not None and ranking.dense_weight > 0:
        near = [(chunk, cosine) for chunk, cosine in vectors.nearest(vector, depth) if cosine >= ranking.dense_floor]
    meaning = [chunk for chunk, _ in near]
    fused = fuse([(1.0, words), (ranking.dense_weight, meaning)], ranking.rrf_k)
    # A tie goes to the chunk whose words match best, then to the one earlier in the index.
    by_words = {chunk: rank for rank, chunk in enumerate(words, start=1)}
    fused.sort(key=lambda item: (-item[1], by_words.get(item[0], len(by_words) + 1), item[0]))
    chosen = [chunk for chunk, _ in fused[:limit]]
    rows = store.chunks(chosen)
    by_meaning = {chunk: rank for rank, (chunk, _) in enumerate(near, start=1)}
    cosines = dict(near)
    held = _matched_terms(store, terms, [chunk for chunk in chosen if chunk in by_words])
    scores = dict(fused)
    return [
        KnowledgeHit(
            rows[chunk],
            scores[chunk],
            by_words.get(chunk),
            by_meaning.get(chunk),
            cosines.get(chunk),
            held.get(chunk, ()),
        )
        for chunk in chosen
        if chunk in rows
    ]
