"""`MemoryStore`: one agent's memory, the single writer of its ledger and everything derived from it.

Every write is planned against the projection (gate, duplicate, tombstone, trust), appended to the ledger
with fsync (from then on it is acknowledged), folded into the index, and followed by a fresh MEMORY.md.
Writes hold an asyncio lock; the fsyncs run in a worker thread while the loop serves others, and readers
see the index as it was until the append has returned and the fold (on the loop, in one stretch) is done.
A write runs to its end once begun: a cancellation meanwhile is raised after it, and `close` waits for it.
Change notices go to the host's callback after the lock is released.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from host.memory.checkpoint import catch_up
from host.memory.disk import DiskWork, run_inline
from host.memory.erasure import Copies
from host.memory.errors import InvalidMemoryRequestError, RecordNotFoundError
from host.memory.gate import ensure_not_sensitive, find_sensitive
from host.memory.index import MemoryIndex
from host.memory.ledger import Ledger
from host.memory.lifetimes import Lifetimes, due_endings
from host.memory.model_summaries import MODEL_ENTRIES, SummaryRequest
from host.memory.reads import MemoryReads
from host.memory.records import Evidence, format_instant
from host.memory.staleness import contradictions, likely_duplicates, stale_facts
from host.memory.summaries import Summary, cut_date
from host.memory.trust import valid_source
from host.memory.uses import Use
from host.memory.values import (
    Clock,
    EventSink,
    MemoryEvent,
    NoteItem,
    WriteOutcome,
    check_item,
    clean_text,
    parse_instant,
)
from host.memory.view_sync import ViewSync
from host.memory.writes import MERGE_EVERY, MemoryWrites
from host.prompt.cache import bump_epoch

__all__ = ["MemoryStore", "MERGE_EVERY"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONSOLIDATE = Evidence("tool:consolidate")
"""Who proposes the consolidation pass's requests to forget (a proposal, never a confirmed act)."""


class MemoryStore(MemoryWrites):
    """The memory of the agent in `agent_dir` (files under `agent_dir/memory/`)."""

    def __init__(
        self,
        agent_dir: Path,
        *,
        agent_id: str | None = None,
        on_event: EventSink | None = None,
        clock: Clock | None = None,
        scope: str = "private",
        places: Callable[[], list[Path]] | None = None,
        copies: Copies | None = None,
        lifetimes: Callable[[], Lifetimes] | None = None,
    ) -> None:
        """Open the memory, bring the index up to the ledger, and import MEMORY.md edits made while closed.

        `places` lists the directories whose transcript and prompt cache this memory feeds (by default the
        agent's own); `copies` scrubs the agent's messages kept elsewhere when an erase asks for it;
        `lifetimes` gives the days each tier's facts stand without an end of their own, as set now.

        Raises:
            MemoryLockedError: another process has this memory open.
        """
        self.agent_dir = agent_dir
        self.agent_id = agent_id or agent_dir.name
        self.memory_dir = agent_dir / "memory"
        self.view_path = self.memory_dir / "MEMORY.md"
        self.scope = scope
        self._clock = clock or (lambda: datetime.now(UTC))
        self._on_event = on_event
        self._lock = asyncio.Lock()
        self._disk = DiskWork()
        self._close_after_write = False
        self._events: list[MemoryEvent] = []
        self._pending_uses: list[tuple[tuple[str, ...], str, str]] = []
        self._fed = places
        self._copies = copies
        self._lifetimes: Callable[[], Lifetimes] = lifetimes or dict
        ledger = Ledger(self.memory_dir / "ledger.jsonl")
        try:
            index = MemoryIndex(self.memory_dir / "index.sqlite")
            MemoryReads.__init__(self, ledger, index)
            self._view = ViewSync(
                self.view_path, self._index, self.agent_id, self, self._apply_view_edits, self._told, self._disk
            )
            if catch_up(self._ledger, self._index):
                run_inline(self._finish_erasures())
            run_inline(self._refresh_view())  # nothing else runs on this memory before it is open
        except BaseException:
            ledger.close()  # a memory that failed to open must not stay locked against the next attempt
            raise
        self._disk.inline = False
        # Nobody is listening yet (a shell lists memory when it connects); a view kept aside is still told.
        self._events = [event for event in self._events if event.kind == "set_aside"]

    def _writing(self) -> bool:
        return self._lock.locked()

    def close(self) -> None:
        """Release the memory (its ledger lock and index); a write under way releases it when it ends."""
        self.flush_uses()
        if self._lock.locked():
            self._close_after_write = True
            return
        super().close()

    async def _write(self, body: Callable[[], Awaitable[T]]) -> T:
        """Run `body` under the lock to its end, then send its notices; a cancellation meanwhile is raised after."""
        async with self._lock:
            try:
                result = await body()
            except Exception as exc:
                if self._disk.cancelled:
                    raise asyncio.CancelledError from exc  # its caller is gone: it hears of the cancellation
                raise
            finally:
                cancelled, self._disk.cancelled = self._disk.cancelled, False
                if self._close_after_write:
                    super().close()
        await self._flush_events()
        if cancelled:
            raise asyncio.CancelledError
        return result

    def _places(self) -> list[Path]:
        return self._fed() if self._fed is not None else [self.agent_dir]

    async def _refresh_view(self) -> None:
        try:
            await self._view.sync()
        except OSError as exc:
            # The records are durable already: a view that cannot be written now is written at the next change.
            logger.warning("memory %s: MEMORY.md could not be written: %s", self.agent_id, exc)

    def _told(self, kept_as: str, problem: str) -> None:
        self._events.append(
            MemoryEvent("set_aside", self.agent_id, "view", (), False, kept_as=kept_as, problem=problem)
        )

    async def _flush_events(self) -> None:
        events, self._events = self._events, []
        if self._on_event is None:
            return
        for event in events:
            try:
                result = self._on_event(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a failing listener must not undo or fail a write that is already durable
                logger.exception("memory %s: the change listener failed", self.agent_id)

    # ---- writes

    async def note(
        self,
        text: str,
        *,
        evidence: Evidence,
        key: str | None = None,
        tier: str = "note",
        valid_from: str | None = None,
        valid_until: str | None = None,
        confidence: float | None = None,
        reassert: bool = False,
    ) -> WriteOutcome:
        """Assert one fact. A duplicate writes nothing; a tombstoned fact from a suppressible source is suppressed.

        Args:
            text: the fact, one statement.
            evidence: who writes and where the content came from (decides trust).
            key: a stable slot such as `user.home_city`, for facts with one current value.
            tier: profile, note or log.
            valid_from: when it became true in the world (ISO 8601).
            valid_until: when it stopped being true.
            confidence: the writer's confidence, 0..1, kept for people to see.
            reassert: the agent relays the user's explicit request to remember a forgotten fact.

        Raises:
            SensitiveContentError: the text holds a secret (nothing is stored).
            InvalidMemoryRequestError: empty text, unknown tier, malformed key or dates.
        """
        item = NoteItem(text, key, tier, valid_from, valid_until, confidence)
        return (await self.note_many([item], evidence=evidence, reassert=reassert))[0]

    async def note_many(
        self, items: Sequence[NoteItem], *, evidence: Evidence, reassert: bool = False
    ) -> list[WriteOutcome]:
        """Assert several facts with one append and one fsync; every item is checked before anything is written.

        Raises:
            SensitiveContentError: an item holds a secret (nothing is stored).
            InvalidMemoryRequestError: an item is malformed, or the source is unknown.
        """
        if not valid_source(evidence.source):
            raise InvalidMemoryRequestError(f"unknown source {evidence.source!r}")
        checked = [check_item(item) for item in items]
        return await self._write(lambda: self._note_locked(checked, evidence, reassert))

    async def correct(
        self,
        record_id: str,
        text: str,
        *,
        evidence: Evidence,
        valid_from: str | None = None,
        key: str | None = None,
    ) -> WriteOutcome:
        """Replace a fact by a new record. Without `valid_from` the old one was wrong (superseded); with it,
        the old one held until `valid_from` and the new one holds from then on.

        Raises:
            RecordNotFoundError: no such record (or erased).
            MemoryStateError: the record was retracted, replaced or rejected.
            SensitiveContentError, InvalidMemoryRequestError: as for `note`.
        """
        if not valid_source(evidence.source):
            raise InvalidMemoryRequestError(f"unknown source {evidence.source!r}")
        cleaned = clean_text(text)
        ensure_not_sensitive(cleaned, key)
        since = parse_instant(valid_from, "validFrom")
        return await self._write(
            lambda: self._correct_locked(record_id, cleaned, evidence, since, key, keep_key=key is None)
        )

    async def retract(
        self, record_id: str, *, evidence: Evidence, reason: str | None = None, pending: bool = False
    ) -> WriteOutcome:
        """Forget a fact: it leaves every view and the next prompt, and a tombstone keeps it from coming back.

        Live records with the same content are retracted with it, so the fact is gone, not one copy of it.
        With `pending` the retraction is only requested (kind `pending`): the fact stands until a person
        confirms the request in review; asking again while one waits writes nothing.

        Raises:
            RecordNotFoundError: no such record (or erased).
            SensitiveContentError: the reason holds a secret.
        """
        if not valid_source(evidence.source):
            raise InvalidMemoryRequestError(f"unknown source {evidence.source!r}")
        reason = clean_text(reason, "reason") if reason is not None else None
        ensure_not_sensitive(reason)
        return await self._write(lambda: self._retract_locked(record_id, evidence, reason, pending))

    async def review(
        self,
        record_id: str,
        decision: str,
        *,
        text: str | None = None,
        key: str | None = None,
        reason: str | None = None,
    ) -> WriteOutcome:
        """A person's review of a proposed fact: confirm it, reject it (a tombstone), or edit and confirm it.

        Raises:
            RecordNotFoundError: no such record.
            MemoryStateError: the record is not waiting for review.
            InvalidMemoryRequestError: unknown decision, or `edit` without text.
            SensitiveContentError: the edited text or the reason holds a secret.
        """
        if decision not in ("confirm", "reject", "edit"):
            raise InvalidMemoryRequestError("decision must be confirm, reject or edit")
        if decision == "edit" and text is None:
            raise InvalidMemoryRequestError("an edit needs the new text")
        cleaned = clean_text(text) if text is not None else None
        reason = clean_text(reason, "reason") if reason is not None else None
        ensure_not_sensitive(cleaned, key, reason)
        return await self._write(lambda: self._review_locked(record_id, decision, cleaned, key, reason))

    async def erase(
        self,
        record_id: str,
        *,
        reason: str | None = None,
        evidence: Evidence | None = None,
        scrub_conversation: bool = False,
    ) -> WriteOutcome:
        """Remove a fact's text physically: ledger, index (and its free pages), MEMORY.md, the frozen prompt,
        and every reply of the memory tools that showed it in a transcript this memory feeds.

        Every record with the same content goes with it, and the content of records about it (retractions,
        rejections, suppressions). The chain still verifies through the commitments, and the erase record
        says who erased what and when. Erase is a person's act; it is never offered to a model. With
        `scrub_conversation` the conversation's own messages that hold the text are scrubbed too (marked
        `[erased]`); without it they are left and counted (`outcome.erasure`). The disk work runs off the
        event loop.

        Raises:
            RecordNotFoundError: no such record.
            SensitiveContentError: the reason holds a secret.
        """
        reason = clean_text(reason, "reason") if reason is not None else None
        ensure_not_sensitive(reason)

        async def erase_locked() -> WriteOutcome:
            target = self._index.fact(record_id)
            if target is None:
                raise RecordNotFoundError(f"no memory record {record_id}")
            if target.status == "erased":
                return WriteOutcome("unchanged", fact=target)
            return await self._erase_locked(target, reason, evidence or Evidence("human"), scrub_conversation)

        return await self._write(erase_locked)

    async def prepare_recall(self, query: str) -> None:
        """Ready a turn: record the lifetimes that have ended (a new epoch when one did), then the query's vector."""
        await self.expire_due()
        await super().prepare_recall(query)

    async def expire_due(self) -> list[str]:
        """Record each fact whose lifetime ended since the last check, one `expire` record each: its own
        `validUntil`, or, without one, its tier's lifetime (`lifetimes`, the agent's `ttl` setting).

        A fact with its own end has already left every view of now; one ended by its tier's lifetime leaves
        them with its record, which carries the end. The record says so in the audit and moves the epoch
        mark, so the next turn's frozen section no longer carries it. Nothing is retracted and nobody is
        asked (the person set the rule): `asOf` a time before the end still finds the fact.

        Returns:
            The ids of the facts recorded as expired.
        """
        if not due_endings(self._index, self._clock(), self._lifetimes()):
            return []

        async def expire_locked() -> list[str]:
            due = due_endings(self._index, self._clock(), self._lifetimes())
            drafts = [
                self._draft("expire", Evidence(e.fact.source), target=e.fact.id, valid_until=e.end, reason=e.reason)
                for e in due
            ]
            await self._commit(drafts)
            return [e.fact.id for e in due]

        return await self._write(expire_locked)

    def note_use(self, ids: Sequence[str], kind: str) -> None:
        """Count one use (`recalled` or `shown`) of each fact, stamped now and written by `flush_uses`.

        A turn only notes them in memory: the index write waits for a read of the counts, the background
        round or the close, so neither a turn nor a prompt build pays for one.
        """
        if ids:
            self._pending_uses.append((tuple(ids), kind, self._now()))

    def flush_uses(self) -> None:
        """Write the noted uses to the index in one transaction (not while a write is under way: an erase
        may be copying the index; they are written the next time, as they are when the disk has no room)."""
        if not self._pending_uses or self._writing():
            return
        pending, self._pending_uses = self._pending_uses, []
        try:
            with self._index.transaction():
                for rids, what, at in pending:
                    self._index.uses.count(rids, what, at)
        except sqlite3.OperationalError as exc:  # a full disk: derived counts, kept for the next flush
            self._pending_uses[:0] = pending
            logger.warning("memory %s: use counts not written (%s); kept for the next time", self.agent_id, exc)

    def uses(self, ids: Sequence[str]) -> dict[str, Use]:
        """How often each of `ids` was recalled or shown and when last (facts never used are left out)."""
        self.flush_uses()
        return self._index.uses.of(ids)

    async def propose_upkeep(self, max_proposals: int) -> list[WriteOutcome]:
        """The consolidation pass: requests to forget the older side of a contradiction, likely duplicates and
        stale facts (in that order), for a person's review.

        At most `max_proposals` requests are written (the cost cap); a fact a request already names, waiting
        or decided, is never proposed again. Each request is a proposed `retract` (source `tool:consolidate`)
        whose reason is its evidence; the fact stands until a person confirms it.
        """
        now = self._now()
        standing = [f for f in self._index.candidates(now) if f.tier != "log"]
        proposals = [
            *contradictions(standing, now),
            *likely_duplicates(standing),
            *stale_facts(standing, self.uses([f.id for f in standing]), self._clock()),
        ]
        seen = self._index.asked_to_forget([p.target.id for p in proposals])
        outcomes: list[WriteOutcome] = []
        for proposal in proposals:
            if len(outcomes) >= max_proposals:
                break
            if proposal.target.id in seen:
                continue
            seen.add(proposal.target.id)
            outcomes.append(
                await self.retract(proposal.target.id, evidence=CONSOLIDATE, reason=proposal.reason, pending=True)
            )
        return outcomes

    def summary_requests(self, limit: int) -> list[SummaryRequest]:
        """At most `limit` spans a model may summarise, newest first (the section shows the newest first):
        those whose summary is the deterministic one and leaves entries out (one that quotes them all is whole)."""
        now = self._clock()
        instant = format_instant(now)
        summaries = self._index.summaries
        requests: list[SummaryRequest] = []
        for summary in summaries.before(cut_date(now), instant, persist=not self._writing()):
            if len(requests) >= limit:
                break
            if summary.model is not None or len(summary.quoted) >= summary.count:
                continue
            entries = tuple(summaries.sample(summary.span, instant, MODEL_ENTRIES))
            requests.append(
                SummaryRequest(summary.span, summary.count, summaries.fingerprint(summary.span, instant), entries)
            )
        return requests

    async def keep_summary(self, request: SummaryRequest, reply: str, model: str) -> Summary | None:
        """Keep a model's summary of a span as its summary row, when the span's entries are still the ones it
        was asked about and the reply holds no secret; then the next turn renders its prompt afresh.

        Returns:
            The summary kept, or None (the entries changed meanwhile, a secret, or no words).
        """
        finding = find_sensitive(reply)
        if finding is not None:
            logger.warning("memory %s: a summary was not kept: it looks like %s", self.agent_id, finding.label)
            return None

        async def keep_locked() -> Summary | None:
            with self._index.transaction():
                kept = self._index.summaries.keep_model(request.span, request.fingerprint, self._now(), reply, model)
            if kept is not None:
                for place in self._places():  # with the row, before anything else runs: no turn sees one alone
                    bump_epoch(place, "summary")
            return kept

        return await self._write(keep_locked)

    async def import_view_edits(self) -> list[WriteOutcome]:
        """Import a person's edit of MEMORY.md as `human` events; the host's own writes are recognised and skipped.

        Returns:
            What each imported edit did (empty when the file is as the host last wrote it).
        """
        return await self._write(self._view.sync)
