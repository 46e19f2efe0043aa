"""Background extraction per agent: the lines it has covered, one extraction at a time, and a compaction's cover.

Each agent's mark (the last transcript seq an extraction has read, kept by the host while it runs) moves only
once the `summarize` call for those lines has been applied, so a failed extraction leaves its lines to the
next one. Lines are read by seq from the whole transcript, not since the last compaction, so what a compaction
summarised is still extracted later. One extraction per agent runs at a time; turns that end meanwhile are
covered by the next. `cover` is what a compaction asks first: every line it will summarise extracted, waited
for up to `cover_wait` seconds (the extraction goes on in the background after that). `COVER_SWITCH` takes
either half away, only so that a check can measure what each keeps (`scripts/bench_long_conversation.py`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from host.memory import Evidence, ExchangeItem, MemoryHub, apply_extraction, extraction_prompt, parse_extraction
from host.memory.extraction import worth_extracting
from host.runs.turns import Summarize, TurnPlanner, offers_tools
from host.store.agents import Agent, AgentStore
from protocol.errors import JsonRpcError
from protocol.models.kernel import ChatMessage, SummarizeParams
from protocol.models.memory import MemoryExtractedEvent

__all__ = [
    "Extractor",
    "CoverOutcome",
    "CoverMode",
    "COVER_SWITCH",
    "COVER_WAIT",
    "CHUNK_CHARS",
    "cover_mode",
    "exchange_since",
    "chunked",
]

logger = logging.getLogger(__name__)

Notify = Callable[[str, BaseModel], Awaitable[None]]
CoverOutcome = Literal["covered", "unfinished"]
CoverMode = Literal["on", "late", "off"]

COVER_WAIT = 60.0
"""Seconds a compaction waits for the extraction of the lines it will summarise before it goes on without it."""
CHUNK_CHARS = 24_000
"""The most characters of exchange one extraction call carries; more lines are extracted in further calls."""
COVER_SWITCH = "HEARTH_COMPACTION_COVER"
"""Environment variable: `late` extracts nothing before a compaction (a dropped line waits for the next
extraction); `off` also reads only the context since the last compaction, as the host did before. Unset: `on`."""


def cover_mode(environ: Mapping[str, str] = os.environ) -> CoverMode:
    """What `COVER_SWITCH` asks for: `late`, `off` (or 0, false, no, as other switches read), else `on`."""
    value = environ.get(COVER_SWITCH, "on").strip().lower()
    return "late" if value == "late" else "off" if value in ("off", "0", "false", "no") else "on"


def exchange_since(events: Sequence[dict[str, Any]], since_seq: int) -> list[ExchangeItem]:
    """Every line the extractor sees after transcript seq `since_seq`: messages, replies and tool results."""
    items: list[ExchangeItem] = []
    for event in events:
        kind = event.get("type")
        if event.get("seq", 0) <= since_seq:
            continue
        if kind == "user":
            items.append(ExchangeItem(event["seq"], "user", event["text"]))
        elif kind == "wake":
            items.append(ExchangeItem(event["seq"], "peer", event["text"], event["fromAgent"]))
        elif kind == "assistant" and event.get("text"):
            items.append(ExchangeItem(event["seq"], "assistant", event["text"]))
        elif kind == "tool":
            items.append(ExchangeItem(event["seq"], "tool", event["content"], event["name"]))
    return items


def chunked(exchange: Sequence[ExchangeItem], max_chars: int = CHUNK_CHARS) -> list[list[ExchangeItem]]:
    """The exchange in consecutive pieces of at most `max_chars` characters each (a longer line is a piece alone)."""
    pieces: list[list[ExchangeItem]] = []
    size = 0
    for item in exchange:
        length = min(len(item.text), 2000) + 40  # the prompt cuts a line at 2000 characters
        if not pieces or size + length > max_chars:
            pieces.append([])
            size = 0
        pieces[-1].append(item)
        size += length
    return pieces


class Extractor:
    """Extraction for every agent.

    Args:
        hub: the host's memories.
        store: the agent store.
        planner: gives an extraction the turn's own prefix.
        summarize: the kernel's `summarize`.
        notify: sends `memory.extracted` to the shells.
    """

    def __init__(self, hub: MemoryHub, store: AgentStore, planner: TurnPlanner, summarize: Summarize, notify: Notify):
        self._hub = hub
        self._store = store
        self._planner = planner
        self._summarize = summarize
        self._notify = notify
        self.tasks: asyncio.TaskGroup | None = None
        self.cover_wait = COVER_WAIT
        self.cover_mode = cover_mode()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # agents whose turns ended during their extraction: one more follows
        self._turns: dict[str, int] = {}  # completed turns since the last extraction began
        self._marks: dict[str, int] = {}
        # Where a run started an agent's mark (lines before it were never read here: they came before a restart),
        # until the first compaction; and where the next extraction starts instead of the mark, when that
        # compaction drops such lines.
        self._started_at: dict[str, int] = {}
        self._reread: dict[str, int] = {}

    @staticmethod
    def enabled(agent: Agent) -> bool:
        """Memory on, extraction not off, and a model able to follow the instructions (never the embedded one)."""
        settings = agent.settings
        return settings.memory and settings.extraction != "off" and offers_tools(settings.model)

    def mark(self, agent_id: str) -> int | None:
        """The last transcript seq the agent's extractions covered, or None when none ran since the host started."""
        return self._marks.get(agent_id)

    def _set_mark(self, agent_id: str, seq: int) -> None:
        """Lines through `seq` are extracted: the mark moves on, never back (a re-read covers older lines)."""
        self._marks[agent_id] = max(seq, self._marks.get(agent_id, seq))

    def _covered(self, agent_id: str, through_seq: int) -> bool:
        return agent_id not in self._reread and (self.mark(agent_id) or 0) >= through_seq

    async def ran(self, agent: Agent, first_seq: int) -> None:
        """A completed run of `agent` whose first line is `first_seq`: extract when the setting calls for it."""
        agent_id = agent.agent_id
        if self.mark(agent_id) is None:
            self._set_mark(agent_id, first_seq - 1)  # lines before the first run seen wait for a compaction
            self._started_at[agent_id] = first_seq
        self._turns[agent_id] = self._turns.get(agent_id, 0) + 1
        mode = agent.settings.extraction
        if isinstance(mode, int) and self._turns[agent_id] < mode:
            return
        self._start(agent_id)

    def _start(self, agent_id: str, *, upto: int | None = None) -> asyncio.Task[None] | None:
        """Start the agent's extraction (through `upto`, for a compaction), or note one more after the running one."""
        running = self._running.get(agent_id)
        if running is not None:
            self._again.add(agent_id)
            return running
        if self.tasks is None:
            return None
        task = self.tasks.create_task(self._until_caught_up(agent_id, upto))
        self._running[agent_id] = task
        return task

    async def _until_caught_up(self, agent_id: str, upto: int | None) -> None:
        try:
            while True:
                self._again.discard(agent_id)
                self._turns[agent_id] = 0
                await self._extract(agent_id, upto)
                if agent_id not in self._again:
                    return
                upto = None  # turns ended meanwhile: the next one reads up to the end, after their prefix
        finally:
            self._running.pop(agent_id, None)

    async def cover(self, agent: Agent, through_seq: int, first_seq: int) -> CoverOutcome | None:
        """Make sure every line up to `through_seq` has been extracted, before a compaction summarises them.

        Args:
            agent: the agent whose history is compacted.
            through_seq: the last seq the compaction covers.
            first_seq: its first line (the mark when the agent has none yet).

        Returns:
            None when extraction does not run for the agent; `covered` when every line is extracted;
            `unfinished` when the wait ran out or an extraction failed (what is left is extracted later).
        """
        if not self.enabled(agent) or self.cover_mode != "on":
            return None
        agent_id = agent.agent_id
        if self.mark(agent_id) is None:
            self._set_mark(agent_id, self._unfinished_from(agent_id, first_seq) - 1)
        elif agent_id in self._started_at:
            start = self._unfinished_from(agent_id, first_seq)
            if self._started_at.pop(agent_id) > start:
                # It drops lines from before the run that started the mark, which no extraction here has read:
                # the next one starts again there (what was read since is read twice; a duplicate writes nothing).
                self._reread[agent_id] = start - 1
        try:
            async with asyncio.timeout(self.cover_wait):
                for _ in range(2):  # the extraction under way, then one for what it did not reach
                    if self._covered(agent_id, through_seq):
                        return "covered"
                    task = self._start(agent_id, upto=through_seq)
                    if task is None:
                        await self._extract(agent_id, through_seq)
                    else:
                        await asyncio.shield(task)
        except TimeoutError:
            logger.warning(
                "compaction for %s went on before extraction covered seq %d (waited %.0f s); it goes on meanwhile",
                agent_id,
                through_seq,
                self.cover_wait,
            )
            return "unfinished"
        if self._covered(agent_id, through_seq):
            return "covered"
        logger.warning("compaction for %s went on before extraction covered seq %d", agent_id, through_seq)
        return "unfinished"

    def _unfinished_from(self, agent_id: str, first_seq: int) -> int:
        """Where a compaction from `first_seq` starts extracting when this host has read nothing before it: at
        the first line of the earliest of the compactions just before it that went on before their extraction
        finished (the host that ran that extraction may have stopped since), else at `first_seq`."""
        start = first_seq
        for event in self._store.transcript(agent_id).read_backwards():
            if event.get("type") != "compact":
                continue
            if event.get("extraction") != "unfinished" or event.get("fromSeq") is None:
                break
            start = min(start, int(event["fromSeq"]))
        return start

    def _lines_after(self, agent_id: str, since: int) -> list[dict[str, Any]]:
        if self.cover_mode == "off":
            return self._store.transcript(agent_id).context_after(since)  # what a compaction dropped is gone
        newer = itertools.takewhile(
            lambda event: int(event["seq"]) > since, self._store.transcript(agent_id).read_backwards()
        )
        return list(reversed(list(newer)))

    async def _extract(self, agent_id: str, upto: int | None) -> None:
        """Extract every line after the mark (through `upto` when given: a compaction's cover, sent alone)."""
        try:
            if not self._store.exists(agent_id):
                return
            agent = self._store.get(agent_id)
            mark = self.mark(agent_id) or 0
            reread = self._reread.get(agent_id)
            since = mark if reread is None else min(mark, reread)
            events = [e for e in self._lines_after(agent_id, since) if upto is None or int(e["seq"]) <= upto]
            pieces = chunked(exchange_since(events, since))
            for number, piece in enumerate(pieces, 1):
                await self._extract_piece(agent, piece, standalone=upto is not None)
                if number < len(pieces):  # progress kept, should a later piece fail
                    self._set_mark(agent_id, piece[-1].seq)
            if events:
                self._set_mark(agent_id, int(events[-1]["seq"]))
            if reread is not None and self._reread.get(agent_id) == reread:
                del self._reread[agent_id]  # read again: nothing before the mark's start is left unread
        except JsonRpcError as exc:
            logger.warning("memory extraction for %s skipped: %s", agent_id, exc.message)
        except Exception:  # a background task's top level: a failed extraction must not stop the host
            logger.exception("memory extraction for %s failed", agent_id)

    async def _extract_piece(self, agent: Agent, exchange: list[ExchangeItem], *, standalone: bool) -> None:
        user = " ".join(item.text for item in exchange if item.role in ("user", "peer"))
        reply = " ".join(item.text for item in exchange if item.role == "assistant")
        if not worth_extracting(user, reply):
            return
        store = self._hub.get(agent.agent_id)
        # What stands now, bounded: the newest current facts and every side of their conflicts.
        standing, _ = store.recent_standing(50)
        facts = [*standing.current, *(fact for conflict in standing.conflicts for fact in conflict.facts)]
        instruction = ChatMessage(role="user", content=extraction_prompt(exchange, facts))
        if standalone:
            # Before a compaction the context is near the window: the instruction goes alone, not after it.
            params = SummarizeParams(messages=[instruction], model=self._planner.resolve_model(agent))
        else:
            # The turn's own prefix with the instruction last: the provider's cache serves everything before it.
            params = self._planner.replay(agent, instruction)
        result = await self._summarize(params)
        outcomes = await apply_extraction(
            store, parse_extraction(result.text), Evidence("extractor", exchange[0].seq), exchange=exchange
        )
        usage = result.usage
        share = usage.cached_input_tokens / usage.input_tokens if usage.input_tokens else 0.0
        logger.info(
            "memory extraction for %s: %d operation(s) applied; %d input tokens, %.0f%% served from cache",
            agent.agent_id,
            len(outcomes),
            usage.input_tokens,
            share * 100,
        )
        event = MemoryExtractedEvent(
            agent_id=agent.agent_id,
            through_seq=exchange[-1].seq,
            operations=len(outcomes),
            usage=usage,
            cached_share=round(share, 4),
        )
        await self._notify("memory.extracted", event)
