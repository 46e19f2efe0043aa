"""The firing log: `<data>/schedules/firings.jsonl`, append-only, every append fsynced before it is acted on.

A firing is one due time of one schedule. It gets a `fire` line when its run is decided (then the run is
delivered), and exactly one `end` line with its outcome: `ran`, `skipped` (decided and written before
anything else happens, so a skip is never silent) or `failed`. The in-memory fold keeps what the host
needs per firing in constant work: each schedule's last due time, the firings still open, the print of
the last run's watched files and a bounded history. A torn last line is skipped and ended on the next append.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from host.store.durable import append_durably, create_durably

__all__ = ["FIRINGS_FILE", "HISTORY", "Firing", "FiringLog"]

logger = logging.getLogger(__name__)

FIRINGS_FILE = Path("schedules") / "firings.jsonl"
HISTORY = 200
"""How many of a schedule's latest firings are kept in memory (the file keeps them all)."""


@dataclass(frozen=True, slots=True)
class Firing:
    firing_id: str
    schedule_id: str
    agent_id: str
    work_id: str | None
    due: float
    decided_at: float
    outcome: str | None = None
    reason: str | None = None
    detail: str = ""
    run_id: str | None = None
    count: int = 1
    print: str | None = None
    """The fingerprint of the watched files when the run was decided (a schedule with `watch`)."""

    def line(self, op: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "op": op,
            "id": self.firing_id,
            "schedule": self.schedule_id,
            "agent": self.agent_id,
            "work": self.work_id,
            "due": self.due,
            "at": self.decided_at,
            "run": self.run_id,
        }
        if op == "fire":
            entry["print"] = self.print
        else:
            entry.update(outcome=self.outcome, reason=self.reason, detail=self.detail, count=self.count)
        return entry

    @staticmethod
    def from_line(entry: dict[str, Any]) -> Firing:
        return Firing(
            firing_id=str(entry["id"]),
            schedule_id=str(entry["schedule"]),
            agent_id=str(entry["agent"]),
            work_id=entry.get("work"),
            due=float(entry["due"]),
            decided_at=float(entry["at"]),
            outcome=entry.get("outcome"),
            reason=entry.get("reason"),
            detail=str(entry.get("detail") or ""),
            run_id=entry.get("run"),
            count=int(entry.get("count") or 1),
            print=entry.get("print"),
        )


def firing_id(schedule_id: str, due: float) -> str:
    """A firing's id: its schedule and its due second, so one due time can only ever be one firing."""
    return f"f-{schedule_id.removeprefix('s-')}-{int(due)}"


class FiringLog:
    """The log and its fold.

    Args:
        data_dir: the host's data directory.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FIRINGS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._open: dict[str, Firing] = {}
        self._ended: set[str] = set()
        self._last_due: dict[str, float] = {}
        self._last_print: dict[str, str | None] = {}
        self._history: dict[str, deque[Firing]] = {}
        self._torn = False
        self._writing = threading.Lock()  # appends run in worker threads, one at a time
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        self._torn = bool(data) and not data.endswith(b"\n")
        for number, line in enumerate(data.splitlines(), start=1):
            try:
                entry = json.loads(line)
                self._apply(entry["op"], Firing.from_line(entry))
            except (ValueError, KeyError, TypeError) as exc:
                logger.warning("%s line %d is unreadable (%s); skipped", self.path, number, exc)

    def _apply(self, op: str, firing: Firing) -> None:
        sid = firing.schedule_id
        self._last_due[sid] = max(self._last_due.get(sid, firing.due), firing.due)
        if op == "fire":
            if firing.firing_id not in self._ended:
                self._open[firing.firing_id] = firing
            return
        opened = self._open.pop(firing.firing_id, None)
        if firing.firing_id in self._ended:
            logger.warning("firing %s has a second outcome in the log; the first stands", firing.firing_id)
            return
        self._ended.add(firing.firing_id)
        if opened is not None:
            firing = replace(firing, print=opened.print)
        if firing.outcome == "ran":
            self._last_print[sid] = firing.print
        self._history.setdefault(sid, deque(maxlen=HISTORY)).append(firing)

    def append(self, lines: list[tuple[str, Firing]]) -> None:
        """Write `(op, firing)` lines in one durable append, then fold them (blocking: call it in a worker).

        Raises:
            StorageError: nothing of them was stored.
        """
        if not lines:
            return
        data = b"".join(
            json.dumps(firing.line(op), ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
            for op, firing in lines
        )
        with self._writing:
            create_durably(self.path)
            if self._torn:
                data = b"\n" + data  # end the torn line a crash left, so this one stands alone
            append_durably(self.path, data, "a schedule's firing")
            self._torn = False
        for op, firing in lines:
            self._apply(op, firing)

    def has_outcome(self, firing_id: str) -> bool:
        return firing_id in self._ended

    def known(self, firing_id: str) -> bool:
        return firing_id in self._ended or firing_id in self._open

    def open_firing(self, firing_id: str) -> Firing | None:
        """The firing if it was decided to run and has no outcome yet."""
        return self._open.get(firing_id)

    def open_firings(self) -> list[Firing]:
        return list(self._open.values())

    def last_due(self, schedule_id: str) -> float | None:
        return self._last_due.get(schedule_id)

    def last_print(self, schedule_id: str) -> str | None:
        """The watched files' print when the schedule's last run was decided (None: no run yet)."""
        return self._last_print.get(schedule_id)

    def history(self, schedule_id: str, limit: int) -> list[Firing]:
        """The latest firings, newest last: those that ended, then those still open."""
        ended = list(self._history.get(schedule_id, ()))
        pending = sorted((f for f in self._open.values() if f.schedule_id == schedule_id), key=lambda f: f.due)
        return (ended + pending)[-limit:]

    def last(self, schedule_id: str) -> Firing | None:
        items = self.history(schedule_id, 1)
        return items[-1] if items else None
