"""When a schedule is due: pure functions of its timing, an instant and the person's time zone.

`once` is due at one instant; `interval` every N seconds from its anchor (when it was made or resumed);
`cron` at each minute its five fields match, read in the zone, evaluated by `cronsim` as Debian's cron
does it across daylight saving: a time that does not exist on a spring-forward day (02:30) fires once,
at the first minute after the gap; on a fall-back day a fixed time fires once (its first occurrence),
while a field of `*` hours fires in each real hour. Instants are epoch seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Literal

from cronsim import CronSim, CronSimError

from host.errors import InvalidRequestError

__all__ = ["Timing", "check_cron", "describe_cron", "due_times", "next_due", "parse_at"]


@dataclass(frozen=True, slots=True)
class Timing:
    kind: Literal["once", "interval", "cron"]
    anchor: float
    """`once`: the instant; `interval`: the start the intervals count from; `cron`: unused."""
    every: int = 0
    cron: str = ""


def parse_at(text: str, zone: tzinfo) -> float:
    """An ISO 8601 time as epoch seconds; one without an offset is read in `zone`.

    Raises:
        InvalidRequestError: not an ISO 8601 date and time.
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidRequestError(f"{text!r} is not an ISO 8601 time such as 2026-05-01T08:00") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.timestamp()


def check_cron(expression: str) -> str:
    """The expression, normalised to single spaces, if `cronsim` can evaluate it.

    Raises:
        InvalidRequestError: not a five-field cron expression (the message says which field is wrong).
    """
    normal = " ".join(expression.split())
    try:
        next(CronSim(normal, datetime(2000, 1, 1)))
    except CronSimError as exc:
        raise InvalidRequestError(f"bad cron expression {expression!r}: {exc}") from exc
    except StopIteration as exc:
        raise InvalidRequestError(f"the cron expression {expression!r} never matches") from exc
    return normal


def describe_cron(expression: str) -> str:
    """The expression in words (`At 08:00 every day`), or the expression itself when it cannot be said."""
    try:
        return CronSim(expression, datetime(2000, 1, 1)).explain()
    except (CronSimError, ValueError):
        return expression


def _cron_after(expression: str, after: float, zone: tzinfo) -> Iterator[float]:
    try:
        for moment in CronSim(expression, datetime.fromtimestamp(after, zone)):
            yield moment.timestamp()
    except CronSimError:
        return


def next_due(timing: Timing, after: float, zone: tzinfo) -> float | None:
    """The first due instant strictly after `after` (None: it is never due again)."""
    if timing.kind == "once":
        return timing.anchor if timing.anchor > after else None
    if timing.kind == "interval":
        steps = max(1, math.floor((after - timing.anchor) / timing.every) + 1)
        return timing.anchor + steps * timing.every
    return next(_cron_after(timing.cron, after, zone), None)


def due_times(timing: Timing, after: float, until: float, zone: tzinfo, cap: int) -> tuple[list[float], int]:
    """The due instants in (`after`, `until`], oldest first, at most `cap` of them.

    Returns:
        (the newest `cap` instants, how many older ones there were besides).
    """
    if timing.kind == "interval":
        first = next_due(timing, after, zone)
        if first is None or first > until:
            return [], 0
        total = math.floor((until - first) / timing.every) + 1
        kept = min(total, cap)
        start = first + (total - kept) * timing.every
        return [start + i * timing.every for i in range(kept)], total - kept
    if timing.kind == "once":
        return ([timing.anchor], 0) if after < timing.anchor <= until else ([], 0)
    found: list[float] = []
    older = 0
    for due in _cron_after(timing.cron, after, zone):
        if due > until:
            break
        found.append(due)
        if len(found) > cap:
            found.pop(0)
            older += 1
    return found, older
