"""The time of schedules and budget days: a clock that tests move by hand, and the person's time zone.

`ScheduleClock.real_wait` says how long to sleep for real until an instant (None: never on the wall
clock; only a poke wakes the schedule loop, which is what a hand-moved clock needs). A host started with
`HEARTH_TEST_CLOCK=<epoch seconds>` gets a `ManualClock` (and the test-only `debug.advanceClock`); without
the variable nothing of it exists, and nothing on the wire can set it.
"""

from __future__ import annotations

import logging
import os
import time
import zoneinfo
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

__all__ = ["TEST_CLOCK_ENV", "ManualClock", "ScheduleClock", "SystemScheduleClock", "clock_from_env", "zone_named"]

logger = logging.getLogger(__name__)

TEST_CLOCK_ENV = "HEARTH_TEST_CLOCK"
"""Set (to the epoch seconds the clock starts at) only by tests: the host's schedules then run on a hand-moved clock."""

MAX_REAL_WAIT = 60.0
"""The longest real sleep between checks, so a clock that jumps (a suspended laptop, NTP) is seen within a minute."""


class ScheduleClock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...

    def real_wait(self, until: float | None) -> float | None:
        """Real seconds to sleep before `until` may have come (None: wait for a poke only)."""
        ...


class SystemScheduleClock:
    def now(self) -> float:
        return time.time()

    def real_wait(self, until: float | None) -> float | None:
        if until is None:
            return MAX_REAL_WAIT
        return min(MAX_REAL_WAIT, max(0.0, until - time.time()) + 0.01)


class ManualClock:
    """A clock that stands still until it is set: for tests, the benchmark and `HEARTH_TEST_CLOCK`."""

    def __init__(self, start: float) -> None:
        self.t = start

    def now(self) -> float:
        return self.t

    def real_wait(self, until: float | None) -> float | None:
        return None

    def set(self, t: float) -> None:
        """Move to `t`; the clock never goes back."""
        self.t = max(self.t, t)


def clock_from_env(env: dict[str, str] | None = None) -> ManualClock | None:
    """The test clock `HEARTH_TEST_CLOCK` asks for, or None (production: the variable is not set)."""
    raw = (os.environ if env is None else env).get(TEST_CLOCK_ENV)
    if not raw:
        return None
    logger.warning("%s is set: schedules run on a hand-moved test clock", TEST_CLOCK_ENV)
    return ManualClock(float(raw))


def _system_zone() -> tzinfo:
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            logger.warning("TZ=%r is not a known time zone; trying /etc/localtime", name)
    localtime = Path("/etc/localtime")
    try:
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            return zoneinfo.ZoneInfo(target.split("zoneinfo/", 1)[1])
        with localtime.open("rb") as f:
            return zoneinfo.ZoneInfo.from_file(f, key="localtime")
    except (OSError, zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


def zone_named(name: str | None) -> tzinfo:
    """The zone `name` (an IANA name the settings model checked), or the system's for None."""
    if name is None:
        return _system_zone()
    return zoneinfo.ZoneInfo(name)
