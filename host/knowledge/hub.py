"""The host's knowledge bases: opened per owner, indexed on one thread, watched, searched, and told apart.

`KnowledgeHub` is what the host wires in. A base is active while its owner's knowledge is on (an agent's
`knowledge` setting; a Work's while it exists): then its folders are watched and its changes read. Off, the
base is closed: no watcher, no indexing, nothing offered, and admitting or searching is refused
(`KnowledgeOffError`); listing and removing still work, so a person can always see and take back what was
admitted. Every disk and CPU step runs off the event loop (the indexing thread, or a worker thread).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from watchfiles import Change, awatch

from host.errors import ConflictError
from host.knowledge.base import Job, KnowledgeBase, Owner
from host.knowledge.documents import document_kind
from host.knowledge.errors import (
    InadmissiblePathError,
    KnowledgeOffError,
    OverlappingSourceError,
    SourceNotFoundError,
)
from host.knowledge.indexer import Indexer, matches
from host.knowledge.overlap import overlap
from host.knowledge.search import KnowledgeHit, search_chunks
from host.knowledge.store import INDEX_FILE, ChunkRow, SourceRow, SourceSpec
from host.memory.embedder import QUERY_VECTORS, Embedder, default_embedder

__all__ = ["Admission", "KnowledgeHub", "KnowledgeStatus", "ProgressListener", "MAX_SOURCES"]

logger = logging.getLogger(__name__)

MAX_SOURCES = 100
"""Sources one base may hold."""
_PROGRESS_EVERY = 0.25  # seconds between two progress events of one base
_SYSTEM_TREES = ("/proc", "/sys", "/dev")


@dataclass(frozen=True, slots=True)
class KnowledgeStatus:
    """What a base is doing: files waiting, files read since it was last idle, chunks, vectors, watching."""

    owner: Owner
    on: bool
    queued: int
    indexed: int
    chunks: int
    embedded: int
    watching: bool

    @property
    def state(self) -> str:
        return "indexing" if self.queued else "idle"


ProgressListener = Callable[[KnowledgeStatus], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Admission:
    """What an admission gave: each path's source id, in order, and those that were admitted before it."""

    source_ids: list[str]
    already: frozenset[str]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class KnowledgeHub:
    """Args:
    data_dir: the host's data directory.
    is_on: whether an owner's knowledge is on (its agent's setting; a Work while it exists).
    on_progress: told of each base's progress (at most four times a second, and when it falls idle).
    embedder: the chunk and query embedder (default: the process's, which memory uses; None: words only).
    """

    def __init__(
        self,
        data_dir: Path,
        is_on: Callable[[Owner], bool],
        on_progress: ProgressListener | None = None,
        *,
        embedder: Embedder | None | str = "default",
    ) -> None:
        self.data_dir = data_dir
        self._is_on = is_on
        self._on_progress = on_progress
        # The process's embedder is loaded in `serve`, off the loop: the host answers before the model is ready.
        self._load_default = isinstance(embedder, str)
        self._embedder = None if isinstance(embedder, str) else embedder
        self.indexer = Indexer(self._embedder, self._from_thread, excluded=os.path.realpath(data_dir))
        self._bases: dict[str, KnowledgeBase] = {}
        self._watches: dict[str, tuple[asyncio.Task[None], asyncio.Event]] = {}
        self._watching: set[str] = set()
        self._last_sent: dict[str, float] = {}
        self._due: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: asyncio.TaskGroup | None = None

    # ---- life

    async def serve(self, owners: Callable[[], Iterable[Owner]]) -> None:
        """Activate every base that has sources and whose knowledge is on, then own the watchers until cancelled."""
        self._loop = asyncio.get_running_loop()
        if self._load_default:
            self._embedder = await asyncio.to_thread(default_embedder)
            self.indexer.adopt(self._embedder)
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                for owner in owners():
                    if (owner.directory(self.data_dir) / INDEX_FILE).exists() and self._is_on(owner):
                        await self.activate(owner)
                await asyncio.Event().wait()
        finally:
            self._tasks = None

    async def close(self) -> None:
        """Stop every watcher and the indexing thread, then close every base."""
        for stop in [stop for _, stop in self._watches.values()]:
            stop.set()
        await asyncio.gather(*(task for task, _ in self._watches.values()), return_exceptions=True)
        self._watches.clear()
        await asyncio.to_thread(self.indexer.stop)
        for base in self._bases.values():
            base.close()
        self._bases.clear()

    def _open(self, owner: Owner) -> KnowledgeBase:
        base = self._bases.get(owner.key)
        if base is None:
            base = self._bases[owner.key] = KnowledgeBase(owner, self.data_dir)
        return base

    def _active(self, owner: Owner) -> KnowledgeBase:
        if not self._is_on(owner):
            raise KnowledgeOffError(
                f"knowledge is off for {owner.id}; turn it on in the agent's settings first (ctrl+s in the shell)"
            )
        return self._open(owner)

    async def activate(self, owner: Owner) -> None:
        """Open the base, read what changed while it was closed, and watch its folders."""
        if not self._is_on(owner) or not (owner.directory(self.data_dir) / INDEX_FILE).exists():
            return
        base = self._open(owner)
        for spec in (await asyncio.to_thread(base.reader.specs)).values():
            if not spec.paused:
                self.indexer.submit(base, Job("scan", spec.source_id))
        self.indexer.nudge(base)
        await self._rewatch(base)

    async def deactivate(self, owner: Owner) -> None:
        """Knowledge was turned off (or its owner is going): no watcher, no work, the base closed."""
        base = self._bases.pop(owner.key, None)
        watch = self._watches.pop(owner.key, None)
        if watch is not None:
            watch[1].set()
            await asyncio.gather(watch[0], return_exceptions=True)
        self._watching.discard(owner.key)
        if base is not None:
            await asyncio.to_thread(self.indexer.forget, base)
            base.close()

    async def settings_changed(self, owner: Owner) -> None:
        """The owner's knowledge may have been switched on or off."""
        if self._is_on(owner):
            await self.activate(owner)
        else:
            await self.deactivate(owner)

    # ---- what is offered

    def has_sources(self, owner: Owner) -> bool:
        """Whether the owner's knowledge is on and holds at least one source (its tools are offered then)."""
        if not self._is_on(owner):
            return False
        base = self._bases.get(owner.key)
        if base is None:
            if not (owner.directory(self.data_dir) / INDEX_FILE).exists():
                return False
            base = self._open(owner)
        return base.source_count > 0

    def indexing(self, owner: Owner) -> set[str]:
        """The sources of the owner's base that have files waiting to be read (or a person's act under way)."""
        base = self._bases.get(owner.key)
        return set() if base is None else self.indexer.queued_sources(base)

    def status(self, owner: Owner) -> KnowledgeStatus:
        base = self._bases.get(owner.key)
        on = self._is_on(owner)
        if base is None:
            return KnowledgeStatus(owner, on, 0, 0, 0, 0, False)
        chunks, embedded = base.reader.counts()
        return KnowledgeStatus(owner, on, base.pending, base.indexed, chunks, embedded, owner.key in self._watching)

    # ---- a person's acts

    def refusal(self, raw: str) -> str | None:
        """Why `raw` is never admitted (not absolute, in the data dir, a system tree), or None."""
        if not raw.startswith("/") or "\x00" in raw:
            return f"{raw!r} is not an absolute path"
        path = os.path.realpath(raw)
        if _within(path, os.path.realpath(self.data_dir)):
            return f"{raw} is inside Hearth's data directory, which is never admitted"
        if any(_within(path, tree) for tree in _SYSTEM_TREES) or path == "/":
            return f"{raw} is a system tree, which is never admitted"
        return None

    def _admissible(self, raw: str) -> tuple[str, str]:
        """(canonical path, `file` or `folder`). Raises: InadmissiblePathError."""
        problem = self.refusal(raw)
        if problem is not None:
            raise InadmissiblePathError(problem)
        path = os.path.realpath(raw)
        if os.path.isdir(path):
            return path, "folder"
        if not os.path.isfile(path):
            raise InadmissiblePathError(f"{raw} is not a file or folder that exists")
        if document_kind(Path(path)) is None:
            raise InadmissiblePathError(f"{raw} is not a kind of file knowledge reads")
        return path, "file"

    async def add(self, owner: Owner, paths: list[str], pattern: str | None) -> Admission:
        """Admit files and folders; a path already admitted (with the same pattern) keeps its source.

        Raises:
            KnowledgeOffError: knowledge is off for the owner.
            InadmissiblePathError: a path cannot be admitted (nothing is admitted then).
            OverlappingSourceError: a path would read what a source of the base reads already, or the reverse
                (nothing is admitted then).
            ConflictError: the base would hold more than `MAX_SOURCES` sources.
        """
        base = self._active(owner)
        checked = [await asyncio.to_thread(self._admissible, raw) for raw in paths]
        specs = list((await asyncio.to_thread(base.reader.specs)).values())
        known = {(os.path.realpath(spec.path), spec.pattern): spec.source_id for spec in specs}
        already = frozenset(known.values())
        ids: list[str] = []
        fresh: list[SourceSpec] = []
        for raw, (path, kind) in zip(paths, checked, strict=True):
            key = (path, pattern if kind == "folder" else None)
            if key not in known:
                problem = overlap(raw, path, kind, key[1], [*specs, *fresh], self.indexer.excluded)
                if problem is not None:
                    raise OverlappingSourceError(problem)
                known[key] = f"s-{secrets.token_hex(4)}"
                fresh.append(SourceSpec(known[key], path, kind, key[1], False))
            ids.append(known[key])
        if len(specs) + len(fresh) > MAX_SOURCES:
            raise ConflictError(f"a knowledge base holds at most {MAX_SOURCES} sources")
        added_at = datetime.now(UTC).isoformat(timespec="seconds")
        jobs = [
            self.indexer.submit(base, Job("add", spec.source_id, spec.path, spec.pattern, spec.kind, added_at))
            for spec in fresh
        ]
        for job in jobs:
            await asyncio.wrap_future(job.done)
        await self._rewatch(base)
        return Admission(ids, already.intersection(ids))

    async def _spec(self, base: KnowledgeBase, source_id: str) -> SourceSpec:
        spec = (await asyncio.to_thread(base.reader.specs)).get(source_id)
        if spec is None:
            raise SourceNotFoundError(f"no source {source_id} in the knowledge of {base.owner.id}")
        return spec

    async def remove(self, owner: Owner, source_id: str) -> int:
        """Remove a source and every byte of its text, chunks and vectors; returns how many chunks went.

        Works whether knowledge is on or off. Raises: SourceNotFoundError.
        """
        base = self._open(owner)
        await self._spec(base, source_id)
        if base.closed or not self._is_on(owner):
            # An inactive base has no indexing thread of its own: the removal is run here, off the loop.
            removed = await asyncio.to_thread(base.writer.remove_source, source_id)
            await asyncio.to_thread(base.writer.purge)
            base.source_count -= 1
            self._bases.pop(owner.key, None)
            base.close()
            return len(removed)
        job = self.indexer.submit(base, Job("remove", source_id))
        count = await asyncio.wrap_future(job.done)
        await self._rewatch(base)
        return int(count) if isinstance(count, int) else 0

    async def pause(self, owner: Owner, source_id: str, paused: bool) -> None:
        """Stop (or start again) watching and reading one source; what it holds stays searchable.

        Raises: KnowledgeOffError, SourceNotFoundError.
        """
        base = self._active(owner)
        await self._spec(base, source_id)
        job = self.indexer.submit(base, Job("pause" if paused else "resume", source_id))
        await asyncio.wrap_future(job.done)
        await self._rewatch(base)

    async def sources(self, owner: Owner) -> list[SourceRow]:
        """Every source of the owner's base with its counts and failures (also when knowledge is off)."""
        base = self._bases.get(owner.key)
        if base is None:
            if not (owner.directory(self.data_dir) / INDEX_FILE).exists():
                return []
            base = self._open(owner)
            try:
                return await asyncio.to_thread(base.reader.sources)
            finally:
                if not self._is_on(owner):
                    self._bases.pop(owner.key, None)
                    base.close()
        return await asyncio.to_thread(base.reader.sources)

    async def search(self, owner: Owner, query: str, limit: int) -> list[KnowledgeHit]:
        """The chunks that best answer `query` (query embedded and index read off the loop).

        Raises: KnowledgeOffError.
        """
        base = self._active(owner)
        vector = None
        if self._embedder is not None and len(base.vectors):
            await QUERY_VECTORS.prepare(self._embedder, query)
            vector = QUERY_VECTORS.get(self._embedder, query)
        return await asyncio.to_thread(search_chunks, base.reader, base.vectors, query, limit=limit, vector=vector)

    async def read(self, owner: Owner, chunk_id: int, before: int, after: int) -> list[ChunkRow]:
        """A chunk with its neighbours in its file. Raises: KnowledgeOffError, SourceNotFoundError."""
        base = self._active(owner)
        rows = await asyncio.to_thread(base.reader.neighbours, chunk_id, before, after)
        if not rows:
            raise SourceNotFoundError(f"no chunk {chunk_id} in the knowledge of {owner.id}")
        return rows

    # ---- watching

    async def _rewatch(self, base: KnowledgeBase) -> None:
        """Watch the base's unpaused sources as they are now (a new watcher in place of the old)."""
        key = base.owner.key
        old = self._watches.pop(key, None)
        if old is not None:
            old[1].set()
            await asyncio.gather(old[0], return_exceptions=True)
        self._watching.discard(key)
        specs = [s for s in (await asyncio.to_thread(base.reader.specs)).values() if not s.paused]
        if not specs or self._tasks is None or base.closed:
            return
        stop = asyncio.Event()
        self._watches[key] = (self._tasks.create_task(self._watch(base, specs, stop)), stop)

    async def _watch(self, base: KnowledgeBase, specs: list[SourceSpec], stop: asyncio.Event) -> None:
        roots = sorted({spec.path if spec.kind == "folder" else os.path.dirname(spec.path) for spec in specs})
        roots = [root for root in roots if os.path.isdir(root)]
        if not roots:
            return
        key = base.owner.key
        try:
            async for changes in awatch(
                *roots, stop_event=stop, debounce=200, step=50, yield_on_timeout=True, rust_timeout=200
            ):
                if key not in self._watching:
                    self._watching.add(key)
                    self._from_thread(base)
                self._changed(base, specs, changes)
        except Exception:  # a watcher that fails leaves the base searchable; the next start scans it again
            logger.exception("watching the knowledge of %s failed; changes are read at the next start", key)
        finally:
            self._watching.discard(key)

    def _changed(self, base: KnowledgeBase, specs: list[SourceSpec], changes: set[tuple[Change, str]]) -> None:
        rescan: set[str] = set()
        for change, path in changes:
            for spec in specs:
                if matches(spec, path, self.indexer.excluded):
                    self.indexer.submit(
                        base, Job("drop" if change == Change.deleted else "index", spec.source_id, path)
                    )
                elif spec.kind == "folder" and _within(path, spec.path) and document_kind(Path(path)) is None:
                    rescan.add(spec.source_id)  # a folder came or went: compare the whole source
        for source_id in sorted(rescan):
            self.indexer.submit(base, Job("scan", source_id))

    # ---- progress

    def _from_thread(self, base: KnowledgeBase) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._progress_due, base)
        except RuntimeError:  # the loop has ended: nobody is listening any more
            pass

    def _progress_due(self, base: KnowledgeBase) -> None:
        key = base.owner.key
        if self._on_progress is None or self._tasks is None or key in self._due or base.closed:
            return
        assert self._loop is not None
        wait = self._last_sent.get(key, 0.0) + _PROGRESS_EVERY - self._loop.time()
        self._due.add(key)
        if base.pending == 0 or wait <= 0:
            self._tasks.create_task(self._send(base))
        else:
            self._loop.call_later(wait, lambda: self._tasks and self._tasks.create_task(self._send(base)))

    async def _send(self, base: KnowledgeBase) -> None:
        key = base.owner.key
        self._due.discard(key)
        if base.closed or self._on_progress is None or self._loop is None:
            return
        self._last_sent[key] = self._loop.time()
        try:
            chunks, embedded = await asyncio.to_thread(base.reader.counts)
        except Exception:  # a base closed meanwhile
            return
        status = KnowledgeStatus(base.owner, True, base.pending, base.indexed, chunks, embedded, key in self._watching)
        if base.pending == 0:
            base.indexed = 0  # the next burst of changes counts from zero
        await self._on_progress(status)
