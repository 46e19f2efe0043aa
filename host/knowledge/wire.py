"""The knowledge base's values as wire models, and citations: one place converts them for the RPC, the tools
and `hearth mcp-serve`.

A citation is `path:start-end` for lines (`path:N` for one line) and `path:p.N` (or `p.N-M`) for pages, so a
person can open the file where the chunk is.
"""

from __future__ import annotations

from host.knowledge.base import Owner
from host.knowledge.hub import KnowledgeStatus
from host.knowledge.search import KnowledgeHit
from host.knowledge.store import ChunkRow, SourceRow
from host.knowledge.suggestions import Suggestion
from protocol.models.knowledge import (
    KnowledgeChunk,
    KnowledgeFailure,
    KnowledgeMatch,
    KnowledgeProgressEvent,
    KnowledgeSource,
    KnowledgeSuggestion,
)
from protocol.models.knowledge import (
    KnowledgeHit as KnowledgeHitModel,
)

__all__ = [
    "citation",
    "chunk_model",
    "hit_model",
    "source_model",
    "owner_fields",
    "progress_event",
    "suggestion_model",
]


def citation(chunk: ChunkRow) -> str:
    """Where a chunk is: `path:12-30`, `path:7`, `path:p.3` or `path:p.3-4`."""
    prefix = "p." if chunk.unit == "page" else ""
    span = f"{chunk.start}" if chunk.start == chunk.end else f"{chunk.start}-{chunk.end}"
    return f"{chunk.path}:{prefix}{span}"


def _chunk_fields(chunk: ChunkRow) -> dict[str, object]:
    return {
        "chunk_id": chunk.chunk_id,
        "source_id": chunk.source_id,
        "path": chunk.path,
        "heading": list(chunk.heading),
        "start": chunk.start,
        "end": chunk.end,
        "unit": "page" if chunk.unit == "page" else "line",
        "citation": citation(chunk),
        "text": chunk.text,
        "masked": chunk.masked,
    }


def chunk_model(chunk: ChunkRow) -> KnowledgeChunk:
    return KnowledgeChunk.model_validate(_chunk_fields(chunk))


def hit_model(hit: KnowledgeHit) -> KnowledgeHitModel:
    why = KnowledgeMatch(
        words_rank=hit.words_rank,
        terms=list(hit.terms),
        meaning_rank=hit.meaning_rank,
        cosine=None if hit.cosine is None else round(hit.cosine, 4),
    )
    return KnowledgeHitModel.model_validate({**_chunk_fields(hit.chunk), "score": round(hit.score, 6), "why": why})


def source_model(row: SourceRow, *, on: bool, indexing: bool) -> KnowledgeSource:
    state = "off" if not on else "paused" if row.paused else "indexing" if indexing else "ready"
    return KnowledgeSource.model_validate(
        {
            "source_id": row.source_id,
            "path": row.path,
            "kind": row.kind,
            "pattern": row.pattern,
            "state": state,
            "files": row.files,
            "chunks": row.chunks,
            "embedded": row.vectors,
            "failed": [KnowledgeFailure(path=path, reason=reason) for path, reason in row.failed],
            "added_at": row.added_at,
            "indexed_at": row.indexed_at,
        }
    )


def owner_fields(owner: Owner) -> dict[str, str]:
    return {"agent_id": owner.id} if owner.kind == "agent" else {"work_id": owner.id}


def progress_event(status: KnowledgeStatus) -> KnowledgeProgressEvent:
    return KnowledgeProgressEvent.model_validate(
        {
            **owner_fields(status.owner),
            "state": status.state,
            "queued": status.queued,
            "indexed": status.indexed,
            "chunks": status.chunks,
            "embedded": status.embedded,
            "watching": status.watching,
        }
    )


def suggestion_model(suggestion: Suggestion) -> KnowledgeSuggestion:
    return KnowledgeSuggestion(
        suggestion_id=suggestion.suggestion_id,
        agent_id=suggestion.agent_id,
        path=suggestion.path,
        reason=suggestion.reason,
        run_id=suggestion.run_id,
        suggested_at=suggestion.suggested_at,
    )
