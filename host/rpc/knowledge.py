"""The `knowledge.*` methods: a person admits, lists, pauses, removes and searches an agent's (or a Work's)
documents, and accepts or declines what an agent suggested. Every act here is a person's; the model only
searches and suggests, through its tools. Accepting admits exactly as `knowledge.add` does.

An unknown agent or Work, source or chunk is NOT_FOUND; a path that cannot be admitted (or that overlaps a
source of the same owner) is INVALID_PARAMS;
admitting or searching while the agent's knowledge is off is CONFLICT. Listing and removing always work,
as do listing and declining suggestions; an unknown suggestion is NOT_FOUND.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from host.knowledge import KnowledgeHub, Owner
from host.knowledge.suggestion_desk import SuggestionDesk
from host.knowledge.wire import chunk_model, hit_model, source_model, suggestion_model
from host.rpc.table import ShellTable
from protocol.models.knowledge import (
    KnowledgeAddParams,
    KnowledgeAddResult,
    KnowledgeDeclineResult,
    KnowledgeListResult,
    KnowledgeOwnerParams,
    KnowledgePauseParams,
    KnowledgeReadParams,
    KnowledgeReadResult,
    KnowledgeRemoveResult,
    KnowledgeSearchParams,
    KnowledgeSearchResult,
    KnowledgeSource,
    KnowledgeSourceParams,
    KnowledgeSuggestionParams,
    KnowledgeSuggestionsParams,
    KnowledgeSuggestionsResult,
)

__all__ = ["register_knowledge_methods"]

OwnerCheck = Callable[[Owner], None]
"""Raises NotFoundError when the agent or Work does not exist."""


def register_knowledge_methods(
    table: ShellTable, hub: KnowledgeHub, check: OwnerCheck, suggestions: SuggestionDesk
) -> None:
    """Add the `knowledge.*` methods to `table`, backed by `hub` and `suggestions`; `check` refuses an
    unknown owner."""

    def owner(p: KnowledgeOwnerParams) -> Owner:
        found = Owner("agent", p.agent_id) if p.agent_id is not None else Owner("work", p.work_id or "")
        check(found)
        return found

    async def listing(who: Owner) -> KnowledgeListResult:
        rows = await hub.sources(who)
        status = await asyncio.to_thread(hub.status, who)
        indexing = hub.indexing(who)
        sources = [source_model(row, on=status.on, indexing=row.source_id in indexing) for row in rows]
        return KnowledgeListResult(sources=sources, on=status.on, queued=status.queued, watching=status.watching)

    async def one(who: Owner, source_id: str) -> KnowledgeSource:
        return next(s for s in (await listing(who)).sources if s.source_id == source_id)

    async def admit(who: Owner, paths: list[str], pattern: str | None) -> KnowledgeAddResult:
        admitted = await hub.add(who, paths, pattern)
        sources = {s.source_id: s for s in (await listing(who)).sources}
        ids = [i for i in dict.fromkeys(admitted.source_ids) if i in sources]
        already = [i for i in ids if i in admitted.already]
        return KnowledgeAddResult(sources=[sources[i] for i in ids], already_admitted=already)

    async def add(p: KnowledgeAddParams) -> KnowledgeAddResult:
        return await admit(owner(p), p.paths, p.pattern)

    async def list_sources(p: KnowledgeOwnerParams) -> KnowledgeListResult:
        return await listing(owner(p))

    async def remove(p: KnowledgeSourceParams) -> KnowledgeRemoveResult:
        chunks = await hub.remove(owner(p), p.source_id)
        return KnowledgeRemoveResult(removed=True, chunks=chunks)

    async def pause(p: KnowledgePauseParams) -> KnowledgeSource:
        who = owner(p)
        await hub.pause(who, p.source_id, p.paused)
        return await one(who, p.source_id)

    async def search(p: KnowledgeSearchParams) -> KnowledgeSearchResult:
        hits = await hub.search(owner(p), p.query, p.limit)
        return KnowledgeSearchResult(hits=[hit_model(hit) for hit in hits])

    async def read(p: KnowledgeReadParams) -> KnowledgeReadResult:
        rows = await hub.read(owner(p), p.chunk_id, p.before, p.after)
        return KnowledgeReadResult(chunks=[chunk_model(row) for row in rows])

    def agent(p: KnowledgeSuggestionsParams) -> Owner:
        found = Owner("agent", p.agent_id)
        check(found)
        return found

    async def pending(p: KnowledgeSuggestionsParams) -> KnowledgeSuggestionsResult:
        held = await suggestions.pending(agent(p).id)
        return KnowledgeSuggestionsResult(suggestions=[suggestion_model(s) for s in held])

    async def accept(p: KnowledgeSuggestionParams) -> KnowledgeAddResult:
        who = agent(p)
        return await suggestions.accept(who.id, p.suggestion_id, lambda path: admit(who, [path], None))

    async def decline(p: KnowledgeSuggestionParams) -> KnowledgeDeclineResult:
        await suggestions.decline(agent(p).id, p.suggestion_id)
        return KnowledgeDeclineResult(declined=True)

    table.add("knowledge.add", KnowledgeAddParams, add)
    table.add("knowledge.list", KnowledgeOwnerParams, list_sources)
    table.add("knowledge.remove", KnowledgeSourceParams, remove)
    table.add("knowledge.pause", KnowledgePauseParams, pause)
    table.add("knowledge.search", KnowledgeSearchParams, search)
    table.add("knowledge.read", KnowledgeReadParams, read)
    table.add("knowledge.suggestions", KnowledgeSuggestionsParams, pending)
    table.add("knowledge.accept", KnowledgeSuggestionParams, accept)
    table.add("knowledge.decline", KnowledgeSuggestionParams, decline)
