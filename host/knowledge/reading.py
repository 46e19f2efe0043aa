"""Reading one file into chunks, in a worker process: its bytes, its parser, its chunks, the secret mask.

This is the CPU-heavy part of indexing (pure-Python parsing and the gate's patterns), so it runs in a
process of its own, at a lower scheduling priority: the host's event loop never competes with it for the
interpreter, and wins the CPU from it. `ReadingProcess` starts the worker when the indexing thread first
needs it and stops it when that thread ends, so no worker is left when there is nothing to read; the worker
imports only the reading modules. What comes back is plain values, written by the thread.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from host.knowledge.chunks import Chunk, chunk_blocks
from host.knowledge.documents import MAX_FILE_BYTES, UnreadableDocumentError, read_document
from host.knowledge.masking import mask_secrets
from host.knowledge.store import word_values

__all__ = ["READING_NICENESS", "FileRead", "ReadingProcess", "lower_priority", "read_file"]

READING_NICENESS = 10
"""How much lower than the host's the reading process's CPU priority is: the host answers first."""


@dataclass(frozen=True)
class FileRead:
    """One file as read: its mtime and size, why it could not be read (if so), its unit and its chunks
    (each with whether a secret in it was masked) with what the word index holds of each (`word_values`).
    `gone`: the file is no longer there as a plain file."""

    mtime_ns: int = 0
    size: int = 0
    reason: str | None = None
    unit: str = "line"
    chunks: tuple[tuple[Chunk, bool], ...] = ()
    words: tuple[tuple[str, str], ...] = ()
    gone: bool = False


def read_file(path: str) -> FileRead:
    """Read, parse, chunk and mask one file; never raises for what the file holds."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return FileRead(gone=True)
    with os.fdopen(fd, "rb") as file:
        stat = os.fstat(file.fileno())
        if stat.st_size > MAX_FILE_BYTES:
            reason = f"too large ({stat.st_size >> 20} MiB; the limit is {MAX_FILE_BYTES >> 20} MiB)"
            return FileRead(stat.st_mtime_ns, stat.st_size, reason)
        try:
            data = file.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            return FileRead(stat.st_mtime_ns, stat.st_size, f"could not be read ({exc.strerror})")
    try:
        document = read_document(Path(path), data)
    except UnreadableDocumentError as exc:
        return FileRead(stat.st_mtime_ns, stat.st_size, exc.reason)
    chunks = []
    for chunk in chunk_blocks(document.blocks):
        text, changed = mask_secrets(chunk.text)
        chunks.append((Chunk(text, chunk.heading, chunk.start, chunk.end) if changed else chunk, changed > 0))
    words = tuple(word_values(chunk.heading, chunk.text) for chunk, _ in chunks)
    return FileRead(stat.st_mtime_ns, stat.st_size, None, document.unit, tuple(chunks), words)


def lower_priority() -> None:
    """Lower the calling thread's CPU priority by `READING_NICENESS` (on Linux a thread has its own): the
    reading process's before its first file, the indexing thread's as it starts; the event loop wins the CPU."""
    try:
        os.nice(READING_NICENESS)
    except OSError:  # not allowed here: the work runs at the host's priority
        pass


class ReadingProcess:
    """One worker process that reads files, started on first use; `stop` ends it (used by one thread)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def read(self, path: str) -> FileRead:
        if self._pool is None:
            # Spawned, not forked: the host has threads, and a fork would copy their locks mid-use.
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=lower_priority
            )
        try:
            return self._pool.submit(read_file, path).result()
        except BrokenProcessPool:
            self.stop()  # the worker died (out of memory on a hostile file?): that file fails, a new one starts
            return FileRead(reason="the reader stopped while reading it")

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
