"""Keeping MEMORY.md and the ledger in step: render the view after a change, import a person's edit of it.

`ViewSync` owns the file. The host's own writes are recognised because the file equals the text it last
wrote (kept in the index's meta); anything else is a person's edit, turned into edits by `diff_view` and
handed to the store's `apply` under the store's lock. Edits made while the host was down are imported
when the memory opens.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from host.memory.index import MemoryIndex
from host.memory.reads import MemoryReads
from host.memory.values import WriteOutcome
from host.memory.view import VIEW_LINES, ViewEdit, diff_view, parse_view, render_view
from host.store.atomic import write_bytes_atomic

__all__ = ["ViewSync", "render_current_view"]

logger = logging.getLogger(__name__)

ApplyEdits = Callable[[list[ViewEdit]], list[WriteOutcome]]


def render_current_view(reads: MemoryReads, index: MemoryIndex, title: str) -> str:
    """The MEMORY.md text for the facts standing now (the newest VIEW_LINES of each tier, the rest counted)."""
    standing, totals = reads.recent_standing(VIEW_LINES)
    proposed, waiting = index.newest_proposed(VIEW_LINES)
    shown = Counter(f.tier for f in (*standing.current, *(f for c in standing.conflicts for f in c.facts)))
    hidden = {tier: n - shown[tier] for tier, n in totals.items()} | {"proposed": waiting - len(proposed)}
    return render_view(title, standing, proposed, hidden)


class ViewSync:
    """MEMORY.md of one memory. Every method runs under the store's lock.

    Args:
        path: the view file.
        index: where the last written text is remembered.
        agent_id: for log lines.
        render: the view text for the facts standing now.
        apply: applies a person's edits to memory and returns what each did.
    """

    def __init__(
        self, path: Path, index: MemoryIndex, agent_id: str, render: Callable[[], str], apply: ApplyEdits
    ) -> None:
        self.path = path
        self._index = index
        self._agent_id = agent_id
        self._render = render
        self._apply = apply

    def _read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def open(self) -> None:
        """On opening the memory: import edits made while the host was away, then render."""
        last = self._index.meta("view_text")
        on_disk = self._read()
        if last is not None and on_disk is not None and on_disk != last:
            logger.info("memory %s: importing MEMORY.md edits made while the host was away", self._agent_id)
            self._apply(diff_view(parse_view(last), parse_view(on_disk)))
        if on_disk is None or on_disk != last:
            self.write(force=True)

    def write(self, *, force: bool = False) -> None:
        """Render MEMORY.md; `force` rewrites it even when the projection did not change (after an edit)."""
        text = self._render()
        if force or self._index.meta("view_text") != text or not self.path.exists():
            write_bytes_atomic(self.path, text.encode("utf-8"))
            with self._index.transaction():
                self._index.set_meta(view_text=text)

    def import_edits(self) -> list[WriteOutcome]:
        """Import a person's edit; the host's own writes are recognised and skipped."""
        on_disk = self._read()
        last = self._index.meta("view_text")
        outcomes: list[WriteOutcome] = []
        if on_disk is not None and on_disk != last:
            outcomes = self._apply(diff_view(parse_view(last or ""), parse_view(on_disk)))
        if on_disk != last:
            self.write(force=True)
        return outcomes
