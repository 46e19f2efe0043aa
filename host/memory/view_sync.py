"""Keeping MEMORY.md and the ledger in step, as a three-way merge that never loses a person's edit.

Every rendered view states the ledger position and instant it shows, with a digest of its body. A file that
differs from what the host last wrote is a person's edit: the view at the position it states is rebuilt
from the ledger (and checked against the digest), the difference between the two is the edit, and it is
applied to the facts as they stand now, so a line the host added since is never taken for a deletion. A
file that does not parse (empty, cut short, garbled, binary, no matching header and footer) is never
imported: it is kept aside under a new name, the person is told, and the view is rendered again. Every
render first imports a pending edit, under the store's lock, and the write swaps the new text in
atomically and gets back what it replaced, so an edit saved in between is imported rather than lost.
Rendering, like reading and writing the file, is one of the store's disk calls: it reads the index on the
worker's own connection, so a memory of any size stalls the loop for no render.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from host.memory.disk import DiskWork
from host.memory.fold import Fact
from host.memory.index import MemoryIndex
from host.memory.index_queries import IndexQueries
from host.memory.values import WriteOutcome
from host.memory.view import (
    VIEW_LINES,
    ViewEdit,
    ViewPosition,
    ViewSelection,
    body_digest,
    diff_view,
    frame_view,
    parse_view,
    read_frame,
    render_view,
    select_view,
)
from host.store.atomic import create_bytes_atomic, swap_bytes_atomic

__all__ = ["ViewSync", "ViewSource", "KEPT_SUFFIX"]

logger = logging.getLogger(__name__)

KEPT_SUFFIX = ".kept-"
"""A view that could not be imported is kept as `MEMORY.md.kept-<UTC time>` beside the new one."""

ApplyEdits = Callable[[Sequence[ViewEdit]], Awaitable[list[WriteOutcome]]]
Told = Callable[[str, str], None]
"""`told(kept_as, problem)`: the person is told a file was kept aside (an event and a log line)."""


def _same_view(data: bytes, text: str) -> bool:
    """Whether a written view and a new rendering show the same position and the same lines."""
    old = read_frame(data.decode("utf-8", errors="replace"))
    new = read_frame(text)
    return old is not None and new is not None and old[0].seq == new[0].seq and old[1] == new[1]


class ViewSource(Protocol):
    """What the view needs from the memory (`MemoryStore` provides it)."""

    @property
    def last_seq(self) -> int: ...

    def view_selection(self, limit: int, index: IndexQueries | None = None) -> tuple[ViewSelection, str]: ...

    def facts_through(self, seq: int) -> Iterable[Fact]: ...


class ViewSync:
    """MEMORY.md of one memory. `sync` runs under the store's lock.

    Args:
        path: the view file.
        index: where the text last written is remembered (so the host's own writes are recognised).
        title: the agent's id, for the heading.
        source: the memory the view shows.
        apply: applies a person's edits to memory and returns what each did.
        told: called when a file is kept aside.
        disk: runs the file's reads and writes.
    """

    def __init__(
        self,
        path: Path,
        index: MemoryIndex,
        title: str,
        source: ViewSource,
        apply: ApplyEdits,
        told: Told,
        disk: DiskWork,
    ) -> None:
        self.path = path
        self._index = index
        self._title = title
        self._source = source
        self._apply = apply
        self._told = told
        self._disk = disk
        self._busy = False

    def render(self, index: IndexQueries | None = None) -> str:
        """The view of the facts standing now, framed with its position (read through `index` when given)."""
        selection, instant = self._source.view_selection(VIEW_LINES, index)
        body = render_view(self._title, selection.standing, list(selection.proposed), selection.hidden)
        return frame_view(body, self._source.last_seq, instant)

    def base(self, position: ViewPosition) -> str | None:
        """The body of the view at `position`, rebuilt from the ledger; None when it does not match the digest."""
        selection = select_view(self._source.facts_through(position.seq), position.at, VIEW_LINES)
        body = render_view(self._title, selection.standing, list(selection.proposed), selection.hidden)
        return body if body_digest(body) == position.sha else None

    async def sync(self) -> list[WriteOutcome]:
        """Import a pending edit, then write the view; the host's own last write is not an edit.

        Returns:
            What each imported edit did.
        """
        if self._busy:
            return []  # a commit made by the import itself: the view is written once the import is done
        self._busy = True
        try:
            return await self._sync()
        finally:
            self._busy = False

    async def _sync(self) -> list[WriteOutcome]:
        outcomes: list[WriteOutcome] = []
        pending = on_disk = await self._disk(self._read)
        while True:
            if pending is not None and not self._is_own(pending):
                outcomes += await self._import(pending)
            with self._index.vectors.held():  # the worker's connection reads: nothing writes meanwhile
                text = await self._disk(lambda: self.render(self._index.reader()))
            data = text.encode("utf-8")
            if on_disk == data or (on_disk is not None and self._is_own(on_disk) and _same_view(on_disk, text)):
                # Unchanged but for the instant it was taken at: rewriting it would only wake the watcher again.
                self._remember(on_disk.decode("utf-8"))
                return outcomes
            previous = await self._disk(partial(swap_bytes_atomic, self.path, data))
            self._remember(text)
            if previous == on_disk:
                return outcomes
            # Saved by someone after it was read: import it too. Each round imports a real edit, so this ends.
            pending, on_disk = previous, data

    def _read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    def _is_own(self, data: bytes) -> bool:
        last = self._index.meta("view_text")
        return last is not None and data == last.encode("utf-8")

    def _remember(self, text: str) -> None:
        if self._index.meta("view_text") != text:
            with self._index.transaction():
                self._index.set_meta(view_text=text)

    async def _import(self, data: bytes) -> list[WriteOutcome]:
        problem, edits = self._edits(data)
        if problem is not None:
            await self._keep_aside(data, problem)
            return []
        if edits:
            logger.info("memory %s: importing %d MEMORY.md edit(s)", self._title, len(edits))
        return await self._apply(edits)

    def _edits(self, data: bytes) -> tuple[str | None, list[ViewEdit]]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return "it is not UTF-8 text", []
        if "\x00" in text:
            return "it holds binary data", []
        frame = read_frame(text)
        if frame is None:
            return "it has no matching hearth-view first and last lines (empty, cut short or not a view)", []
        position, body = frame
        if position.seq > self._source.last_seq:
            return f"it states ledger position {position.seq}, which this memory has not reached", []
        base = self.base(position)
        if base is None:
            return "the view it was edited from cannot be rebuilt from the ledger (its digest differs)", []
        return None, diff_view(parse_view(base), parse_view(body))

    def _write_kept(self, data: bytes) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        kept = self.path.with_name(f"{self.path.name}{KEPT_SUFFIX}{stamp}")
        while not create_bytes_atomic(kept, data, mode=0o600):
            kept = kept.with_name(kept.name + "-1")
        return kept

    async def _keep_aside(self, data: bytes, problem: str) -> None:
        kept = await self._disk(lambda: self._write_kept(data))
        logger.warning(
            "memory %s: MEMORY.md was not imported (%s); it is kept as %s and the view is written again",
            self._title,
            problem,
            kept.name,
        )
        self._told(kept.name, problem)
