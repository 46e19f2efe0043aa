"""The model's memory tools, executed by the host: memory_note, memory_recall, memory_correct, memory_forget.

Replies say plainly what happened ("already recorded", "nothing matched", "stored as proposed"), and a
refusal is a reply with `is_error`, never an exception. Review, erase and export are a person's acts and
are not offered here. With memory off the host offers none of these tools. Trust is the host's call, from
the run's `Provenance` (`host.memory.trust`): the model's `basis` can only lower it, its `reassert` counts
only where the user's words allow it, and its `memory_forget` of a confirmed fact may wait for review.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from host.memory.errors import MemoryStoreError
from host.memory.fold import Fact
from host.memory.query import query_terms
from host.memory.records import TIERS, Evidence
from host.memory.rewrite import Rewriter
from host.memory.section import fact_line
from host.memory.store import MemoryStore
from host.memory.trust import Provenance, may_reassert, note_basis, retraction_waits
from host.memory.values import WriteOutcome
from protocol.errors import NOT_FOUND

__all__ = [
    "MEMORY_TOOLS",
    "MEMORY_TOOL_NAMES",
    "MemoryTool",
    "WORDS_ONLY_NOTE",
    "memory_tool_definitions",
    "run_memory_tool",
]

Handler = Callable[[MemoryStore, dict[str, Any], Evidence, Provenance], Awaitable[str]]
"""`run(store, arguments, evidence, provenance)`: the reply for the model; raises ValueError or a MemoryStoreError."""


@dataclass(frozen=True, slots=True)
class MemoryTool:
    """One memory tool: its name, what the model is told, the JSON Schema of its arguments, its handler."""

    name: str
    description: str
    schema: dict[str, Any]
    run: Handler


_ID = {"type": "string", "pattern": "^m-[0-9a-f]{12}$", "description": "A record id such as m-1a2b3c4d5e6f."}
_DATE = {"type": "string", "description": "ISO 8601 date or date-time, e.g. 2024-03-01."}


_NOTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "One fact, as a full sentence about the user or the work."},
        "key": {
            "type": "string",
            "description": "Optional stable slot for a fact with one current value, "
            "e.g. user.home_city or user.employer.",
        },
        "tier": {
            "type": "string",
            "enum": list(TIERS),
            "description": "profile: lasting facts about the "
            "user; note: everything else (default); log: a dated event.",
        },
        "validFrom": {**_DATE, "description": "When it became true, if known."},
        "validUntil": {**_DATE, "description": "When it stops or stopped being true, if known."},
        "basis": {
            "type": "string",
            "enum": ["user", "tool", "file", "peer"],
            "description": "Where the fact comes from: the user's words (default), a tool result, a file "
            "you read, or another agent. Only the user's words are kept as confirmed.",
        },
        "reassert": {
            "type": "boolean",
            "description": "True only when the user has just explicitly asked you "
            "to remember again a fact that was forgotten.",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}

_RECALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "A few words about what to find."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "At most this many (default 8)."},
        "includeRetracted": {"type": "boolean", "description": "Also show forgotten and replaced records."},
    },
    "required": ["query"],
    "additionalProperties": False,
}

_CORRECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _ID,
        "text": {"type": "string", "description": "The corrected fact, as a full sentence."},
        "validFrom": {
            **_DATE,
            "description": "Give it when the world changed (the old fact held until then); "
            "leave it out when the old record was simply wrong.",
        },
    },
    "required": ["id", "text"],
    "additionalProperties": False,
}

_FORGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": _ID, "reason": {"type": "string", "description": "Why, in a few words."}},
    "required": ["id", "reason"],
    "additionalProperties": False,
}


def _text(arguments: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = arguments.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"`{name}` must be a non-empty string")
    return value


def _evidence(text: str, arguments: dict[str, Any], evidence: Evidence, provenance: Provenance) -> Evidence:
    """The evidence with the basis the host decides: the model's label may lower it, never raise it."""
    claimed = arguments.get("basis")
    if claimed not in (None, "user", "tool", "file", "peer"):
        raise ValueError("`basis` must be user, tool, file or peer")
    basis = note_basis(text, claimed, provenance)
    return Evidence(evidence.source, evidence.seq, evidence.tool_call_id, basis)


def _describe(outcome: WriteOutcome) -> str:
    fact = outcome.fact
    ident = fact.id if fact else "?"
    if outcome.kind == "recorded":
        reply = f"Recorded as {ident}. It is part of your memory from the next turn."
        if outcome.related:
            rivals = "; ".join(fact_line(f) for f in outcome.related)
            reply += (
                f" It conflicts with {rivals} for the same key: both are shown as a conflict until one is "
                "corrected or forgotten (use memory_correct on the one that no longer holds)."
            )
        return reply
    if outcome.kind == "proposed":
        return (
            f"Stored as proposed ({ident}): it did not come from the user, so it waits for a person's review "
            "and is not used as a fact until confirmed."
        )
    if outcome.kind == "duplicate":
        return f"Already recorded as {ident}; nothing changed."
    if outcome.kind == "suppressed":
        gone = outcome.related[0].id if outcome.related else outcome.tombstone_id
        return (
            f"Not stored: this fact was forgotten earlier ({gone}). It comes back only if the user asks for it "
            "in their own words (then call memory_note with reassert true), or a person adds it."
        )
    if outcome.kind == "pending":
        target = outcome.related[0].id if outcome.related else "the fact"
        return (
            f"Not forgotten yet: the request to forget {target} waits for a person's review ({ident}), because "
            "this conversation has taken in content that is not the user's own words and the user did not ask "
            f"for it. {target} stays in your memory until then."
        )
    if outcome.kind == "corrected":
        old = outcome.related[0].id if outcome.related else "the old record"
        return f"Corrected: {ident} replaces {old}. The change is in your memory from the next turn."
    if outcome.kind == "retracted":
        extra = f" (and {len(outcome.related)} copies of it)" if outcome.related else ""
        return f"Forgotten: {ident}{extra}. It is gone from your memory from the next turn."
    if outcome.kind == "unchanged":
        return (
            f"Nothing to do: {ident} already says that."
            if fact and fact.status == "live"
            else (f"Nothing to do: {ident} was already forgotten.")
        )
    return f"Done ({outcome.kind}): {ident}."


def _recall_reply(hits: list[Fact], query: str) -> str:
    if not hits:
        return f"Nothing matched {query!r}."
    lines = [f"{len(hits)} record(s) matched {query!r}, best first:"]
    for number, fact in enumerate(hits, start=1):
        status = "" if fact.status == "live" else f" [{fact.status}]"
        # The id and the source let the model say why it believes a thing (memory.explain gives the rest).
        lines.append(f"{number}. {fact_line(fact)}{status} (from {fact.source}, {fact.observed_at[:10]})")
    return "\n".join(lines)


async def _note(store: MemoryStore, arguments: dict[str, Any], evidence: Evidence, provenance: Provenance) -> str:
    text = _text(arguments, "text") or ""
    outcome = await store.note(
        text,
        evidence=_evidence(text, arguments, evidence, provenance),
        key=_text(arguments, "key", required=False),
        tier=_text(arguments, "tier", required=False) or "note",
        valid_from=_text(arguments, "validFrom", required=False),
        valid_until=_text(arguments, "validUntil", required=False),
        reassert=arguments.get("reassert") is True and may_reassert(text, provenance),
    )
    return _describe(outcome)


WORDS_ONLY_NOTE = "(Searched by words only: the meaning model is still loading; ask again in a moment.)"
"""The last line of a `memory_recall` reply made before the embedding model had loaded."""


async def _recall(store: MemoryStore, arguments: dict[str, Any], evidence: Evidence, provenance: Provenance) -> str:
    return await _recall_rewritten(store, arguments, None)


async def _recall_rewritten(store: MemoryStore, arguments: dict[str, Any], rewriter: Rewriter | None) -> str:
    """memory_recall, its question widened by the words the agent's model gives for it (when there is one)."""
    query = _text(arguments, "query") or ""
    limit = arguments.get("limit", 8)
    if not isinstance(limit, int) or not 1 <= limit <= 50:
        raise ValueError("`limit` must be an integer from 1 to 50")
    # A question without content words finds nothing whatever its rewrite says: no request for it.
    rewrite = await rewriter(query) if rewriter is not None and query_terms(query) else None
    await store.prepare_recall(query)
    retracted = arguments.get("includeRetracted") is True
    terms = rewrite.terms if rewrite is not None else ()
    hits = store.search(query, limit=limit, include_retracted=retracted, rewrite=terms)
    store.note_use([hit.fact.id for hit in hits], "recalled")
    reply = _recall_reply([hit.fact for hit in hits], query)
    if store.meaning == "loading":
        reply += f"\n{WORDS_ONLY_NOTE}"
    return f"{reply}\n{rewrite.footer()}" if rewrite is not None and rewrite.terms else reply


async def _correct(store: MemoryStore, arguments: dict[str, Any], evidence: Evidence, provenance: Provenance) -> str:
    text = _text(arguments, "text") or ""
    outcome = await store.correct(
        _text(arguments, "id") or "",
        text,
        evidence=_evidence(text, {}, evidence, provenance),
        valid_from=_text(arguments, "validFrom", required=False),
    )
    return _describe(outcome)


async def _forget(store: MemoryStore, arguments: dict[str, Any], evidence: Evidence, provenance: Provenance) -> str:
    target = store.fact(_text(arguments, "id") or "")
    waits = retraction_waits(target.trust, target.text, target.id, provenance)
    basis = provenance.untrusted[0] if waits else "user"
    outcome = await store.retract(
        target.id,
        evidence=Evidence(evidence.source, evidence.seq, evidence.tool_call_id, basis),
        reason=_text(arguments, "reason", required=False),
        pending=waits,
    )
    return _describe(outcome)


MEMORY_TOOLS = {
    tool.name: tool
    for tool in (
        MemoryTool(
            "memory_note",
            "Remember one fact for future conversations. Use it when the user tells you something "
            "worth keeping about themselves, their preferences or their work.",
            _NOTE_SCHEMA,
            _note,
        ),
        MemoryTool(
            "memory_recall", "Search your long-term memory for facts that match a few words.", _RECALL_SCHEMA, _recall
        ),
        MemoryTool(
            "memory_correct",
            "Replace a remembered fact (by its id) that was wrong or has changed.",
            _CORRECT_SCHEMA,
            _correct,
        ),
        MemoryTool(
            "memory_forget",
            "Forget a remembered fact (by its id), e.g. when the user asks you to. It will not "
            "come back unless the user states it again.",
            _FORGET_SCHEMA,
            _forget,
        ),
    )
}
"""The memory tools by name, in the order they are offered."""

MEMORY_TOOL_NAMES = tuple(MEMORY_TOOLS)


def memory_tool_definitions() -> list[tuple[str, str, dict[str, Any]]]:
    """The memory tools as (name, description, JSON Schema of the arguments), for the kernel's tool list."""
    return [(tool.name, tool.description, tool.schema) for tool in MEMORY_TOOLS.values()]


async def run_memory_tool(
    store: MemoryStore,
    name: str,
    arguments: dict[str, Any],
    evidence: Evidence,
    *,
    provenance: Provenance,
    rewriter: Rewriter | None = None,
) -> tuple[str, bool]:
    """Run one memory tool call for the model.

    Args:
        store: the calling agent's memory.
        name: the tool name (one of `MEMORY_TOOL_NAMES`).
        arguments: the parsed arguments from the model.
        evidence: the writer (normally `agent`), transcript seq and tool call id; its basis is decided here.
        provenance: what the run has read (the user's words, untrusted sources), as the host recorded it.
        rewriter: asks the agent's model for a recall question's search words (`rewrite.py`); None: never.

    Returns:
        (content for the model, whether it is an error).
    """
    tool = MEMORY_TOOLS.get(name)
    if tool is None:
        return f"Unknown memory tool {name!r}.", True
    try:
        if tool.name == "memory_recall":
            return await _recall_rewritten(store, arguments, rewriter), False
        return await tool.run(store, arguments, evidence, provenance), False
    except ValueError as exc:
        return f"Invalid arguments: {exc}.", True
    except MemoryStoreError as exc:
        hint = " Use memory_recall to find record ids." if exc.code == NOT_FOUND else ""
        return exc.message + hint, True
