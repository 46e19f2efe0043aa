"""Benchmark: 50 agents, each with a schedule firing every minute, for a simulated day on a hand-moved clock.

The real schedule service, schedule book, firing log (every append fsynced) and budgets run; the inboxes
are a stand-in whose runs end at once (idle), so what is measured is the host's own work per firing:
deciding it, writing it, delivering it and writing its outcome. Checks that every firing (agents x minutes)
has exactly one outcome, in the fold and in the file read back, and prints the median work per firing in
the first hour (the baseline), in the middle and in the last hour, and the ratio of the last to the first
(flat is about 1.0x).

Run: python scripts/bench_schedules.py [--agents 50] [--hours 24] [--dir DIR]
(the default directory is in /dev/shm when there is one, so the disk's fsync time does not drown the work)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from host.runs.run import Run, RunOrigin
from host.schedules import Budgets, FiringLog, ManualClock, ScheduleBook, ScheduleDesk, ScheduleService
from host.schedules.firings import FIRINGS_FILE
from host.together.inbox import InboxItem
from protocol.models.schedules import ScheduleAddParams

T0 = 1_800_000_000.0
UTC = ZoneInfo("UTC")


class Agent:
    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id


class Store:
    """The agent store as the service sees it: every agent exists."""

    def __init__(self, data_dir: Path, agents: list[str]) -> None:
        self.data_dir = data_dir
        self._agents = agents

    def exists(self, agent_id: str) -> bool:
        return True

    def get(self, agent_id: str) -> Agent:
        return Agent(agent_id)

    def list(self) -> list[Agent]:
        return [Agent(a) for a in self._agents]


class Inbox:
    items: list[InboxItem] = []

    def waiting(self) -> list[InboxItem]:
        return []


class Deliveries:
    """Inboxes whose runs end idle the moment they are delivered."""

    def __init__(self) -> None:
        self.end_listeners: list[Any] = []
        self.delivered = 0

    def inbox(self, agent_id: str) -> Inbox:
        return Inbox()

    async def deliver(self, agent_id: str, item: InboxItem) -> tuple[int | None, int]:
        self.delivered += 1
        run = Run(item.run_id, agent_id, RunOrigin(kind="schedule", firing_id=item.firing_id))
        for listener in self.end_listeners:
            await listener(item, "idle", run)
        return 1, 0


class Runs:
    def active_run(self, agent_id: str) -> None:
        return None


async def notify(method: str, event: Any) -> None:
    return None


async def bench(agents: int, hours: int, directory: Path) -> int:
    clock = ManualClock(T0)
    names = [f"agent-{i:02d}" for i in range(agents)]
    deliveries = Deliveries()
    budgets = Budgets(directory, clock, lambda: UTC)
    store = Store(directory, names)
    service = ScheduleService(
        ScheduleBook(directory),
        FiringLog(directory),
        store,
        deliveries,
        Runs(),
        None,
        budgets,
        notify,
        clock,
        lambda: UTC,
    )
    desk = ScheduleDesk(service, store, None, notify)
    for name in names:
        await desk.add(ScheduleAddParams(agent_id=name, every_seconds=60, message="check"))
    per_firing: list[list[float]] = [[] for _ in range(hours)]
    fired = 0
    for minute in range(1, hours * 60 + 1):
        clock.set(T0 + 60 * minute)
        start = time.perf_counter()
        decided = await service.tick()
        elapsed = time.perf_counter() - start
        fired += len(decided)
        per_firing[(minute - 1) // 60].append(elapsed / max(1, len(decided)))
    expected = agents * hours * 60
    lines = [json.loads(line) for line in (directory / FIRINGS_FILE).read_text(encoding="utf-8").splitlines()]
    ends = Counter(line["id"] for line in lines if line["op"] == "end")
    outcomes = Counter(line["outcome"] for line in lines if line["op"] == "end")
    problems = []
    if fired != expected or len(ends) != expected or set(ends.values()) != {1}:
        problems.append(f"expected {expected} firings with one outcome each, got {fired} fired, {len(ends)} ended")
    if service.log.open_firings():
        problems.append(f"{len(service.log.open_firings())} firings have no outcome")
    medians = [statistics.median(hour) * 1e6 for hour in per_firing]
    middle = medians[len(medians) // 2]
    print(f"{agents} agents x {hours * 60} minutes = {expected} firings; outcomes: {dict(outcomes)}")
    print(f"work per firing, median: first hour {medians[0]:.1f} us (baseline), middle {middle:.1f} us, ", end="")
    print(f"last hour {medians[-1]:.1f} us; ratio last/first {medians[-1] / medians[0]:.2f}x")
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--dir", help="where the log is written (default: a temporary directory)")
    args = parser.parse_args()
    if args.dir:
        return asyncio.run(bench(args.agents, args.hours, Path(args.dir)))
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="hearth-bench-", dir=shm if shm.is_dir() else None) as tmp:
        return asyncio.run(bench(args.agents, args.hours, Path(tmp)))


if __name__ == "__main__":
    raise SystemExit(main())
