"""The ledger file `memory/ledger.jsonl`: append-only, hash-chained, one JSON record per line.

One writer: an exclusive `flock` on `memory/ledger.lock` is held while the ledger is open. Every append is
written with one `write` and fsynced before it returns, so an acknowledged record survives a kill. A torn
last line (a write cut short) is cut off on open. The only rewrite is erase's: the same records with some
content removed, written to a temporary file, fsynced and renamed over the ledger.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from host.memory.errors import MemoryLockedError
from host.memory.records import GENESIS, Record, canonical_json, chain_hash, commitment, content_signature, seal
from host.store.atomic import write_bytes_atomic

__all__ = ["Ledger", "VerifyReport", "verify_records"]

logger = logging.getLogger(__name__)

_TAIL_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of re-walking the chain: `first_bad_*` name the first record that fails, if any."""

    ok: bool
    count: int
    head: str
    first_bad_seq: int | None = None
    first_bad_id: str | None = None
    problem: str | None = None


def _encode(record: Record) -> bytes:
    return (canonical_json(record.to_json()) + "\n").encode("utf-8")


class Ledger:
    """The open ledger of one agent's memory. Not thread-safe: the store serialises its writers."""

    def __init__(self, path: Path) -> None:
        """Open (creating if needed) and lock the ledger, and repair a torn last line.

        Raises:
            MemoryLockedError: another process has this ledger open.
        """
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(path.with_name("ledger.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(self._lock_fd)
            raise MemoryLockedError(f"the memory at {path.parent} is open in another process") from exc
        for stale in path.parent.glob(".ledger.jsonl.*.tmp"):
            stale.unlink()  # an erase rewrite that never reached its rename (it may hold erased text)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.head_seq, self.head_hash = self._repair_and_find_head()

    @property
    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            os.close(self._lock_fd)
            self._fd = self._lock_fd = -1

    def _line_start(self, end: int) -> int:
        """Where the line that ends at byte `end` (just past its newline, or the file's end) begins."""
        position = end - 1
        while position > 0:
            chunk_start = max(0, position - _TAIL_CHUNK)
            found = os.pread(self._fd, position - chunk_start, chunk_start).rfind(b"\n")
            if found >= 0:
                return chunk_start + found + 1
            position = chunk_start
        return 0

    def _repair_and_find_head(self) -> tuple[int, str]:
        size = self.size
        # A line is complete when it ends with a newline; whatever follows the last newline is torn.
        good_end = self._line_start(size + 1) if size else 0
        head: tuple[int, str] = (0, GENESIS)
        while good_end > 0:
            start = self._line_start(good_end)
            try:
                record = Record.from_json(json.loads(os.pread(self._fd, good_end - start, start)))
            except ValueError:
                good_end = start  # a complete but unreadable last line is a torn write too
                continue
            head = (record.seq, record.hash)
            break
        if good_end != size:
            logger.warning("ledger %s: cut a torn last line (%d bytes)", self.path, size - good_end)
            os.ftruncate(self._fd, good_end)
            os.fsync(self._fd)
        return head

    def record_ending_at(self, offset: int) -> Record | None:
        """The record whose line ends exactly at byte `offset`, if there is one (a checkpoint check)."""
        if offset <= 0 or offset > self.size or os.pread(self._fd, 1, offset - 1) != b"\n":
            return None
        start = self._line_start(offset)
        try:
            return Record.from_json(json.loads(os.pread(self._fd, offset - start, start)))
        except ValueError:
            return None

    def append(self, drafts: Sequence[Record]) -> list[Record]:
        """Seal `drafts` onto the chain, write them with one write, fsync, and return them sealed."""
        sealed: list[Record] = []
        seq, prev = self.head_seq, self.head_hash
        for draft in drafts:
            seq += 1
            record = seal(draft, seq=seq, prev=prev)
            sealed.append(record)
            prev = record.hash
        data = b"".join(_encode(record) for record in sealed)
        written = 0
        while written < len(data):
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)
        self.head_seq, self.head_hash = seq, prev
        return sealed

    def read(self, offset: int = 0) -> Iterator[tuple[int, Record]]:
        """Yield (end offset, record) for each parseable line from `offset`; bad lines are logged and skipped."""
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            position = offset
            for line in handle:
                position += len(line)
                if not line.endswith(b"\n"):
                    break
                try:
                    yield position, Record.from_json(json.loads(line))
                except ValueError:
                    logger.warning("ledger %s: skipped an unreadable line ending at byte %d", self.path, position)

    def records(self) -> Iterator[Record]:
        """Every readable record, oldest first."""
        for _, record in self.read():
            yield record

    def rewrite(self, transform: Callable[[Record], Record]) -> None:
        """Replace the ledger by the same records passed through `transform` (erase only), atomically.

        The new file is private (0600) like the one it replaces.
        """
        data = b"".join(_encode(transform(record)) for record in self.records())
        write_bytes_atomic(self.path, data, mode=0o600)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND, 0o600)

    def verify(self) -> VerifyReport:
        """Re-walk the whole chain from disk; see `verify_records`."""
        lines: list[Record | None] = []
        with open(self.path, "rb") as handle:
            for line in handle:
                try:
                    lines.append(Record.from_json(json.loads(line)))
                except ValueError:
                    lines.append(None)
        return verify_records(lines)


def verify_records(records: Sequence[Record | None]) -> VerifyReport:
    """Check seq order, `prev` links, hashes, commitments and signatures; None stands for an unreadable line.

    Content that is missing must have been removed by a later erase that names the record.

    Returns:
        A report naming the first bad record (by seq and id) and what is wrong with it.
    """
    erased_at: dict[str, int] = {}
    for record in records:
        if record is not None and record.op == "erase":
            for rid in (*record.targets, *record.scrubbed):
                erased_at.setdefault(rid, record.seq)
    prev = GENESIS
    for position, record in enumerate(records, start=1):
        if record is None:
            return VerifyReport(False, len(records), prev, position, None, "line is not a readable record")
        problem = _check(record, position, prev, erased_at)
        if problem:
            return VerifyReport(False, len(records), prev, record.seq, record.id, problem)
        prev = record.hash
    return VerifyReport(True, len(records), prev)


def _check(record: Record, position: int, prev: str, erased_at: dict[str, int]) -> str | None:
    if record.seq != position:
        return f"seq {record.seq} where {position} was expected"
    if record.prev != prev:
        return "prev does not match the previous record's hash"
    if record.hash != chain_hash(record):
        return "hash does not match the record"
    committed = dict(record.commit)
    content = record.content()
    for name, value in content.items():
        if name not in committed or record.salt is None or commitment(record.salt, value) != committed[name]:
            return f"{name} does not match its commitment"
    missing = set(committed) - set(content)
    if missing and erased_at.get(record.id, 0) <= record.seq:
        return f"{', '.join(sorted(missing))} missing without an erase"
    if record.is_fact and record.text is not None and record.sig != content_signature(record.text):
        return "signature does not match the text"
    return None
