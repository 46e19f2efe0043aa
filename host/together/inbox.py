"""An agent's inbox: the runs waiting for it, durable in `agents/<agentId>/inbox.json`.

A person's message, a peer's wake, a request's outcome and a Work instruction all wait here, in order,
until the agent is free. An item's message is written to the transcript when its run starts, naming the
item's run id, and the item stays until that run has ended; so one acknowledged before a crash (SIGKILL
included) is delivered when the host starts again, and one whose run had begun (its id is in its
transcript) as a new attempt under a fresh run id (`retried`): no run id is ever used twice. The file is
replaced whole (`write`) with a list made from the one last written; a file that does not parse is set
aside, never lost.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from host.errors import CorruptFileError
from host.store.atomic import fsync_dir, read_json, write_json_atomic
from host.store.transcript import utc_now
from protocol.models.together import RequestStatus
from protocol.models.transcript import UserEvent, WakeEvent

__all__ = ["INBOX_FILE", "InboxItem", "Inbox", "ItemKind", "new_run_id"]

logger = logging.getLogger(__name__)

INBOX_FILE = "inbox.json"

ItemKind = Literal["user", "wake", "answer", "work"]


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One waiting run: `run_id` is the id of its next run, or of the run that has `started`. `attempts` counts
    the runs of it that began before, each under its own id. `after_seq` is the last seq of its transcript when
    it was queued: any line of a run of it comes after, so a restart looks back no further for them."""

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
    attempts: int = 0
    after_seq: int = 0

    def retried(self) -> InboxItem:
        """The item as its next attempt: a new run id, not started."""
        return replace(self, run_id=new_run_id(), attempts=self.attempts + 1, started=False)

    def event(self) -> dict[str, Any]:
        """The transcript event that starts this item's run."""
        if self.kind in ("user", "work"):
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
        return InboxItem(**{key: raw[key] for key in InboxItem.__dataclass_fields__ if key in raw})


class Inbox:
    """The inbox file of one agent: `items` is what was last written (or read at start).

    Every change is a new list made by `pushed`, `marked`, `without` or `retried` from `items`, then given
    to `write`; the host's one writer (`Deliveries`) makes and writes them one at a time per agent, so a
    write never puts an older list over a newer one.

    Args:
        path: the `inbox.json` file (need not exist).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[InboxItem] = self._load()
        self._writing = threading.Lock()  # `write` runs in worker threads; one write at a time

    def _load(self) -> list[InboxItem]:
        try:
            raw = read_json(self.path, {"items": []})
            return [InboxItem.from_json(item) for item in raw["items"]]
        except (CorruptFileError, KeyError, TypeError) as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{utc_now().replace(':', '')}")
            self.path.replace(aside)
            fsync_dir(self.path.parent)
            logger.error("%s could not be read (%s); moved to %s, the inbox starts empty", self.path, exc, aside)
            return []

    def write(self, items: list[InboxItem]) -> None:
        """Replace the file with `items`, then make them `items` (thread-safe).

        Raises:
            StorageError: the disk refused the write; the file and `items` are as they were.
        """
        with self._writing:
            write_json_atomic(self.path, {"items": [asdict(item) for item in items]})
            self.items = items

    def waiting(self) -> list[InboxItem]:
        """Items whose run has not started, in the order they will run."""
        return [item for item in self.items if not item.started]

    def find(self, run_id: str) -> InboxItem | None:
        return next((item for item in self.items if item.run_id == run_id), None)

    def pushed(self, item: InboxItem, *, front: bool = False) -> list[InboxItem]:
        """The items with `item` added at the back, or ahead of every waiting item."""
        item = replace(item, queued_at=item.queued_at or utc_now())
        items = list(self.items)
        if front:
            items.insert(next((i for i, other in enumerate(items) if not other.started), len(items)), item)
        else:
            items.append(item)
        return items

    def marked(self, run_id: str, started: bool = True) -> list[InboxItem]:
        """The items with `run_id` marked started (or waiting again)."""
        return [replace(item, started=started) if item.run_id == run_id else item for item in self.items]

    def without(self, run_id: str) -> list[InboxItem]:
        return [item for item in self.items if item.run_id != run_id]

    def retried(self, begun: set[str]) -> list[InboxItem]:
        """After a restart: an item whose run had begun (its id in `begun`, or marked started) waits again as a
        new attempt; every other item waits again as it was."""
        return [item.retried() if item.started or item.run_id in begun else item for item in self.items]
