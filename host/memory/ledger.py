"""The ledger file `memory/ledger.jsonl`: append-only, hash-chained, one JSON record per line.

One writer: an exclusive `flock` on `memory/ledger.lock` is held while the ledger is open. Every append is
written with one `write` and fsynced (in a worker thread, if the writer likes) before `advance` makes it the
head, so an acknowledged record survives a kill and readers never see an append in progress; an append that
fails (a full disk) is cut back off, so the next one never follows a fragment. On open, a torn
last line (a write cut short, never acknowledged) is moved to `ledger.jsonl.torn`, and a complete last line
that does not parse (damage) to `ledger.jsonl.damaged`, which `verify` names until a person deals with it.
`verify` reads only what was committed when it began, so a concurrent append never looks like damage. The
only rewrite is erase's: the same records with some content removed, written atomically, mode 0600; it and
the erase's searches read lines as bytes and parse only the lines they need, in the writer's worker thread.
From the moment an erase folds (`hide`) until that rewrite, readers are given those records without their
content, so no reader sees an erased fact's text after the index has dropped it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import tempfile
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from host.memory.errors import LedgerWriteError, MemoryLockedError
from host.memory.records import GENESIS, Record, canonical_json, chain_hash, commitment, content_signature, seal
from host.store.durable import fsync_dir, storage_errors, write_all

__all__ = ["Ledger", "Appended", "VerifyReport", "verify_records", "TORN_SUFFIX", "DAMAGED_SUFFIX"]

logger = logging.getLogger(__name__)

_TAIL_CHUNK = 64 * 1024
_BLOCK = 1 << 20
TORN_SUFFIX = ".torn"
"""Bytes of a last line cut short (never acknowledged) go to `ledger.jsonl.torn`."""
DAMAGED_SUFFIX = ".damaged"
"""A complete last line that does not parse goes to `ledger.jsonl.damaged`; `verify` names it."""

# A record's own id in its canonical line: keys are sorted, no key before "id" holds one, and a quote inside
# a value is escaped, so each line has exactly one match.
_OWN_ID = re.compile(rb'"id":"([^"\\]+)"')
_ERASE_OP = b'"op":"erase"'
_FEW_IDS = 32


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of re-walking the chain: `first_bad_*` name the first record that fails, if any."""

    ok: bool
    count: int
    head: str
    first_bad_seq: int | None = None
    first_bad_id: str | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Appended:
    """Records written and fsynced by `Ledger.write`, and where the ledger ends after them."""

    records: tuple[Record, ...]
    end: int


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
        self._committed = self.size
        self._hidden: frozenset[str] = frozenset()
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
        if good_end != size:
            self._set_aside(good_end, size, TORN_SUFFIX, "cut a torn last line")
        head: tuple[int, str] = (0, GENESIS)
        while good_end > 0:
            start = self._line_start(good_end)
            try:
                record = Record.from_json(json.loads(os.pread(self._fd, good_end - start, start)))
            except ValueError:
                # Complete but unreadable: it may have been acknowledged, so it is kept and verify names it.
                self._set_aside(start, good_end, DAMAGED_SUFFIX, "moved a damaged last line aside")
                good_end = start
                continue
            head = (record.seq, record.hash)
            break
        return head

    def _set_aside(self, start: int, end: int, suffix: str, what: str) -> None:
        """Move bytes `start:end` (the file's tail) to the file `ledger.jsonl<suffix>` and cut them off."""
        data = os.pread(self._fd, end - start, start)
        aside = self.path.with_name(self.path.name + suffix)
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, data if data.endswith(b"\n") else data + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.ftruncate(self._fd, start)
        os.fsync(self._fd)
        self._committed = start
        logger.warning("ledger %s: %s (%d bytes), kept in %s", self.path, what, end - start, aside.name)

    def record_ending_at(self, offset: int) -> Record | None:
        """The record whose line ends exactly at byte `offset`, if there is one (a checkpoint check)."""
        if offset <= 0 or offset > self.size or os.pread(self._fd, 1, offset - 1) != b"\n":
            return None
        start = self._line_start(offset)
        try:
            return Record.from_json(json.loads(os.pread(self._fd, offset - start, start)))
        except ValueError:
            return None

    def write(self, drafts: Sequence[Record]) -> Appended:
        """Seal `drafts` onto the chain after the head, write them with one write and fsync; the head stays.

        Safe in a worker thread: it reads only the head and the committed end, which change in `advance`
        alone, called by the same writer once this has returned. Readers see nothing of it until then.

        Raises:
            LedgerWriteError: the write or its fsync failed; what was written is cut off again.
        """
        sealed: list[Record] = []
        seq, prev = self.head_seq, self.head_hash
        for draft in drafts:
            seq += 1
            record = seal(draft, seq=seq, prev=prev)
            sealed.append(record)
            prev = record.hash
        data = b"".join(_encode(record) for record in sealed)
        start = self._committed
        try:
            if self.size != start:
                os.ftruncate(self._fd, start)  # a fragment an earlier failed append could not cut off
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            os.fsync(self._fd)
        except OSError as exc:
            self._cut_back(start)
            raise LedgerWriteError(
                f"the memory could not be written ({exc.strerror or exc}); nothing was stored",
                data={"errno": exc.errno},
            ) from exc
        return Appended(tuple(sealed), start + len(data))

    def advance(self, appended: Appended) -> None:
        """Make written records the head: from now on they are acknowledged and readers see them."""
        self._committed = appended.end
        if appended.records:
            self.head_seq, self.head_hash = appended.records[-1].seq, appended.records[-1].hash

    def hide(self, ids: Collection[str]) -> None:
        """From now on, readers get the records with these ids without their content (an erase has folded)."""
        self._hidden = self._hidden | frozenset(ids)

    def _shown(self, record: Record) -> Record:
        return record.without_content() if record.id in self._hidden else record

    def _cut_back(self, start: int) -> None:
        try:
            os.ftruncate(self._fd, start)
            os.fsync(self._fd)
        except OSError:
            # Cut before the next append instead (it checks the size); a restart cuts a torn tail too.
            logger.exception("ledger %s: a failed append could not be cut back yet", self.path)

    def read(self, offset: int = 0) -> Iterator[tuple[int, Record]]:
        """Yield (end offset, record) for each acknowledged line from `offset`; unreadable ones are logged, skipped."""
        end = self._committed  # an append in progress is not read, even where it is complete on disk
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            position = offset
            for line in handle:
                position += len(line)
                if not line.endswith(b"\n") or position > end:
                    break
                try:
                    yield position, self._shown(Record.from_json(json.loads(line)))
                except ValueError:
                    logger.warning("ledger %s: skipped an unreadable line ending at byte %d", self.path, position)

    def records(self) -> Iterator[Record]:
        """Every readable record, oldest first."""
        for _, record in self.read():
            yield record

    def _parsed(self, lines: Iterable[bytes]) -> Iterator[Record]:
        for line in lines:
            try:
                yield Record.from_json(json.loads(line))
            except ValueError:
                continue  # `read` logs unreadable lines; an erase's search only skips them

    def _stored(self) -> bytes:
        """Every complete acknowledged line as it is on disk (erased content not hidden: the erase's own reads)."""
        return b"".join(block for _, block in self._blocks())

    def _blocks(self) -> Iterator[tuple[int, bytes]]:
        """The acknowledged lines as stored, in blocks of whole lines about `_BLOCK` long, with their offsets.

        An erase's searches go block by block, so no single step holds the interpreter for the whole ledger
        (the event loop's thread waits for it otherwise).
        """
        end = self._committed  # an append in progress is not read, even where it is complete on disk
        with open(self.path, "rb") as handle:
            offset, carry = 0, b""
            while offset + len(carry) < end and (chunk := handle.read(min(_BLOCK, end - offset - len(carry)))):
                data = carry + chunk
                cut = data.rfind(b"\n") + 1
                if cut:
                    yield offset, data[:cut]
                offset, carry = offset + cut, data[cut:]

    def mentioning(self, needles: Collection[str]) -> list[Record]:
        """The readable records whose line holds one of `needles` (ids, signatures), as stored: the bytes are
        searched and only the lines found are parsed."""
        found: list[Record] = []
        for _, block in self._blocks():
            spans = sorted({span for needle in needles for span in _lines_holding(block, needle.encode())})
            found += self._parsed(block[start:end] for start, end in spans)
        return found

    def erase_records(self) -> list[Record]:
        """Every erase record."""
        found: list[Record] = []
        for _, block in self._blocks():
            found += self._parsed(block[start:end] for start, end in _lines_holding(block, _ERASE_OP))
        return found

    def with_ids(self, ids: Collection[str]) -> list[Record]:
        """The readable records with one of these ids, as stored (found by their own id: the cost follows the
        ledger's length, not the number of ids)."""
        found: list[Record] = []
        for _, block in self._blocks():
            found += (r for r in self._parsed(block[a:b] for a, b in _own_lines(block, ids)) if r.id in ids)
        return found

    def _without_content(self, data: bytes, ids: Collection[str]) -> tuple[list[bytes], int]:
        """`data` (whole lines) as pieces, with the lines of these records re-encoded without their content,
        and how many lines changed."""
        pieces: list[bytes] = []
        position = changed = 0
        for start, end in _own_lines(data, ids):
            record = next(self._parsed([data[start:end]]), None)
            if record is not None and record.content():
                pieces += [data[position:start], _encode(record.without_content())]
                position, changed = end, changed + 1
        return ([*pieces, data[position:]] if changed else [data]), changed

    def erase_content(self, doomed: Collection[str]) -> int:
        """Replace the ledger by the same lines with the content of the `doomed` records removed (erase only).

        Every other line is copied as it is; the new file is written atomically and is private (0600) like the
        one it replaces. Readers that opened the old file read it to its end.

        Returns:
            How many records lost their content (0: nothing was left, and nothing was written).
        """
        pieces: list[bytes] = []
        changed = 0
        for _, block in self._blocks():
            kept, count = self._without_content(block, doomed)
            pieces += kept
            changed += count
        if not changed:
            return 0
        _replace_file(self.path, pieces)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND, 0o600)
        old, self._fd = self._fd, fd  # never an unset descriptor, for a reader asking for the size meanwhile
        os.close(old)
        self._committed = sum(len(piece) for piece in pieces)
        return changed

    def committed_bytes(self) -> bytes:
        """The ledger as acknowledged so far: every complete record line, nothing of an append in progress,
        and no content of a record an erase has hidden."""
        data, hidden = self._stored(), self._hidden
        return b"".join(self._without_content(data, hidden)[0]) if hidden else data

    def verify(self) -> VerifyReport:
        """Re-walk the whole chain from disk (what was committed when it began); see `verify_records`.

        Safe in a worker thread while the owner appends: a half-appended last line is never read. A damaged
        line moved aside when the memory opened makes the report fail, naming the file it is kept in.
        """
        data = self.committed_bytes()  # cut at a newline: an erase's rewrite may have replaced the file meanwhile
        lines: list[Record | None] = []
        for line in data.splitlines():
            try:
                lines.append(Record.from_json(json.loads(line)))
            except ValueError:
                lines.append(None)
        report = verify_records(lines)
        damaged = self.path.with_name(self.path.name + DAMAGED_SUFFIX)
        if report.ok and damaged.exists() and damaged.stat().st_size:
            problem = (
                f"a damaged record line was moved to {damaged.name} when the memory opened; it may have been "
                "an acknowledged record (restore it from a backup, then remove that file)"
            )
            return VerifyReport(False, report.count, report.head, report.count + 1, None, problem)
        return report


def _replace_file(path: Path, pieces: Sequence[bytes]) -> None:
    """Replace `path` atomically by `pieces` written one after the other (private, 0600, fsynced, renamed).

    Written piece by piece rather than joined first: no single step holds the interpreter for the whole file.

    Raises:
        StorageError: the disk refused it; `path` is as it was.
    """
    with storage_errors(path, "the ledger without the erased content"):
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            try:
                os.fchmod(fd, 0o600)
                for piece in pieces:
                    write_all(fd, piece)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(name, path)
        finally:
            Path(name).unlink(missing_ok=True)
        fsync_dir(path.parent)


def _line_at(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The line of `data` (newline included) that holds the bytes start:end."""
    return data.rfind(b"\n", 0, start) + 1, (data.find(b"\n", end) + 1) or len(data)


def _lines_holding(data: bytes, needle: bytes) -> Iterator[tuple[int, int]]:
    """Each line of `data` that holds `needle`, once, in order (found by a byte search over all of it)."""
    found = data.find(needle)
    while found >= 0:
        start, end = _line_at(data, found, found + len(needle))
        yield start, end
        found = data.find(needle, end)


def _own_lines(data: bytes, ids: Collection[str]) -> list[tuple[int, int]]:
    """The line of each record of `data` whose own id is one of `ids`, in order.

    A few ids are searched for as bytes (C speed); many are matched against each line's own id.
    """
    if len(ids) <= _FEW_IDS:
        return sorted({span for rid in ids for span in _lines_holding(data, b'"id":"' + rid.encode() + b'"')})
    wanted = {rid.encode() for rid in ids}
    return [_line_at(data, m.start(), m.end()) for m in _OWN_ID.finditer(data) if m[1] in wanted]


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
