"""One owner's knowledge base: its directory, its index (a writing and a reading connection), its vectors and
the work waiting for it.

An owner is an agent (`agents/<id>/knowledge/`) or a Work (`works/<id>/knowledge/`); nothing of one owner's
base is reachable from another's. A person's acts (admit, remove, pause) wait in `urgent` and go before the
files waiting to be read; each carries a future its caller awaits. Every write happens on the indexing
thread; searches read through `reader` from any thread, one at a time.
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from host.knowledge.store import INDEX_FILE, KnowledgeStore
from host.knowledge.vectors import ChunkVectors

__all__ = ["Owner", "Job", "KnowledgeBase", "JobKind"]

JobKind = Literal["add", "remove", "pause", "resume", "scan", "index", "drop"]


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose knowledge: an agent's (`kind` agent) or a Work's."""

    kind: Literal["agent", "work"]
    id: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    def directory(self, data_dir: Path) -> Path:
        return data_dir / ("agents" if self.kind == "agent" else "works") / self.id / "knowledge"


@dataclass(slots=True)
class Job:
    """One piece of work for the indexing thread; `done` is resolved with its outcome (or its error)."""

    kind: JobKind
    source_id: str
    path: str = ""
    pattern: str | None = None
    source_kind: str = "folder"
    added_at: str = ""
    done: Future[object] = field(default_factory=Future)


class KnowledgeBase:
    """Open (or create) the base of `owner` under `data_dir`."""

    def __init__(self, owner: Owner, data_dir: Path) -> None:
        self.owner = owner
        self.directory = owner.directory(data_dir)
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.writer = KnowledgeStore(self.directory / INDEX_FILE)
        self.reader = KnowledgeStore(self.directory / INDEX_FILE)
        self.vectors = ChunkVectors()
        self.vectors.load(self.reader.all_vectors())
        self.urgent: deque[Job] = deque()
        self.files: deque[Job] = deque()
        self.queued_paths: set[tuple[str, str, str]] = set()  # (kind, source, path) of the file jobs waiting
        self.unembedded = True  # chunks may lack a vector (checked on the indexing thread)
        self.embedding_failed = False
        self.indexed = 0  # files read since the base last had nothing to do
        self.working = False  # the indexing thread is on one of its jobs now
        self.source_count = len(self.reader.specs())
        self.closed = False
        self.lock = threading.Lock()

    @property
    def pending(self) -> int:
        """Jobs waiting (a person's acts and files to read), the one under way included."""
        return len(self.urgent) + len(self.files) + self.working

    def queue_file(self, job: Job) -> bool:
        """Queue a file job unless the same one already waits; False when it did."""
        key = (job.kind, job.source_id, job.path)
        if key in self.queued_paths:
            return False
        self.queued_paths.add(key)
        self.files.append(job)
        return True

    def forget_source_jobs(self, source_id: str) -> None:
        """Drop the file jobs waiting for one source (it is removed or paused)."""
        kept = deque(job for job in self.files if job.source_id != source_id)
        for job in self.files:
            if job.source_id == source_id:
                self.queued_paths.discard((job.kind, job.source_id, job.path))
                job.done.cancel()
        self.files = kept

    def close(self) -> None:
        self.closed = True
        for job in [*self.urgent, *self.files]:
            job.done.cancel()
        self.urgent.clear()
        self.files.clear()
        self.queued_paths.clear()
        self.writer.close()
        self.reader.close()
