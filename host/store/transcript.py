"""An agent's transcript: `transcript.jsonl`, append-only, one event per line, `seq` dense from 1.

Appends are written whole and fsynced before they are acknowledged; a write the disk refuses leaves the
file as it was and the seq unused (`StorageError`). `append_async` does the same in a worker thread, in
the order the appends were asked for, so one agent's fsync never holds up the event loop. A crash can
leave only the last line torn; opening the file moves that torn tail aside (`transcript.jsonl.torn`,
fsynced before the original is cut) and keeps every complete event. Pages are read backwards from the
end, so opening and paging cost does not grow with the transcript's length; `read_after` reads only the
lines appended since a `Mark`, for a reader that keeps what it read before.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from host.store.durable import append_durably, create_durably, storage_errors

__all__ = ["Mark", "Transcript", "utc_now"]

logger = logging.getLogger(__name__)

_BLOCK = 64 * 1024


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("seq"), int) else None


@dataclass(frozen=True, slots=True)
class Mark:
    """How far a reader read a transcript file: the file (device, inode), its size read up to, its mtime then."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, stat: os.stat_result, size: int) -> Mark:
        return cls(stat.st_dev, stat.st_ino, size, stat.st_mtime_ns)

    def same_file(self, stat: os.stat_result) -> bool:
        """Whether `stat` is of this file with everything read before still there as it was read.

        Appends only grow the file: another file, a shorter one, or the same size with a newer mtime (a line
        rewritten in place) means what was read may no longer be what the file holds.
        """
        if (stat.st_dev, stat.st_ino) != (self.device, self.inode) or stat.st_size < self.size:
            return False
        return stat.st_size > self.size or stat.st_mtime_ns == self.mtime_ns


class Transcript:
    """One agent's append-only event log.

    Args:
        path: the `transcript.jsonl` file; created when missing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # one writer at a time, whichever thread it runs in
        self._order = asyncio.Lock()  # async appends reach the disk in the order they were asked for
        create_durably(path)
        with storage_errors(path, "the repair of a torn last line"):
            self._repair_torn_tail()
        self._last_seq = next((int(event["seq"]) for event in self.read_backwards()), 0)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def _repair_torn_tail(self) -> None:
        size = self.path.stat().st_size
        if size == 0:
            return
        with self.path.open("rb+") as f:
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            # Find the end of the last complete line and cut there.
            cut = self._last_newline_end(f, size)
            f.seek(cut)
            torn = f.read()
            aside_path = self.path.with_name(self.path.name + ".torn")
            create_durably(aside_path)
            # The cut bytes must be safe aside before the original loses them.
            append_durably(aside_path, torn + b"\n", "a torn last line set aside")
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())
        logger.warning("%s: moved a torn last line (%d bytes) aside after a crash", self.path, len(torn))

    @staticmethod
    def _last_newline_end(f: BinaryIO, size: int) -> int:
        end = size
        while end > 0:
            start = max(0, end - _BLOCK)
            f.seek(start)
            block = f.read(end - start)
            index = block.rfind(b"\n")
            if index >= 0:
                return start + index + 1
            end = start
        return 0

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Give `event` the next `seq` and a `ts`, write it, and fsync before returning it.

        Raises:
            StorageError: the disk refused the write; the file is as it was and the seq stays free.
        """
        with self._lock:
            return self._write(*self._encode(event, self._last_seq + 1))

    async def append_async(self, event: dict[str, Any]) -> dict[str, Any]:
        """`append` with the write and fsync in a worker thread; appends keep the order they were made in.

        Raises:
            StorageError: as `append`.
        """
        async with self._order:
            # Encoding holds the GIL, so it happens here: the worker only waits on the disk, and never keeps
            # the event loop's thread from running for a whole GIL switch interval.
            encoded = self._encode(event, self._last_seq + 1)
            return await asyncio.to_thread(self._write_next, *encoded)

    @staticmethod
    def _encode(event: dict[str, Any], seq: int) -> tuple[dict[str, Any], bytes]:
        stored = {**event, "seq": seq, "ts": event.get("ts") or utc_now()}
        return stored, json.dumps(stored, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    def _write_next(self, stored: dict[str, Any], line: bytes) -> dict[str, Any]:
        with self._lock:
            if stored["seq"] != self._last_seq + 1:  # a plain `append` came in between: take the next seq
                stored, line = self._encode(stored, self._last_seq + 1)
            return self._write(stored, line)

    def _write(self, stored: dict[str, Any], line: bytes) -> dict[str, Any]:
        append_durably(self.path, line, f"the {stored.get('type', 'new')} event")
        self._last_seq = stored["seq"]
        return stored

    def read_backwards(self, end: int | None = None) -> Iterator[dict[str, Any]]:
        """Events newest first (of the first `end` bytes, when given); a line that is not a valid event is logged
        and skipped."""
        with self.path.open("rb") as f:
            yield from self._backwards(f, f.seek(0, os.SEEK_END) if end is None else end)

    def mark(self) -> Mark:
        """The mark of the file as it is now, up to its last complete line (see `read_after`)."""
        with self.path.open("rb") as f:
            stat = os.fstat(f.fileno())
            return Mark.of(stat, self._last_newline_end(f, stat.st_size))

    def _backwards(self, f: BinaryIO, end: int) -> Iterator[dict[str, Any]]:
        """The events of the first `end` bytes of `f`, newest first."""
        remainder = b""
        while end > 0:
            start = max(0, end - _BLOCK)
            f.seek(start)
            chunk = f.read(end - start) + remainder
            lines = chunk.split(b"\n")
            remainder = lines[0] if start > 0 else b""
            complete = lines[1:] if start > 0 else lines
            for line in reversed(complete):
                if line.strip():
                    yield from self._checked(line)
            end = start

    def _checked(self, line: bytes) -> Iterator[dict[str, Any]]:
        event = _parse(line)
        if event is None:
            logger.warning("%s: skipped an unreadable line (%d bytes)", self.path, len(line))
        else:
            yield event

    def read_all(self) -> list[dict[str, Any]]:
        """Every event, oldest first."""
        return list(reversed(list(self.read_backwards())))

    def page(self, before_seq: int | None = None, limit: int = 100) -> tuple[list[dict[str, Any]], bool]:
        """Up to `limit` events with `seq < before_seq` (newest page when None), oldest first.

        Returns:
            The events and whether older ones exist.
        """
        events: list[dict[str, Any]] = []
        for event in self.read_backwards():
            if before_seq is not None and event["seq"] >= before_seq:
                continue
            if len(events) == limit:
                return list(reversed(events)), True
            events.append(event)
        return list(reversed(events)), False

    def since_last_compact(self) -> list[dict[str, Any]]:
        """The model's context: the latest `compact` (if any), then every other event after the seq it covers.

        A compaction is appended after the turn that triggered it, so events newer than its `throughSeq`
        can sit before it in the file; they are kept, in order.
        """
        return self.context_at()[0]

    def context_at(self) -> tuple[list[dict[str, Any]], Mark]:
        """`since_last_compact()` and the mark of the bytes it was read from (for `read_after`)."""
        mark = self.mark()  # up to the last complete line: one still being written is read next time
        return _since_last_compact(self.read_backwards(mark.size)), mark

    def context_backwards(self) -> Iterator[dict[str, Any]]:
        """The events of `since_last_compact()` newest first, read lazily (the `compact` where it is in the file)."""
        compact: dict[str, Any] | None = None
        for event in self.read_backwards():
            if compact is not None and event["seq"] <= compact["throughSeq"]:
                return
            if event.get("type") == "compact" and compact is None:
                compact = event
            yield event

    def context_after(self, seq: int) -> list[dict[str, Any]]:
        """The events of `since_last_compact()` with a seq above `seq`, oldest first (read back to there only)."""
        newer = list(itertools.takewhile(lambda event: int(event["seq"]) > seq, self.context_backwards()))
        newer.reverse()
        return newer

    def read_after(self, mark: Mark) -> tuple[list[dict[str, Any]], Mark] | None:
        """The complete lines appended since `mark`, oldest first, and the new mark.

        Returns:
            None when the file is not the one `mark` was taken of, or what was read before changed (see
            `Mark.same_file`): the reader must read afresh. A line still being written is left for next time.
        """
        with self.path.open("rb") as f:
            stat = os.fstat(f.fileno())
            if not mark.same_file(stat):
                return None
            f.seek(mark.size)
            data = f.read(stat.st_size - mark.size)
        complete = data[: data.rfind(b"\n") + 1]
        events = [event for line in complete.split(b"\n") if line.strip() for event in self._checked(line)]
        return events, Mark.of(stat, mark.size + len(complete))


def _since_last_compact(newest_first: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    newer: list[dict[str, Any]] = []
    compact: dict[str, Any] | None = None
    for event in newest_first:
        if compact is not None and event["seq"] <= compact["throughSeq"]:
            break
        if event.get("type") == "compact":
            if compact is None:
                compact = event
            continue
        newer.append(event)
    newer.reverse()
    return [compact, *newer] if compact is not None else newer
