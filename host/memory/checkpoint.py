"""Keeping the derived index in step with the ledger: catch up from a checkpoint, or rebuild.

The index's `meta` holds a checkpoint (ledger byte offset, head seq and hash, epoch mark). Opening folds
only the records after it, so opening costs the same however long the history is; a checkpoint that does
not match the ledger (a deleted, stale or foreign index) means a rebuild from the whole ledger. Both say
when an erase is to be finished (`host.memory.erasure`), before any read.
"""

from __future__ import annotations

import logging

from host.memory.fold import MemoryState, fold
from host.memory.index import MemoryIndex
from host.memory.ledger import Ledger

__all__ = ["set_checkpoint", "catch_up", "rebuild"]

logger = logging.getLogger(__name__)


def set_checkpoint(ledger: Ledger, index: MemoryIndex, epoch_mark: int) -> None:
    """Record in the index how far into the ledger it has folded (inside the caller's transaction)."""
    index.set_meta(
        ledger_offset=ledger.size, head_seq=ledger.head_seq, head_hash=ledger.head_hash, epoch_mark=epoch_mark
    )


def catch_up(ledger: Ledger, index: MemoryIndex) -> bool:
    """Fold the records the index has not seen; rebuild when its checkpoint does not match the ledger.

    Returns:
        Whether an erase is to be finished (one was folded now, or one was cut short earlier): the caller
        then runs `finish_erasures`.
    """
    offset = int(index.meta("ledger_offset") or -1)
    if offset == 0 and ledger.head_seq == 0 and index.meta("head_seq") == "0":
        return False
    head = ledger.record_ending_at(offset) if offset > 0 else None
    if head is None or str(head.seq) != index.meta("head_seq") or head.hash != index.meta("head_hash"):
        return rebuild(ledger, index)
    saw_erase = False
    epoch_mark = int(index.meta("epoch_mark") or 0)
    with index.transaction():
        for _, record in ledger.read(offset):
            effect = fold(record, index)
            index.apply(record, effect)
            epoch_mark = record.seq if effect.bumps_epoch else epoch_mark
            saw_erase = saw_erase or record.op == "erase"
        set_checkpoint(ledger, index, epoch_mark)
    return saw_erase or index.meta("erase_pending") is not None


def rebuild(ledger: Ledger, index: MemoryIndex) -> bool:
    """Rebuild the whole index from the ledger (folded in memory, then written in one transaction).

    Returns:
        Whether the ledger holds an erase record.
    """
    state = MemoryState()
    saw_erase = False
    expired = ""
    for _, record in ledger.read():
        state.apply(record)
        saw_erase = saw_erase or record.op == "erase"
        if record.op == "expire":
            expired = max(expired, record.valid_until or "")
    index.reset()
    with index.transaction():
        index.put_facts(state.facts.values())
        index.fill_contexts(state.facts.values())
        index.put_tombstones(state.tombstones)
        if expired:
            index.set_meta(expired_through=expired)
        set_checkpoint(ledger, index, state.epoch_mark)
    logger.info("memory index %s rebuilt from %d ledger records", index.path, state.last_seq)
    return saw_erase
