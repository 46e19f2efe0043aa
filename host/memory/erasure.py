"""The work of an erase around its record: every copy of the text goes, and nothing of it runs on the loop.

Before the record is appended, the transcripts this memory feeds (their memory tools' replies, and the
conversation when the person asks) are scrubbed in place, so by the time the fact leaves the index and its
fold starts a new prompt epoch, no reply a turn replays still holds it; a pass over what was appended
meanwhile runs with the append. After the fold: MEMORY.md is rendered again, torn tails, views kept aside
and frozen prompts are scrubbed, a last pass takes what turns appended meanwhile (and starts yet another
epoch if it found any), then the ledger loses the content and the index is replaced by a compacted copy.
Every file step runs in the memory's disk worker; the loop folds and swaps the index in. An erase a crash
cuts short is finished when the memory opens (`leftover`): the ledger still holds the text until the end,
and the frozen prompts are dropped whole, since a model's summary line about the entry (which the erase took
out by its own text) is gone from the index by then.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from host.memory.disk import DiskWork
from host.memory.index import MemoryIndex
from host.memory.index_queries import IndexQueries
from host.memory.ledger import DAMAGED_SUFFIX, TORN_SUFFIX, Ledger
from host.memory.records import Record
from host.memory.scrub import FilePass, TextScrub, scrub_file, scrub_transcript
from host.memory.values import ErasureReport
from host.prompt.cache import CACHE_FILE, bump_epoch

__all__ = ["Copies", "Erasure", "TRANSCRIPT"]

logger = logging.getLogger(__name__)

TRANSCRIPT = "transcript.jsonl"
"""The transcript file in each directory a memory feeds (an agent's, or each member's of a Work)."""

Copies = Callable[[str, TextScrub], Awaitable[int]]
"""`copies(agent_id, scrub)`: the host scrubs the agent's messages kept elsewhere (peers' transcripts, inboxes,
the requests book) for a conversation scrub; returns how many it scrubbed."""


@dataclass(slots=True)
class _Passes:
    """Where the last pass over each transcript ended, and what the passes found."""

    ends: dict[Path, int] = field(default_factory=dict)
    derived: int = 0
    held: int = 0
    scrubbed: int = 0

    def add(self, path: Path, found: FilePass) -> None:
        self.ends[path] = found.end
        self.derived += found.derived
        self.held += found.held
        self.scrubbed += found.scrubbed


class Erasure:
    """One erase's passes over the copies of its texts.

    Args:
        ledger, index, disk: the memory's, used under its writer's lock.
        places: the directories whose transcript and prompt cache this memory feeds.
        scrub: the texts to take out.
        conversation: the person asked for the conversation's own messages to be scrubbed too.
    """

    def __init__(
        self,
        ledger: Ledger,
        index: MemoryIndex,
        disk: DiskWork,
        places: Sequence[Path],
        scrub: TextScrub,
        *,
        conversation: bool = False,
        drop_frozen: bool = False,
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._disk = disk
        self._places = tuple(places)
        self.scrub = scrub
        self.conversation = conversation
        self._drop_frozen = drop_frozen
        self._passes = _Passes()
        self.elsewhere = 0  # conversation messages scrubbed outside these places (a host hook's count)

    @classmethod
    async def leftover(cls, ledger: Ledger, index: MemoryIndex, disk: DiskWork, places: Sequence[Path]) -> Erasure:
        """The erasure of whatever erased content the ledger still holds (a crash cut an erase short)."""
        texts = await disk(lambda: tuple(r.text for r in _holding(ledger) if r.is_fact and r.text))
        return cls(ledger, index, disk, places, TextScrub(texts), drop_frozen=bool(texts))

    @property
    def report(self) -> ErasureReport:
        return ErasureReport(self._passes.held, self._passes.scrubbed + self.elsewhere)

    def _pass(self) -> None:
        """Scrub each transcript from where the last pass ended (its start, the first time)."""
        if not self.scrub:
            return
        for place in self._places:
            path = place / TRANSCRIPT
            start = self._passes.ends.get(path, 0)
            self._passes.add(path, scrub_transcript(path, self.scrub, conversation=self.conversation, start=start))

    def _first_pass(self) -> None:
        self._pass()
        for place in self._places:
            scrub_file(place / (TRANSCRIPT + ".torn"), self.scrub, torn=True)  # never acknowledged: no one's words

    async def before(self) -> None:
        """The first pass, before the erase record is appended (readers still see the fact standing)."""
        await self._disk(self._first_pass)

    def with_append(self) -> None:
        """The pass over what was appended during the first, run in the disk worker right after the append."""
        self._pass()

    async def after(self, refresh_view: Callable[[], Awaitable[None]]) -> None:
        """Everything after the record has folded: the view, every other copy, then the ledger and the index.

        The ledger loses the text last but for the index, so an erase a crash cuts short still finds the text
        there when the memory opens and takes it out of the copies first.
        """
        await refresh_view()  # first: a view it keeps aside (an edit made before the erase) is scrubbed below
        late = self._passes.derived + self._passes.scrubbed
        await self._disk(self._last_pass)
        if self._passes.derived + self._passes.scrubbed != late or self._drop_frozen:
            # A reply recorded after the fold held the text: whatever a turn kept of it belongs to an old epoch.
            # (Or the erase was cut short: a summary line in other words may be left that no text finds.)
            for place in self._places:
                bump_epoch(place, "erase")
        doomed = await self._disk(lambda: _erase_from_ledger(self._ledger))
        if doomed:
            logger.info("memory %s: removed the content of %d erased record(s)", self._index.path.parent, doomed)
        with self._index.vectors.held():
            copy = await self._disk(self._compacted_copy)
            old = self._index.swap_in(copy)
        await self._disk(lambda: _close(old))
        if self._passes.derived:
            logger.info("memory %s: scrubbed %d memory tool replies", self._index.path.parent, self._passes.derived)

    def _compacted_copy(self) -> Path:
        ledger = self._ledger  # rewritten just before: the checkpoint names where it ends now
        return self._index.compacted_copy(
            ledger_offset=ledger.size, head_seq=ledger.head_seq, head_hash=ledger.head_hash
        )

    def _last_pass(self) -> None:
        """Debris (torn and damaged ledger lines, views kept aside), the frozen prompts, what turns appended."""
        if not self.scrub:
            return
        ledger = self._ledger.path
        scrub_file(ledger.with_name(ledger.name + TORN_SUFFIX), self.scrub, torn=True)
        copies = [ledger.with_name(ledger.name + DAMAGED_SUFFIX), *sorted(ledger.parent.glob("MEMORY.md.kept-*"))]
        # A frozen prompt is never used again (the erase moved the memory's epoch mark): scrubbed in place, it
        # keeps its epoch, so no second writer ever numbers one.
        copies += [place / CACHE_FILE for place in self._places]
        for path in copies:
            scrub_file(path, self.scrub)
        self._pass()


def _close(connections: Sequence[IndexQueries]) -> None:
    for connection in connections:
        connection.close()


def _doomed(ledger: Ledger) -> set[str]:
    """Every record an erase names (its targets, and the records about them whose content goes too)."""
    return {rid for record in ledger.erase_records() for rid in (*record.targets, *record.scrubbed)}


def _holding(ledger: Ledger) -> list[Record]:
    doomed = _doomed(ledger)
    return [record for record in ledger.with_ids(doomed) if record.content()] if doomed else []


def _erase_from_ledger(ledger: Ledger) -> int:
    doomed = _doomed(ledger)
    return ledger.erase_content(doomed) if doomed else 0
