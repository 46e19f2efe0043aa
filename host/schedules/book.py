"""The schedules themselves: `<data>/schedules/schedules.json`, rewritten atomically on every change.

A schedule names its agent (and, for a Work's schedule, the Work), its timing, the message its runs start
with, what to do when the agent is busy or the host was down, and its state. `since` is when it was made,
approved or resumed: no firing is due before it, so a paused stretch is never caught up. The book is
changed only by the schedule service (one writer); a file that does not parse is set aside, never lost.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from host.errors import CorruptFileError
from host.schedules.timing import Timing
from host.store.atomic import read_json, write_json_atomic
from host.store.transcript import utc_now

__all__ = ["SCHEDULES_FILE", "Schedule", "ScheduleBook"]

logger = logging.getLogger(__name__)

SCHEDULES_FILE = Path("schedules") / "schedules.json"


@dataclass(frozen=True, slots=True)
class Schedule:
    schedule_id: str
    agent_id: str
    message: str
    kind: str
    anchor: float
    since: float
    created_at: float
    work_id: str | None = None
    label: str = ""
    at: str | None = None
    every_seconds: int | None = None
    cron: str | None = None
    when_busy: str = "skip"
    missed: str = "once"
    watch: str | None = None
    state: str = "active"
    proposed_by: str | None = None

    @property
    def timing(self) -> Timing:
        if self.kind == "once":
            return Timing("once", self.anchor)
        if self.kind == "interval":
            return Timing("interval", self.anchor, self.every_seconds or 0)
        return Timing("cron", self.anchor, cron=self.cron or "")

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Schedule:
        names = {f.name for f in fields(Schedule)}
        return Schedule(**{key: value for key, value in raw.items() if key in names})


class ScheduleBook:
    """Every schedule of every agent and Work.

    Args:
        data_dir: the host's data directory.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / SCHEDULES_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._schedules: dict[str, Schedule] = self._load()
        self._writing = threading.Lock()  # `save` runs in worker threads; one write at a time

    def _load(self) -> dict[str, Schedule]:
        try:
            raw = read_json(self.path, {"schedules": []})
            loaded = [Schedule.from_json(item) for item in raw["schedules"]]
        except (CorruptFileError, KeyError, TypeError) as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{utc_now().replace(':', '')}")
            self.path.replace(aside)
            logger.error("%s could not be read (%s); moved to %s, starting with no schedules", self.path, exc, aside)
            return {}
        return {schedule.schedule_id: schedule for schedule in loaded}

    def save(self, schedules: dict[str, Schedule]) -> None:
        """Write `schedules` as the whole book, then hold them (blocking: call it in a worker).

        Raises:
            StorageError: the disk refused the write; the book is as it was.
        """
        with self._writing:
            write_json_atomic(self.path, {"schedules": [asdict(s) for s in schedules.values()]})
            self._schedules = dict(schedules)

    def with_schedule(self, schedule: Schedule) -> dict[str, Schedule]:
        """The book with `schedule` added or replaced (not yet written)."""
        return {**self._schedules, schedule.schedule_id: schedule}

    def without(self, schedule_ids: set[str]) -> dict[str, Schedule]:
        return {sid: s for sid, s in self._schedules.items() if sid not in schedule_ids}

    def get(self, schedule_id: str) -> Schedule | None:
        return self._schedules.get(schedule_id)

    def all(self) -> list[Schedule]:
        return sorted(self._schedules.values(), key=lambda s: (s.created_at, s.schedule_id))
