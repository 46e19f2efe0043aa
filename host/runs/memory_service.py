"""Memory in a run: the model's memory tools, extraction after a turn and before a compaction, change events.

The host executes the memory tools (`tool.call` from the kernel) against the calling agent's own store,
with the run's transcript seq and tool call id as evidence. After completed turns (the agent's `extraction`
setting: `auto`, `off` or every N turns) the extractor (`extractor.py`) plans memory operations in the
background; before a compaction drops lines it has not covered, it extracts them first. It never races an
explicit write (each store has one writer). Memory off means none of this: no tools, no prompt section, no
extraction.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from host.errors import NotFoundError
from host.memory import (
    MEMORY_TOOL_NAMES,
    Evidence,
    ExchangeItem,
    MemoryHub,
    MemoryStore,
    memory_tool_definitions,
    run_memory_tool,
)
from host.memory.embedder import default_embedder
from host.memory.model_summaries import Ask
from host.memory.rewrite import (
    REWRITE_OUTPUT_TOKENS,
    REWRITE_SECONDS,
    Rewrite,
    RewriteCache,
    Rewriter,
    rewrite_enabled,
    rewrite_prompt,
    rewrite_terms,
)
from host.runs.extractor import CoverOutcome, Extractor, exchange_since
from host.runs.scheduler import Run, RunManager
from host.runs.turns import Summarize, TurnPlanner, offers_tools
from host.store.agents import Agent, AgentStore
from protocol.errors import JsonRpcError
from protocol.models.agents import ModelSettings
from protocol.models.kernel import ChatMessage, SummarizeParams, ToolCallParams, ToolCallResult, ToolSpec
from protocol.models.memory import MemoryEvidenceLine

__all__ = ["MemoryService", "run_exchange", "run_lines", "exchange_since", "may_rewrite", "may_summarise"]

Notify = Callable[[str, BaseModel], Awaitable[None]]


async def _ignore(method: str, params: BaseModel) -> None:
    return None


logger = logging.getLogger(__name__)

SUMMARY_OUTPUT_TOKENS = 120
"""The most tokens a summary of old log entries may take (its line holds 200 bytes)."""
SUMMARY_SECONDS = 120.0
"""How long a background summary call may take before the round goes on without it."""


def run_exchange(events: list[dict[str, Any]], run_id: str) -> list[ExchangeItem]:
    """The lines of one run for the extractor: the message that started it, the replies and tool results."""
    items: list[ExchangeItem] = []
    started = False
    for event in events:
        kind = event.get("type")
        if kind in ("user", "wake") and not started:
            items = [_item(event)]
        elif event.get("runId") == run_id:
            started = True
            if kind == "assistant" and event.get("text"):
                items.append(ExchangeItem(event["seq"], "assistant", event["text"]))
            elif kind == "tool":
                items.append(ExchangeItem(event["seq"], "tool", event["content"], event["name"]))
    return items if started else []


def run_lines(newest_first: Iterable[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    """What `run_exchange` needs of a run, oldest first: read back to the message before the run's first line.

    A run's first line is its `context` event (written as its turn is prepared), so the message that started
    it is the first user or wake message before that; nothing older is read.
    """
    events: list[dict[str, Any]] = []
    started = False
    for event in newest_first:
        events.append(event)
        if event.get("runId") == run_id and event.get("type") == "context":
            started = True
        elif started and event.get("type") in ("user", "wake"):
            break
    events.reverse()
    return events


def may_rewrite(model: ModelSettings, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a recall question is rewritten by this model: not by the embedded one (too small, and its one
    generation lock would hold up the person's next turn), and by none with `HEARTH_RECALL_REWRITE=off`."""
    return rewrite_enabled(environ) and offers_tools(model)


def may_summarise(model: ModelSettings) -> bool:
    """Whether this model writes summaries of old log entries: a remote one, not the embedded model (too small,
    and its one generation lock would hold up the person's next turn) nor a scripted one (it answers by rule)."""
    return model.provider not in ("local", "scripted")


def _item(event: dict[str, Any]) -> ExchangeItem:
    if event["type"] == "wake":
        return ExchangeItem(event["seq"], "peer", event["text"], event["fromAgent"])
    return ExchangeItem(event["seq"], "user", event["text"])


class MemoryService:
    """Connects the memory hub to runs.

    Args:
        hub: the host's memories.
        store: the agent store.
        runs: the run manager (whose runs call memory tools).
        planner: gives each extraction call its model.
        summarize: the kernel's `summarize`.
        notify: sends a notification to the shells (`memory.extracted` with the call's usage).
    """

    def __init__(
        self,
        hub: MemoryHub,
        store: AgentStore,
        runs: RunManager,
        planner: TurnPlanner,
        summarize: Summarize,
        notify: Notify | None = None,
    ) -> None:
        self.hub = hub
        self._store = store
        self._runs = runs
        self._planner = planner
        self._summarize = summarize
        self.extractor = Extractor(hub, store, planner, summarize, notify or _ignore)
        self._rewrites = RewriteCache()
        self.definitions = [
            ToolSpec(name=name, description=description, input_schema=schema)
            for name, description, schema in memory_tool_definitions()
        ]

    async def serve(self) -> None:
        """Own the background extractions until cancelled; first load the embedding model off the loop (the
        first memory to open would otherwise load it there, ~0.5 s)."""
        async with asyncio.TaskGroup() as tasks:
            self.extractor.tasks = tasks
            await asyncio.to_thread(default_embedder)
            await asyncio.Event().wait()

    def source(self, agent: Agent) -> MemoryStore | None:
        """The agent's memory for its prompt, or None when memory is off."""
        return self.hub.get(agent.agent_id) if agent.settings.memory else None

    def tools(self, agent: Agent) -> list[ToolSpec]:
        """The memory tools for the agent's runs: none with memory off or for a model offered no tools."""
        return list(self.definitions) if agent.settings.memory and offers_tools(agent.settings.model) else []

    async def call_tool(self, params: ToolCallParams, *, source: str = "agent") -> ToolCallResult:
        """The kernel's `tool.call` for a memory tool; `source` is `peer:<id>` in a run a peer's wake started.

        Raises:
            NotFoundError: the run is not running, or the tool is not one this run was given.
        """
        run = self._runs.running(params.run_id)
        if run is None:
            raise NotFoundError(f"run {params.run_id} is not running")
        agent = self._store.get(run.agent_id)
        if params.name not in MEMORY_TOOL_NAMES or not agent.settings.memory:
            raise NotFoundError(f"there is no host tool named {params.name!r} in this run")
        transcript = self._store.transcript(agent.agent_id)
        evidence = Evidence(source, transcript.last_seq, params.tool_call_id)
        # Brought up to date for every call: a tool result that arrived since the last memory call counts.
        provenance = self._planner.contexts.of(agent.agent_id).provenance.provenance(transcript)
        content, is_error = await run_memory_tool(
            self.hub.get(agent.agent_id),
            params.name,
            params.arguments,
            evidence,
            provenance=provenance,
            rewriter=self._rewriter(agent),
        )
        return ToolCallResult(content=content, is_error=is_error)

    def _rewriter(self, agent: Agent) -> Rewriter | None:
        """Asks the agent's model for a recall question's search words: once per question and model (cached),
        never the embedded model, and not at all with `HEARTH_RECALL_REWRITE=off`. A failed request is no
        rewrite: the search goes on with the question alone."""
        if not may_rewrite(agent.settings.model):
            return None

        async def rewrite(question: str) -> Rewrite | None:
            try:
                spec = self._planner.resolve_model(agent)
                model = f"{spec.provider}/{spec.name}/{spec.base_url}"
                found = self._rewrites.get(model, question)
                if found is not None:
                    return found
                request = [ChatMessage(role="user", content=rewrite_prompt(question))]
                params = SummarizeParams(messages=request, model=spec, max_output_tokens=REWRITE_OUTPUT_TOKENS)
                async with asyncio.timeout(REWRITE_SECONDS):
                    result = await self._summarize(params)
            except (JsonRpcError, TimeoutError) as exc:
                logger.warning("recall rewrite for %s skipped: %s", agent.agent_id, str(exc) or "it took too long")
                return None
            usage = result.usage
            made = Rewrite(rewrite_terms(result.text, question), usage.input_tokens, usage.output_tokens)
            self._rewrites.put(model, question, made)
            logger.info(
                "recall rewrite for %s: %d words; %d input tokens, %d output tokens",
                agent.agent_id,
                len(made.terms),
                usage.input_tokens,
                usage.output_tokens,
            )
            return made

        return rewrite

    def summary_model(self, agent_id: str, spend: Callable[[int], None]) -> Ask | None:
        """How the background round asks the agent's model for a summary (its tokens go to `spend`), or None when
        its memory is off or its model may not write one. A failed call is no summary: the deterministic one stays."""
        if not self._store.exists(agent_id):
            return None
        agent = self._store.get(agent_id)
        if not agent.settings.memory or not may_summarise(agent.settings.model):
            return None

        async def ask(prompt: str) -> tuple[str, str] | None:
            try:
                spec = self._planner.resolve_model(agent)
                request = [ChatMessage(role="user", content=prompt)]
                params = SummarizeParams(messages=request, model=spec, max_output_tokens=SUMMARY_OUTPUT_TOKENS)
                async with asyncio.timeout(SUMMARY_SECONDS):
                    result = await self._summarize(params)
            except (JsonRpcError, TimeoutError) as exc:
                logger.warning("memory summary for %s skipped: %s", agent_id, str(exc) or "it took too long")
                return None
            spend(result.usage.input_tokens + result.usage.output_tokens)
            return result.text, f"{spec.provider}/{spec.name}"

        return ask

    def evidence_line(self, agent_id: str, seq: int, *, max_chars: int = 2000) -> MemoryEvidenceLine | None:
        """The transcript line at `seq`, quoted (bounded) with who said it, or None when there is none."""
        if not self._store.exists(agent_id):
            return None
        events, _ = self._store.transcript(agent_id).page(before_seq=seq + 1, limit=1)
        event = events[0] if events and events[0].get("seq") == seq else None
        if event is None or event.get("type") not in ("user", "wake", "assistant", "tool"):
            return None
        item = _item(event) if event["type"] in ("user", "wake") else None
        if item is None:
            role = "assistant" if event["type"] == "assistant" else "tool"
            text = event.get("text", "") if role == "assistant" else event.get("content", "")
            item = ExchangeItem(seq, role, text, event.get("name"))
        text = item.text[:max_chars]
        return MemoryEvidenceLine(
            seq=seq, type=event["type"], speaker=item.source, text=text, truncated=len(item.text) > max_chars
        )

    async def after_run(self, run: Run) -> None:
        """Start extraction for a completed run when the agent's setting and the turn call for it (never waits).

        One extraction per agent is pending at a time; turns that end meanwhile are covered by the next one,
        which reads every line since the last extraction.
        """
        if run.reason != "idle" or not self._store.exists(run.agent_id):
            return
        agent = self._store.get(run.agent_id)
        # The embedded model is too small to follow the extraction instructions, and its one generation
        # lock would make the person's next turn wait behind the extraction.
        if not self.extractor.enabled(agent):
            return
        lines = run_lines(self._store.transcript(agent.agent_id).context_backwards(), run.run_id)
        exchange = run_exchange(lines, run.run_id)
        if exchange:
            await self.extractor.ran(agent, exchange[0].seq)

    async def cover(self, agent: Agent, through_seq: int, first_seq: int) -> CoverOutcome | None:
        """Before a compaction: the lines through `through_seq` extracted (see `Extractor.cover`)."""
        return await self.extractor.cover(agent, through_seq, first_seq)
