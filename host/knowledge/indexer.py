"""The indexing thread: one per host, for every open knowledge base; it lives while there is work (and `LINGER`).

It takes a person's acts first (admit, remove, pause, resume), then the files waiting to be read (round robin
between bases), then vectors for chunks that lack one, 16 at a time. A file is read into masked chunks by a
worker process (`reading.py`), then one transaction replaces what the file had; the word index has the file
at once, its vectors follow. After each job the base's `on_progress` is called (on this thread). The event
loop never waits on any of this.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from host.knowledge.base import Job, KnowledgeBase
from host.knowledge.documents import document_kind
from host.knowledge.reading import ReadingProcess, lower_priority
from host.knowledge.store import FileState, SourceSpec
from host.knowledge.vectors import passage_text
from host.memory.embedder import Embedder

__all__ = ["EMBED_BATCH", "LINGER", "SKIPPED_DIRS", "Indexer", "matches", "source_files"]

logger = logging.getLogger(__name__)

EMBED_BATCH = 16
LINGER = 10.0
"""Seconds the thread (and its reading process) waits for more work before it ends, while a base is open."""
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", ".venv", "venv"})
"""Folders never read (with every folder whose name starts with a dot)."""

Progress = Callable[[KnowledgeBase], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def matches(spec: SourceSpec, path: str, excluded: str) -> bool:
    """Whether a file belongs to a source: the file itself, or a document below the folder that fits its pattern
    (never one below `excluded`, the data directory, even in a folder that holds it)."""
    if _within(path, excluded):
        return False
    if spec.kind == "file":
        return path == spec.path
    if not _within(path, spec.path) or path == spec.path or document_kind(Path(path)) is None:
        return False
    relative = Path(path).relative_to(spec.path)
    if any(part.startswith(".") or part in SKIPPED_DIRS for part in relative.parts[:-1]):
        return False
    return spec.pattern is None or fnmatch.fnmatch(relative.name, spec.pattern)


def source_files(spec: SourceSpec, excluded: str) -> Iterator[str]:
    """The files of a source as they are on disk now (symlinks are not followed, hidden folders not read)."""
    if spec.kind == "file":
        if os.path.isfile(spec.path) and not os.path.islink(spec.path) and matches(spec, spec.path, excluded):
            yield spec.path
        return
    for folder, dirs, names in os.walk(spec.path, followlinks=False):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in SKIPPED_DIRS and not _within(os.path.join(folder, d), excluded)
        )
        for name in sorted(names):
            path = os.path.join(folder, name)
            if not os.path.islink(path) and matches(spec, path, excluded):
                yield path


class Indexer:
    """Args:
    embedder: computes chunk vectors (None: words only).
    on_progress: told (on the indexing thread) after each job of a base.
    excluded: a tree never read (the data directory).
    """

    def __init__(self, embedder: Embedder | None, on_progress: Progress, *, excluded: str) -> None:
        self.excluded = excluded
        self._embedder = embedder
        self._on_progress = on_progress
        self._bases: list[KnowledgeBase] = []
        self._wakeup = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy: KnowledgeBase | None = None
        self._current = ""  # the source of the job under way
        self._stopped = False

    @property
    def running(self) -> bool:
        """Whether the indexing thread exists now (it ends when nothing is left to do)."""
        with self._wakeup:
            return self._thread is not None

    def submit(self, base: KnowledgeBase, job: Job) -> Job:
        """Queue a job (a person's act goes first); the thread starts if it is not running."""
        with self._wakeup:
            if self._stopped or base.closed:
                job.done.cancel()
                return job
            if job.kind in ("scan", "index", "drop"):
                if not base.queue_file(job):
                    job.done.cancel()  # the same file waits already
                    return job
            else:
                base.urgent.append(job)
            if base not in self._bases:
                self._bases.append(base)
            self._start()
        return job

    def queued_sources(self, base: KnowledgeBase) -> set[str]:
        """The sources with jobs of `base` waiting or under way."""
        with self._wakeup:
            waiting = {job.source_id for job in [*base.urgent, *base.files]}
            return waiting | ({self._current} if self._busy is base and self._current else set())

    def nudge(self, base: KnowledgeBase) -> None:
        """Look for vectors to compute in `base` (after it is opened)."""
        with self._wakeup:
            if not self._stopped and not base.closed and self._embedder is not None:
                if base not in self._bases:
                    self._bases.append(base)
                self._start()

    def adopt(self, embedder: Embedder | None) -> None:
        """Compute vectors with `embedder` from now on (the process's, once it has loaded)."""
        with self._wakeup:
            self._embedder = embedder
            if self._bases and embedder is not None:
                self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="knowledge-index", daemon=True)
            self._thread.start()
        self._wakeup.notify_all()

    def forget(self, base: KnowledgeBase) -> None:
        """Drop a base's jobs and wait until the thread is done with it (before the base is closed); with no
        base left, wait until the thread and its reading process have ended."""
        with self._wakeup:
            for job in [*base.urgent, *base.files]:
                job.done.cancel()
            base.urgent.clear()
            base.files.clear()
            base.queued_paths.clear()
            if base in self._bases:
                self._bases.remove(base)
            self._wakeup.notify_all()  # a thread waiting for more work ends when no base is left
            while self._busy is base or (not self._bases and self._thread is not None):
                self._wakeup.wait()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking work and wait for the job under way (the host is stopping)."""
        with self._wakeup:
            self._stopped = True
            for base in self._bases:
                for job in [*base.urgent, *base.files]:
                    job.done.cancel()
                base.urgent.clear()
                base.files.clear()
                base.queued_paths.clear()
            self._bases.clear()
            thread = self._thread
            self._wakeup.notify_all()
        if thread is not None:
            thread.join(timeout)

    def _next(self) -> tuple[KnowledgeBase, Job | None] | None:
        """The next job (None as the job: a batch of vectors), or None when there is nothing to do."""
        with self._wakeup:
            if self._busy is not None:
                self._busy.working = False
            self._busy, self._current = None, ""
            self._wakeup.notify_all()
            if self._stopped:
                return None
            for base in self._bases:
                if base.urgent:
                    self._busy = base
                    base.working = True
                    job = base.urgent.popleft()
                    self._current = job.source_id
                    return base, job
            for base in list(self._bases):
                if base.files:
                    job = base.files.popleft()
                    base.queued_paths.discard((job.kind, job.source_id, job.path))
                    self._bases.remove(base)
                    self._bases.append(base)  # round robin: the next file comes from another base
                    self._busy = base
                    base.working = True
                    self._current = job.source_id
                    return base, job
            for base in self._bases:
                if self._embeddable(base):
                    self._busy = base
                    return base, None
            return None  # nothing left: the thread ends (`_run`), and starts again with the next job

    def _embeddable(self, base: KnowledgeBase) -> bool:
        return base.unembedded and not base.embedding_failed and self._embedder is not None

    def _has_work(self) -> bool:
        """Whether a job or a batch of vectors waits (with the lock held)."""
        return not self._stopped and any(b.urgent or b.files or self._embeddable(b) for b in self._bases)

    def _run(self) -> None:
        lower_priority()  # its SQLite writes and vectors take CPU the event loop may want more
        if self._embedder is not None:
            self._embedder.background()
        # Each thread has its own reading process: one ending never stops the next one's.
        reader = ReadingProcess()
        try:
            while True:
                self._serve(reader)
                with self._wakeup:
                    # Changes come in bursts (an editor's saves, a checkout): the thread and its worker wait
                    # a moment for the next one rather than start again for each, and end with the last base.
                    self._wakeup.wait_for(lambda: self._has_work() or self._stopped or not self._bases, LINGER)
                    if self._has_work():
                        continue
                # The worker ends before the thread says it has: no reading process outlives `running`.
                reader.stop()
                with self._wakeup:
                    if not self._has_work():  # a job submitted meanwhile found `_thread` set: serve it
                        self._thread = None
                        self._wakeup.notify_all()
                        return
        finally:
            reader.stop()
            with self._wakeup:
                if self._thread is threading.current_thread():
                    self._thread = None  # ended by a failure: the next job starts a thread again
                    self._wakeup.notify_all()

    def _serve(self, reader: ReadingProcess) -> None:
        while (taken := self._next()) is not None:
            base, job = taken
            try:
                if job is None:
                    self._embed(base)
                else:
                    result = self._do(base, job, reader)
                    if not job.done.done():
                        job.done.set_result(result)
            except Exception as exc:  # one job's failure must not end the thread or lose the others
                if job is None:
                    logger.exception("knowledge of %s: computing vectors failed", base.owner.key)
                    base.embedding_failed = True
                else:
                    logger.exception(
                        "knowledge of %s: %s %s failed", base.owner.key, job.kind, job.path or job.source_id
                    )
                    if not job.done.done():
                        job.done.set_exception(exc)
            with self._wakeup:
                # Done before it is reported, so the last report says idle and no source is still "indexing".
                base.working, self._current = False, ""
            try:
                self._on_progress(base)
            except Exception:  # a listener's failure is its own
                logger.exception("knowledge progress of %s could not be reported", base.owner.key)

    # ---- the jobs (on this thread)

    def _do(self, base: KnowledgeBase, job: Job, reader: ReadingProcess) -> object:
        writer = base.writer
        if job.kind == "add":
            writer.add_source(job.source_id, job.path, job.source_kind, job.pattern, job.added_at or _now())
            base.source_count += 1
            self._scan(base, job.source_id)
            return None
        if job.kind == "remove":
            with self._wakeup:
                base.forget_source_jobs(job.source_id)
            removed = writer.remove_source(job.source_id)
            base.vectors.drop(removed)
            writer.purge()
            base.source_count -= 1
            return len(removed)
        if job.kind in ("pause", "resume"):
            writer.set_paused(job.source_id, job.kind == "pause")
            if job.kind == "pause":
                with self._wakeup:
                    base.forget_source_jobs(job.source_id)
            else:
                self._scan(base, job.source_id)
            return None
        spec = writer.specs().get(job.source_id)
        if spec is None or spec.paused:
            return None
        if job.kind == "scan":
            self._scan(base, job.source_id)
        elif job.kind == "index":
            self._index(base, spec, job.path, reader)
        else:
            base.vectors.drop(writer.drop_file(spec.source_id, job.path))
        return None

    def _scan(self, base: KnowledgeBase, source_id: str) -> None:
        """Queue every file of the source that changed since it was read, and drop the ones gone."""
        spec = base.writer.specs().get(source_id)
        if spec is None or spec.paused:
            return
        known = base.writer.files(source_id)
        seen: set[str] = set()
        for path in source_files(spec, self.excluded):
            seen.add(path)
            state = known.get(path)
            try:
                stat = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if state is None or (state.mtime_ns, state.size) != (stat.st_mtime_ns, stat.st_size):
                self.submit(base, Job("index", source_id, path))
        for path in sorted(set(known) - seen):
            self.submit(base, Job("drop", source_id, path))
        base.writer.set_indexed(source_id, _now())

    def _index(self, base: KnowledgeBase, spec: SourceSpec, path: str, reader: ReadingProcess) -> None:
        read = reader.read(path)
        if read.gone:
            base.vectors.drop(base.writer.drop_file(spec.source_id, path))  # gone, or no longer a plain file
            return
        state = FileState(read.mtime_ns, read.size, read.reason)
        removed, _ = base.writer.replace_file(spec.source_id, path, state, read.unit, read.chunks, read.words)
        base.vectors.drop(removed)
        if read.reason is None:
            base.unembedded = True
            base.indexed += 1

    def _embed(self, base: KnowledgeBase) -> None:
        assert self._embedder is not None
        rows = base.writer.without_vectors(EMBED_BATCH)
        if not rows:
            base.unembedded = False
            return
        vectors = self._embedder.passages([passage_text(heading, text) for _, heading, text in rows])
        blobs = [(chunk_id, vectors[n].astype(np.float32).tobytes()) for n, (chunk_id, _, _) in enumerate(rows)]
        stored = set(base.writer.put_vectors(blobs))
        keep = [n for n, (chunk_id, _, _) in enumerate(rows) if chunk_id in stored]
        base.vectors.add([rows[n][0] for n in keep], vectors[keep] if keep else None)
