"""An agent's inbox: the runs waiting for it, durable in `agents/<agentId>/inbox.json`.

A person's message, a peer's wake, a request's outcome and a Work instruction all wait here, in order,
until the agent is free; the item's message is written to the transcript only when its run starts, so
the transcript never shows two messages answered out of order. An item stays in the file until its run
has ended, so one acknowledged before a crash (SIGKILL included) is delivered when the host starts
again. Every change rewrites the file atomically; a file that does not parse is set aside, never lost.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from host.errors import CorruptFileError
from host.store.atomic import read_json, write_json_atomic
from host.store.transcript import utc_now
from protocol.models.together import RequestStatus
from protocol.models.transcript import UserEvent, WakeEvent

__all__ = ["INBOX_FILE", "InboxItem", "Inbox", "ItemKind"]

logger = logging.getLogger(__name__)

INBOX_FILE = "inbox.json"

ItemKind = Literal["user", "wake", "answer", "work", "schedule"]


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One waiting run. `started` is set once its message is in the transcript and its run has begun."""

    run_id: str
    kind: ItemKind
    text: str
    from_agent: str | None = None
    hops: int = 0
    request_id: str | None = None
    status: RequestStatus | None = None
    work_id: str | None = None
    started: bool = False
    queued_at: str = ""
    project_root: str | None = None
    chain_id: str | None = None
    path: tuple[str, ...] = ()
    """The agents the chain of messages reached before this item's receiver (`host.together.chains`)."""
    firing_id: str | None = None
    """The schedule firing this item's run answers (kind `schedule`, or `work` for a Work's schedule)."""

    def event(self) -> dict[str, Any]:
        """The transcript event that starts this item's run."""
        if self.kind in ("user", "work", "schedule"):
            return UserEvent(text=self.text).model_dump(mode="json")
        wake = WakeEvent(
            text=self.text,
            from_agent=self.from_agent or "",
            hops=self.hops,
            request_id=self.request_id,
            status=self.status,
        )
        return wake.model_dump(mode="json", exclude_none=True)

    @staticmethod
    def from_json(raw: dict[str, Any]) -> InboxItem:
        item = InboxItem(**{key: raw[key] for key in InboxItem.__dataclass_fields__ if key in raw})
        return replace(item, path=tuple(item.path))


class Inbox:
    """The inbox file of one agent.

    Args:
        path: the `inbox.json` file (need not exist).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[InboxItem] = self._load()
        self._writing = threading.Lock()  # `save` may run in a worker thread; one write at a time

    def _load(self) -> list[InboxItem]:
        try:
            raw = read_json(self.path, {"items": []})
            return [InboxItem.from_json(item) for item in raw["items"]]
        except (CorruptFileError, KeyError, TypeError) as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{utc_now().replace(':', '')}")
            self.path.replace(aside)
            logger.error("%s could not be read (%s); moved to %s, the inbox starts empty", self.path, exc, aside)
            return []

    def _save(self, items: list[InboxItem] | None = None) -> None:
        snapshot = list(self.items if items is None else items)
        with self._writing:
            write_json_atomic(self.path, {"items": [asdict(item) for item in snapshot]})

    def save(self) -> None:
        """Write the items as they are now (for a caller that changed them with `save=False`; thread-safe).

        Raises:
            StorageError: the disk refused the write; the file is as it was.
        """
        self._save()

    def waiting(self) -> list[InboxItem]:
        """Items whose run has not started, in the order they will run."""
        return [item for item in self.items if not item.started]

    def find(self, run_id: str) -> InboxItem | None:
        return next((item for item in self.items if item.run_id == run_id), None)

    def push(self, item: InboxItem, *, front: bool = False, save: bool = True) -> int:
        """Add `item` (at the back, or ahead of every waiting item) and write the file (unless `save=False`).

        Returns:
            Its place among the waiting items, from 1.
        """
        item = replace(item, queued_at=item.queued_at or utc_now())
        items = list(self.items)
        if front:
            index = next((i for i, other in enumerate(items) if not other.started), len(items))
            items.insert(index, item)
        else:
            items.append(item)
        # Only a written item is acknowledged: one the disk refused must not wait in memory and run later.
        if save:
            self._save(items)
        self.items = items
        return self.waiting().index(item) + 1

    def mark_started(self, run_id: str, started: bool = True, *, save: bool = True) -> None:
        self.items = [replace(item, started=started) if item.run_id == run_id else item for item in self.items]
        if save:
            self._save()

    def remove(self, run_id: str, *, save: bool = True) -> InboxItem | None:
        item = self.find(run_id)
        if item is not None:
            self.items = [other for other in self.items if other is not item]
            if save:
                self._save()
        return item

    def clear(self) -> list[InboxItem]:
        """Drop every item, returning them."""
        dropped, self.items = self.items, []
        if dropped:
            self._save()
        return dropped

    def restart(self) -> list[InboxItem]:
        """After a restart: a started item's run never ended, so it waits again (to be delivered once more)."""
        restarted = [item for item in self.items if item.started]
        if restarted:
            self.items = [replace(item, started=False) for item in self.items]
            self._save()
        return restarted
