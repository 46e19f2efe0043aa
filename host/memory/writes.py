"""The core of every memory write: plan against the projection, append, fold, notify.

Each `_*_locked` method is called with the store's lock held. It awaits only its disk calls (the ledger
append, MEMORY.md), which run in a worker thread; the index is changed on the loop after the append, in one
stretch, so a reader sees the state before the write or after it, never half of it. `_commit` is the point
of no return: once the ledger append has returned, the records are acknowledged; the index and the view
follow, and a failed index update rebuilds the index from the ledger rather than failing the write.
Change notices are queued for the store to send.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from host.memory.checkpoint import rebuild, set_checkpoint
from host.memory.disk import DiskWork
from host.memory.erasure import Copies, Erasure
from host.memory.errors import (
    InvalidMemoryRequestError,
    MemoryStateError,
    RecordNotFoundError,
    SensitiveContentError,
)
from host.memory.fold import Fact, fold
from host.memory.gate import ensure_not_sensitive
from host.memory.ledger import Appended
from host.memory.planner import NoteContext, plan_notes
from host.memory.reads import MemoryReads
from host.memory.records import Evidence, Record, content_signature, new_record_id
from host.memory.scrub import TextScrub
from host.memory.trust import correction_trust, decide_trust, is_suppressible
from host.memory.values import MemoryEvent, NoteItem, WriteOutcome, check_item, check_key, clean_text
from host.memory.view import ViewEdit

__all__ = ["MemoryWrites", "MERGE_EVERY"]

logger = logging.getLogger(__name__)

MERGE_EVERY = 1000
"""The search index's segments are merged after this many records (and after any batch as large)."""


class MemoryWrites(MemoryReads):
    """The write operations of one agent's memory, for `MemoryStore` to call under its lock."""

    agent_dir: Path
    agent_id: str
    scope: str
    _events: list[MemoryEvent]
    _index_stale = False  # an index update failed after an acknowledged append: rebuild before the next fold

    _disk: DiskWork
    _copies: Copies | None = None

    async def _refresh_view(self) -> None:
        """Bring the people's view up to date after a commit (the store renders MEMORY.md)."""

    def _places(self) -> list[Path]:
        """The directories whose transcript and prompt cache this memory feeds (the store says which)."""
        raise NotImplementedError

    async def _rebuild(self) -> None:
        if rebuild(self._ledger, self._index):
            await self._finish_erasures()

    async def _finish_erasures(self) -> None:
        """Finish whatever erase the ledger shows unfinished (a crash cut it short): its copies, content, index."""
        erasure = await Erasure.leftover(self._ledger, self._index, self._disk, self._places())
        await erasure.before()
        await erasure.after(self._refresh_view)

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

    async def _commit(self, drafts: Sequence[Record], erasure: Erasure | None = None) -> list[Record]:
        """Append, fold, refresh the view; queue notices. The ledger append is the point of no return.

        An erase's pass over what was appended to its transcripts meanwhile runs with the append (in the
        worker), so the fact leaves the index only once no reply a turn replays still holds it.
        """
        if not drafts:
            return []

        def append() -> Appended:
            appended = self._ledger.write(drafts)
            if erasure is not None:
                try:
                    erasure.with_append()
                except OSError:
                    logger.exception("memory %s: an erase's pass failed; its last pass takes it up", self.agent_id)
            return appended

        appended = await self._disk(append)
        # Nothing awaits from the head's move to the end of the fold: readers see all of it or none of it.
        self._ledger.advance(appended)
        records = list(appended.records)
        for record in records:
            if record.op == "erase":
                self._ledger.hide({*record.targets, *record.scrubbed})
        # From here on the records are acknowledged: nothing below may turn the write into a failure.
        epoch_mark = bumped_from = self.epoch_mark
        proposed: list[Fact] = []
        try:
            if self._index_stale:
                await self._rebuild()
                self._index_stale = False
            else:
                with self._index.transaction():
                    for record in records:
                        effect = fold(record, self._index)
                        self._index.apply(record, effect)
                        epoch_mark = record.seq if effect.bumps_epoch else epoch_mark
                        proposed += [f for f in effect.facts if f.seq == record.seq and f.trust == "proposed"]
                    set_checkpoint(self._ledger, self._index, epoch_mark)
            if len(records) >= MERGE_EVERY or records[0].seq // MERGE_EVERY != records[-1].seq // MERGE_EVERY:
                self._index.merge_search_index()
        except (sqlite3.Error, OSError):
            logger.exception("memory %s: the index update failed; rebuilding it from the ledger", self.agent_id)
            try:
                await self._rebuild()
                self._index_stale = False
            except (sqlite3.Error, OSError):
                logger.exception("memory %s: the index is rebuilt at the next write", self.agent_id)
                self._index_stale = True
        if erasure is None:  # an erase renders the view first thing after the fold
            await self._refresh_view()
        bumped = epoch_mark != bumped_from
        self._events.append(MemoryEvent("changed", self.agent_id, records[0].op, tuple(r.id for r in records), bumped))
        if proposed:
            ids = tuple(f.id for f in proposed)
            self._events.append(MemoryEvent("proposed", self.agent_id, records[0].op, ids, False, tuple(proposed)))
        return records

    def _existing_fact(self, record_id: str) -> Fact:
        fact = self._index.fact(record_id)
        if fact is None or fact.status == "erased":
            raise RecordNotFoundError(f"no memory record {record_id}")
        return fact

    def _retired(self, sig: str) -> tuple[Fact, ...]:
        return tuple(f for f in self._index.with_sig(sig) if f.status != "live" or f.trust == "rejected")

    def _note_context(self, item: NoteItem, now: str) -> NoteContext:
        sig = content_signature(item.text)
        tombstone = self._index.tombstone(sig)
        rivals = tuple(self._index.standing_for_key(item.key, now)) if item.key else ()
        # A request to forget carries its target's text but is no copy of the fact: it never makes a duplicate.
        live = tuple(f for f in self._index.live_with_sig(sig) if f.op != "retract")
        return NoteContext(sig, live, tombstone, self._retired(sig) if tombstone else (), rivals)

    async def _note_locked(self, items: Sequence[NoteItem], evidence: Evidence, reassert: bool) -> list[WriteOutcome]:
        trust = decide_trust(evidence.source, evidence.basis)
        now = self._now()
        contexts = [self._note_context(item, now) for item in items]
        plans = plan_notes(items, contexts, trust=trust, suppressible=is_suppressible(evidence.source, reassert))
        drafts: dict[int, Record] = {}
        for position, plan in enumerate(plans):
            if plan.kind == "suppressed":
                drafts[position] = self._draft("suppress", evidence, target=plan.tombstone, sig=plan.sig)
            elif plan.writes:
                item = plan.item
                drafts[position] = self._draft(
                    "assert",
                    evidence,
                    trust=trust,
                    key=item.key,
                    tier=item.tier,
                    text=item.text,
                    sig=plan.sig,
                    valid_from=item.valid_from,
                    valid_until=item.valid_until,
                    confidence=item.confidence,
                    conflicts_with=tuple(f.id for f in plan.related),
                    reassert=reassert and evidence.source == "agent",
                )
        written = {r.id: r for r in await self._commit(list(drafts.values()))}
        outcomes = []
        for position, plan in enumerate(plans):
            records = (written[drafts[position].id],) if position in drafts else ()
            if plan.kind == "suppressed":
                fact = None
            elif plan.same_as is not None:
                fact = self._index.fact(drafts[plan.same_as].id)
            elif position in drafts:
                fact = self._index.fact(drafts[position].id)
            else:
                fact = plan.fact
            outcomes.append(WriteOutcome(plan.kind, records, fact, plan.related, plan.tombstone))
        return outcomes

    async def _correct_locked(
        self, record_id: str, text: str, evidence: Evidence, since: str | None, key: str | None, *, keep_key: bool
    ) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.op == "retract":
            raise MemoryStateError(f"record {record_id} is a request to forget, waiting for a person's review")
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
            draft = self._draft("suppress", evidence, target=tombstone, sig=sig)
            return WriteOutcome("suppressed", tuple(await self._commit([draft])), None, self._retired(sig), tombstone)
        trust = correction_trust(evidence.source, evidence.basis, target.trust)
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
        records = tuple(await self._commit([draft]))
        kind = "corrected" if trust == "confirmed" else "proposed"
        return WriteOutcome(kind, records, self._index.fact(draft.id), (self._existing_fact(target.id),))

    async def _retract_locked(
        self, record_id: str, evidence: Evidence, reason: str | None, pending: bool = False
    ) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.op == "retract":
            raise MemoryStateError(f"record {record_id} is a request to forget, waiting for a person's review")
        if target.status == "retracted":
            return WriteOutcome("unchanged", fact=target)
        if pending and target.status == "live":
            return await self._request_retraction(target, evidence, reason)
        copies = [f for f in self._index.live_with_sig(target.sig or "") if f.id != target.id] if target.sig else []
        drafts = [self._draft("retract", evidence, target=f.id, sig=f.sig, reason=reason) for f in (target, *copies)]
        records = tuple(await self._commit(drafts))
        return WriteOutcome("retracted", records, self._index.fact(target.id), tuple(copies))

    async def _request_retraction(self, target: Fact, evidence: Evidence, reason: str | None) -> WriteOutcome:
        """A retraction that waits for a person: the fact stands until the request is confirmed in review."""
        waiting = [
            f
            for f in self._index.live_with_sig(target.sig or "")
            if f.op == "retract" and f.replaces == target.id and f.trust == "proposed"
        ]
        if waiting:
            return WriteOutcome("pending", fact=waiting[0], related=(target,))
        draft = self._draft("retract", evidence, target=target.id, sig=target.sig, reason=reason, trust="proposed")
        records = tuple(await self._commit([draft]))
        return WriteOutcome("pending", records, self._index.fact(draft.id), (target,))

    async def _review_retraction(self, request: Fact, decision: str, reason: str | None) -> WriteOutcome:
        """A person settles a request to forget: confirmed, the fact (and its live copies) is retracted now."""
        if decision == "edit":
            raise MemoryStateError(f"record {request.id} is a request to forget: confirm or reject it")
        human = Evidence("human")
        drafts = [self._draft("review", human, decision=decision, target=request.id, reason=reason)]
        old = self._index.fact(request.replaces or "")
        if decision == "confirm" and old is not None and old.status == "live":
            copies = [f for f in self._index.live_with_sig(old.sig or "") if f.op != "retract" and f.id != old.id]
            why = reason or f"confirmed request {request.id}"
            drafts += [self._draft("retract", human, target=f.id, sig=f.sig, reason=why) for f in (old, *copies)]
        records = tuple(await self._commit(drafts))
        kind = "confirmed" if decision == "confirm" else "rejected"
        return WriteOutcome(kind, records, self._index.fact(request.id), (old,) if old is not None else ())

    async def _review_locked(
        self, record_id: str, decision: str, text: str | None, key: str | None, reason: str | None
    ) -> WriteOutcome:
        target = self._existing_fact(record_id)
        if target.trust != "proposed" or target.status != "live":
            raise MemoryStateError(f"record {record_id} is not waiting for review")
        check_key(key)
        human = Evidence("human")
        if target.op == "retract":
            return await self._review_retraction(target, decision, reason)
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
            records = tuple(await self._commit([draft]))
            return WriteOutcome("edited", records, self._index.fact(draft.id), (self._existing_fact(target.id),))
        sig = target.sig if decision == "reject" else None
        draft = self._draft("review", human, decision=decision, target=target.id, sig=sig, reason=reason)
        records = tuple(await self._commit([draft]))
        return WriteOutcome("confirmed" if decision == "confirm" else "rejected", records, self._index.fact(target.id))

    async def _erase_locked(
        self, target: Fact, reason: str | None, evidence: Evidence, conversation: bool = False
    ) -> WriteOutcome:
        sig = target.sig
        targets = {target.id} | ({f.id for f in self._index.with_sig(sig)} if sig else set())
        found = await self._disk(lambda: self._ledger.mentioning([*sorted(targets), *([sig] if sig else [])]))
        scrubbed = {
            r.id
            for r in found
            if not r.is_fact and r.op != "erase" and (r.target in targets or (sig is not None and r.sig == sig))
        }
        texts = [r.text for r in found if r.id in targets and r.text]
        # A model's summary of the entry's span may say what it said in other words: its line goes as well.
        texts += self._index.summaries.model_texts([target, *(self._index.with_sig(sig) if sig else [])])
        erasure = Erasure(
            self._ledger, self._index, self._disk, self._places(), TextScrub(texts), conversation=conversation
        )
        await erasure.before()
        if conversation and self._copies is not None:
            erasure.elsewhere = await self._copies(self.agent_id, erasure.scrub)
        draft = self._draft(
            "erase", evidence, targets=tuple(sorted(targets)), scrubbed=tuple(sorted(scrubbed)), reason=reason
        )
        records = tuple(await self._commit([draft], erasure))
        await erasure.after(self._refresh_view)
        return WriteOutcome("erased", records, self._index.fact(target.id), erasure=erasure.report)

    async def _apply_view_edits(self, edits: Sequence[ViewEdit]) -> list[WriteOutcome]:
        """A person's MEMORY.md edits as `human` acts; a line that cannot be imported is logged and dropped."""
        human = Evidence("human")
        outcomes: list[WriteOutcome] = []
        for edit in edits:
            try:
                if edit.kind == "add":
                    item = check_item(NoteItem(edit.text, key=edit.key, tier=edit.tier))
                    outcomes += await self._note_locked([item], human, False)
                    continue
                fact = self._index.fact(edit.record_id or "")
                if fact is None or fact.status != "live":
                    if edit.kind == "change" and edit.section != "proposed":
                        # The fact changed since the person's copy was rendered: their words still count.
                        item = check_item(NoteItem(edit.text, key=edit.key, tier=edit.tier))
                        outcomes += await self._note_locked([item], human, False)
                    continue
                proposed = fact.trust == "proposed"
                if edit.kind == "change":
                    text = clean_text(edit.text)
                    ensure_not_sensitive(text, edit.key)
                    if proposed:
                        outcomes.append(await self._review_locked(fact.id, "edit", text, edit.key, None))
                    else:
                        corrected = await self._correct_locked(fact.id, text, human, None, edit.key, keep_key=False)
                        outcomes.append(corrected)
                elif proposed:
                    outcomes.append(await self._review_locked(fact.id, "reject", None, None, "deleted from MEMORY.md"))
                else:
                    outcomes.append(await self._retract_locked(fact.id, human, "deleted from MEMORY.md"))
            except (SensitiveContentError, InvalidMemoryRequestError, MemoryStateError) as exc:
                # The line is dropped: the view is rewritten from the ledger right after.
                logger.warning("memory %s: a MEMORY.md edit was not imported: %s", self.agent_id, exc.message)
        return outcomes
