"""`MemoryStore`: one agent's memory, the single writer of its ledger and everything derived from it.

Every write is planned against the projection (gate, duplicate, tombstone, trust), appended to the ledger
with fsync (from then on it is acknowledged), folded into the index, and followed by a fresh MEMORY.md.
Writes hold an asyncio lock and do their I/O without awaiting in between, so readers never see a half
write. Change notices go to the host's callback after the lock is released.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sqlite3
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from host.memory.checkpoint import catch_up, finish_erasures, rebuild, set_checkpoint
from host.memory.errors import (
    InvalidMemoryRequestError,
    MemoryStateError,
    RecordNotFoundError,
    SensitiveContentError,
)
from host.memory.fold import Fact, fold
from host.memory.gate import ensure_not_sensitive
from host.memory.index import MemoryIndex
from host.memory.ledger import Ledger
from host.memory.reads import MemoryReads
from host.memory.records import Evidence, Record, content_signature, new_record_id
from host.memory.trust import decide_trust, is_suppressible, valid_source
from host.memory.values import (
    Clock,
    EventSink,
    MemoryEvent,
    NoteItem,
    WriteOutcome,
    check_item,
    check_key,
    clean_text,
    parse_instant,
)
from host.memory.view import VIEW_LINES, diff_view, parse_view, render_view
from host.prompt.cache import bump_epoch
from host.store.atomic import write_bytes_atomic

__all__ = ["MemoryStore", "MERGE_EVERY"]

logger = logging.getLogger(__name__)

MERGE_EVERY = 1000
"""The search index's segments are merged after this many records (and after any batch as large)."""


class MemoryStore(MemoryReads):
    """The memory of the agent in `agent_dir` (files under `agent_dir/memory/`)."""

    def __init__(
        self,
        agent_dir: Path,
        *,
        agent_id: str | None = None,
        on_event: EventSink | None = None,
        clock: Clock | None = None,
        scope: str = "private",
    ) -> None:
        """Open the memory, bring the index up to the ledger, and import MEMORY.md edits made while closed.

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
        self._events: list[MemoryEvent] = []
        ledger = Ledger(self.memory_dir / "ledger.jsonl")
        super().__init__(ledger, MemoryIndex(self.memory_dir / "index.sqlite"))
        self._catch_up()
        self._open_view()
        self._events.clear()  # nobody is listening yet; a shell lists memory when it connects

    # ---- opening and derived state

    def _catch_up(self) -> None:
        if catch_up(self._ledger, self._index):
            self._finish_erasures()

    def _rebuild(self) -> None:
        if rebuild(self._ledger, self._index):
            self._finish_erasures()

    def _finish_erasures(self) -> None:
        finish_erasures(self._ledger, self._index)
        bump_epoch(self.agent_dir, "erase")

    def _open_view(self) -> None:
        last = self._index.meta("view_text")
        try:
            on_disk = self.view_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            on_disk = None
        if last is not None and on_disk is not None and on_disk != last:
            logger.info("memory %s: importing MEMORY.md edits made while the host was away", self.agent_id)
            self._apply_view_edits(on_disk, last)
        if on_disk is None or on_disk != last:
            self._write_view(force=True)

    def _write_view(self, *, force: bool = False) -> None:
        """Render MEMORY.md; `force` rewrites it even when the projection did not change (after an edit)."""
        standing, totals = self.recent_standing(VIEW_LINES)
        proposed, waiting = self._index.newest_proposed(VIEW_LINES)
        shown = Counter(f.tier for f in (*standing.current, *(f for c in standing.conflicts for f in c.facts)))
        hidden = {tier: n - shown[tier] for tier, n in totals.items()} | {"proposed": waiting - len(proposed)}
        text = render_view(self.agent_id, standing, proposed, hidden)
        if force or self._index.meta("view_text") != text or not self.view_path.exists():
            write_bytes_atomic(self.view_path, text.encode("utf-8"))
            with self._index.transaction():
                self._index.set_meta(view_text=text)

    def _draft(self, op: str, evidence: Evidence, **fields: Any) -> Record:
        rid = new_record_id()
        while self._index.fact(rid) is not None:
            rid = new_record_id()
        return Record(
            seq=0,
            id=rid,
            op=op,
            source=evidence.source,
            observed_at=self._now(),
            scope=self.scope,
            evidence_seq=evidence.seq,
            tool_call_id=evidence.tool_call_id,
            basis=evidence.basis,
            **fields,
        )

    def _commit(self, drafts: Sequence[Record]) -> list[Record]:
        """Append, fold, refresh the view; queue notices. The ledger append is the point of no return."""
        if not drafts:
            return []
        records = self._ledger.append(drafts)
        epoch_mark = bumped_from = self.epoch_mark
        proposed: list[Fact] = []
        try:
            with self._index.transaction():
                for record in records:
                    effect = fold(record, self._index)
                    self._index.apply(record, effect)
                    epoch_mark = record.seq if effect.bumps_epoch else epoch_mark
                    proposed += [f for f in effect.facts if f.seq == record.seq and f.trust == "proposed"]
                set_checkpoint(self._ledger, self._index, epoch_mark)
        except sqlite3.Error:
            logger.exception("memory %s: the index update failed; rebuilding it from the ledger", self.agent_id)
            self._rebuild()
        if len(records) >= MERGE_EVERY or records[0].seq // MERGE_EVERY != records[-1].seq // MERGE_EVERY:
            self._index.merge_search_index()
        self._write_view()
        bumped = epoch_mark != bumped_from
        self._events.append(MemoryEvent("changed", self.agent_id, records[0].op, tuple(r.id for r in records), bumped))
        if proposed:
            ids = tuple(f.id for f in proposed)
            self._events.append(MemoryEvent("proposed", self.agent_id, records[0].op, ids, False, tuple(proposed)))
        return records

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

    def _existing_fact(self, record_id: str) -> Fact:
        fact = self._index.fact(record_id)
        if fact is None or fact.status == "erased":
            raise RecordNotFoundError(f"no memory record {record_id}")
        return fact

    def _suppress(self, sig: str, evidence: Evidence, tombstone_id: str) -> tuple[Record, tuple[Fact, ...]]:
        gone = tuple(f for f in self._index.with_sig(sig) if f.status != "live" or f.trust == "rejected")
        return self._draft("suppress", evidence, target=tombstone_id, sig=sig), gone

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
        async with self._lock:
            outcomes = self._note_locked(checked, evidence, reassert)
        await self._flush_events()
        return outcomes

    def _note_locked(self, items: Sequence[NoteItem], evidence: Evidence, reassert: bool) -> list[WriteOutcome]:
        trust = decide_trust(evidence.source, evidence.basis)
        suppressible = is_suppressible(evidence.source, reassert)
        plans: list[tuple[str, Record | None, Fact | str | None, tuple[Fact, ...], str | None]] = []
        pending: dict[tuple[str, str | None, str | None], str] = {}
        now = self._now()
        for item in items:
            sig = content_signature(item.text)
            slot = (sig, item.key, item.valid_from)
            if slot in pending:
                plans.append(("duplicate", None, pending[slot], (), None))
                continue
            same = [
                f
                for f in self._index.live_with_sig(sig)
                if f.valid_from == item.valid_from and (item.key is None or f.key == item.key)
            ]
            known = next((f for f in same if f.trust == "confirmed" or trust == "proposed"), None)
            if known is not None:
                plans.append(("duplicate", None, known, (), None))
                continue
            tombstone = self._index.tombstone(sig) if suppressible else None
            if tombstone is not None:
                draft, gone = self._suppress(sig, evidence, tombstone)
                plans.append(("suppressed", draft, None, gone, tombstone))
                continue
            rivals = tuple(f for f in self._index.standing_for_key(item.key, now) if f.sig != sig) if item.key else ()
            draft = self._draft(
                "assert",
                evidence,
                trust=trust,
                key=item.key,
                tier=item.tier,
                text=item.text,
                sig=sig,
                valid_from=item.valid_from,
                valid_until=item.valid_until,
                confidence=item.confidence,
                conflicts_with=tuple(f.id for f in rivals),
                reassert=reassert and evidence.source == "agent",
            )
            pending[slot] = draft.id
            plans.append(("recorded" if trust == "confirmed" else "proposed", draft, draft.id, rivals, None))
        records = {r.id: r for r in self._commit([p[1] for p in plans if p[1] is not None])}
        outcomes = []
        for kind, planned, fact, related, tombstone in plans:
            written = (records[planned.id],) if planned is not None else ()
            resolved = self._index.fact(fact) if isinstance(fact, str) else fact
            outcomes.append(WriteOutcome(kind, written, resolved, related, tombstone))
        return outcomes

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
        async with self._lock:
            outcome = self._correct_locked(record_id, cleaned, evidence, since, key, keep_key=key is None)
        await self._flush_events()
        return outcome

    def _correct_locked(
        self, record_id: str, text: str, evidence: Evidence, since: str | None, key: str | None, *, keep_key: bool
    ) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.status == "superseded":
            raise MemoryStateError(f"record {record_id} was replaced by {target.changed_by}; correct that one")
        if target.status != "live" or target.trust == "rejected":
            raise MemoryStateError(f"record {record_id} was forgotten or rejected; note the fact again instead")
        new_key = target.key if keep_key else key
        check_key(new_key)
        sig = content_signature(text)
        if sig == target.sig and new_key == target.key and since is None:
            return WriteOutcome("unchanged", fact=target)
        if since is not None and target.valid_from is not None and since <= target.valid_from:
            raise InvalidMemoryRequestError("validFrom must be later than the old record's validFrom")
        tombstone = self._index.tombstone(sig) if is_suppressible(evidence.source, False) else None
        if tombstone is not None:
            draft, gone = self._suppress(sig, evidence, tombstone)
            return WriteOutcome("suppressed", tuple(self._commit([draft])), None, gone, tombstone)
        trust = decide_trust(evidence.source, evidence.basis)
        draft = self._draft(
            "correct",
            evidence,
            trust=trust,
            key=new_key,
            tier=target.tier,
            text=text,
            sig=sig,
            replaces=target.id,
            decision="end" if since else "supersede",
            valid_from=since or target.valid_from,
            valid_until=None if since else target.valid_until,
        )
        records = tuple(self._commit([draft]))
        kind = "corrected" if trust == "confirmed" else "proposed"
        return WriteOutcome(kind, records, self._index.fact(draft.id), (self._existing_fact(target.id),))

    async def retract(self, record_id: str, *, evidence: Evidence, reason: str | None = None) -> WriteOutcome:
        """Forget a fact: it leaves every view and the next prompt, and a tombstone keeps it from coming back.

        Live records with the same content are retracted with it, so the fact is gone, not one copy of it.

        Raises:
            RecordNotFoundError: no such record (or erased).
            SensitiveContentError: the reason holds a secret.
        """
        if not valid_source(evidence.source):
            raise InvalidMemoryRequestError(f"unknown source {evidence.source!r}")
        reason = clean_text(reason, "reason") if reason is not None else None
        ensure_not_sensitive(reason)
        async with self._lock:
            outcome = self._retract_locked(record_id, evidence, reason)
        await self._flush_events()
        return outcome

    def _retract_locked(self, record_id: str, evidence: Evidence, reason: str | None) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.status == "retracted":
            return WriteOutcome("unchanged", fact=target)
        copies = [f for f in self._index.live_with_sig(target.sig or "") if f.id != target.id] if target.sig else []
        drafts = [self._draft("retract", evidence, target=f.id, sig=f.sig, reason=reason) for f in (target, *copies)]
        records = tuple(self._commit(drafts))
        return WriteOutcome("retracted", records, self._index.fact(target.id), tuple(copies))

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
        async with self._lock:
            outcome = self._review_locked(record_id, decision, cleaned, key, reason)
        await self._flush_events()
        return outcome

    def _review_locked(
        self, record_id: str, decision: str, text: str | None, key: str | None, reason: str | None
    ) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.trust != "proposed" or target.status != "live":
            raise MemoryStateError(f"record {record_id} is not waiting for review")
        check_key(key)
        human = Evidence("human")
        if decision == "edit" and text is not None:
            draft = self._draft(
                "review",
                human,
                decision="edit",
                target=target.id,
                trust="confirmed",
                text=text,
                sig=content_signature(text),
                key=key or target.key,
                tier=target.tier,
                valid_from=target.valid_from,
                valid_until=target.valid_until,
                replaces=target.replaces,
                reason=reason,
            )
            records = tuple(self._commit([draft]))
            return WriteOutcome("edited", records, self._index.fact(draft.id), (self._existing_fact(target.id),))
        sig = target.sig if decision == "reject" else None
        draft = self._draft("review", human, decision=decision, target=target.id, sig=sig, reason=reason)
        records = tuple(self._commit([draft]))
        return WriteOutcome("confirmed" if decision == "confirm" else "rejected", records, self._index.fact(target.id))

    async def erase(
        self, record_id: str, *, reason: str | None = None, evidence: Evidence | None = None
    ) -> WriteOutcome:
        """Remove a fact's text physically: ledger, index (and its free pages), MEMORY.md and the frozen prompt.

        Every record with the same content goes with it, and the content of records about it (retractions,
        rejections, suppressions). The chain still verifies through the commitments, and the erase record
        says who erased what and when. Erase is a person's act; it is never offered to a model.

        Raises:
            RecordNotFoundError: no such record.
            SensitiveContentError: the reason holds a secret.
        """
        reason = clean_text(reason, "reason") if reason is not None else None
        ensure_not_sensitive(reason)
        async with self._lock:
            target = self._index.fact(record_id)
            if target is None:
                raise RecordNotFoundError(f"no memory record {record_id}")
            if target.status == "erased":
                outcome = WriteOutcome("unchanged", fact=target)
            else:
                outcome = self._erase_locked(target, reason, evidence or Evidence("human"))
        await self._flush_events()
        return outcome

    def _erase_locked(self, target: Fact, reason: str | None, evidence: Evidence) -> WriteOutcome:
        sig = target.sig
        targets = {target.id} | ({f.id for f in self._index.with_sig(sig)} if sig else set())
        scrubbed = {
            r.id
            for r in self._ledger.records()
            if not r.is_fact and r.op != "erase" and (r.target in targets or (sig is not None and r.sig == sig))
        }
        draft = self._draft(
            "erase", evidence, targets=tuple(sorted(targets)), scrubbed=tuple(sorted(scrubbed)), reason=reason
        )
        records = tuple(self._commit([draft]))
        self._finish_erasures()
        return WriteOutcome("erased", records, self._index.fact(target.id))

    async def import_view_edits(self) -> list[WriteOutcome]:
        """Import a person's edit of MEMORY.md as `human` events; the host's own writes are recognised and skipped.

        Returns:
            What each imported edit did (empty when the file is as the host last wrote it).
        """
        async with self._lock:
            try:
                on_disk = self.view_path.read_text(encoding="utf-8")
            except FileNotFoundError:
                on_disk = None
            last = self._index.meta("view_text")
            outcomes: list[WriteOutcome] = []
            if on_disk is not None and on_disk != last:
                outcomes = self._apply_view_edits(on_disk, last or "")
            if on_disk != last:
                self._write_view(force=True)
        await self._flush_events()
        return outcomes

    def _apply_view_edits(self, on_disk: str, last: str) -> list[WriteOutcome]:
        human = Evidence("human")
        outcomes: list[WriteOutcome] = []
        for edit in diff_view(parse_view(last), parse_view(on_disk)):
            try:
                if edit.kind == "add":
                    item = check_item(NoteItem(edit.text, key=edit.key, tier=edit.tier))
                    outcomes += self._note_locked([item], human, False)
                    continue
                fact = self._index.fact(edit.record_id or "")
                if fact is None or fact.status != "live":
                    continue
                proposed = fact.trust == "proposed"
                if edit.kind == "change":
                    text = clean_text(edit.text)
                    ensure_not_sensitive(text, edit.key)
                    if proposed:
                        outcomes.append(self._review_locked(fact.id, "edit", text, edit.key, None))
                    else:
                        outcomes.append(self._correct_locked(fact.id, text, human, None, edit.key, keep_key=False))
                elif proposed:
                    outcomes.append(self._review_locked(fact.id, "reject", None, None, "deleted from MEMORY.md"))
                else:
                    outcomes.append(self._retract_locked(fact.id, human, "deleted from MEMORY.md"))
            except (SensitiveContentError, InvalidMemoryRequestError, MemoryStateError) as exc:
                # The line is dropped: the view is rewritten from the ledger right after.
                logger.warning("memory %s: a MEMORY.md edit was not imported: %s", self.agent_id, exc.message)
        return outcomes
