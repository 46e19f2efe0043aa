"""The schedule service: fires schedules on time, and gives every firing exactly one outcome.

At each tick every firing due by now is decided: `skipped` (the agent is busy and the schedule says skip,
the day's budget is spent, the watched files did not change, or the host was down then and the schedule
says skip) or run. The decisions are appended to the firing log (fsynced) before anything is acted on;
then each run is put in its agent's inbox, and its outcome (`ran` or `failed`) is appended when the run
ends, before its inbox item leaves. At start-up, before any run, the inboxes and the log are made to agree
(`reconcile`), and after the inboxes are recovered every firing missed while the host was down follows its
schedule's rule (`recover`). Work per firing is constant: a heap of next due times, a fold of the log.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, tzinfo

from host.errors import HostError
from host.runs.scheduler import Notify, Run, RunManager
from host.schedules.book import Schedule, ScheduleBook
from host.schedules.budget import Budgets
from host.schedules.clock import ScheduleClock
from host.schedules.firings import Firing, FiringLog, firing_id
from host.schedules.timing import due_times, next_due
from host.schedules.watch import watch_print
from host.store.agents import AgentStore
from host.together.delivery import Deliveries, ItemEnd
from host.together.inbox import InboxItem, new_run_id
from host.together.work_service import WorkService, board_text
from protocol.models.schedules import FiringInfo, ScheduleFiredEvent

__all__ = ["MAX_MISSED", "ScheduleService"]

logger = logging.getLogger(__name__)

MAX_MISSED = 1000
"""Missed due times of one schedule recorded one by one; older ones are folded into the oldest record's count."""


class ScheduleService:
    """Args:
    book: the schedules.
    log: the firing log.
    store: the agent store.
    deliveries: the inboxes every run comes from.
    runs: the run manager.
    works: the Works (for a Work's schedules).
    budgets: the day's model use and its caps.
    notify: sends events to the shells.
    clock: the schedules' clock.
    zone: the person's time zone, read at each use.
    """

    def __init__(
        self,
        book: ScheduleBook,
        log: FiringLog,
        store: AgentStore,
        deliveries: Deliveries,
        runs: RunManager,
        works: WorkService,
        budgets: Budgets,
        notify: Notify,
        clock: ScheduleClock,
        zone: Callable[[], tzinfo],
    ) -> None:
        self.book = book
        self.log = log
        self._store = store
        self._deliveries = deliveries
        self._runs = runs
        self._works = works
        self._budgets = budgets
        self._notify = notify
        self.clock = clock
        self.zone = zone
        self._heap: list[tuple[float, str]] = []
        self._next: dict[str, float] = {}
        self._poke = asyncio.Event()
        self._ticking = asyncio.Lock()
        self._writing = asyncio.Lock()
        self._started_at = clock.now()
        deliveries.end_listeners.append(self.item_ended)

    # -- planning -------------------------------------------------------------------------------------------

    def next_due(self, schedule: Schedule) -> float | None:
        return self._next.get(schedule.schedule_id)

    def plan(self, schedule: Schedule, after: float | None = None) -> None:
        """(Re)compute when `schedule` is due next and wake the loop; nothing for one that is not active."""
        self._next.pop(schedule.schedule_id, None)
        if schedule.state != "active":
            return
        start = max(self.log.last_due(schedule.schedule_id) or schedule.since, schedule.since)
        due = next_due(schedule.timing, start if after is None else max(start, after), self.zone())
        if due is None:
            return
        self._next[schedule.schedule_id] = due
        heapq.heappush(self._heap, (due, schedule.schedule_id))
        self._poke.set()

    def unplan(self, schedule_id: str) -> None:
        self._next.pop(schedule_id, None)

    # -- the loop -------------------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Fire what is due, then sleep until the next due time (or a poke), until cancelled."""
        while True:
            self._poke.clear()
            await self.tick()
            wait = self.clock.real_wait(self._heap[0][0] if self._heap else None)
            try:
                async with asyncio.timeout(wait):
                    await self._poke.wait()
            except TimeoutError:
                pass

    def poke(self) -> None:
        self._poke.set()

    async def tick(self) -> list[Firing]:
        """Decide every firing due by now, write the decisions, then deliver the runs. Returns the firings."""
        async with self._ticking:
            now = self.clock.now()
            decided: list[Firing] = []
            runs: list[tuple[Schedule, Firing]] = []
            finished: list[Schedule] = []
            claimed: set[str] = set()
            while self._heap and self._heap[0][0] <= now:
                due, sid = heapq.heappop(self._heap)
                if self._next.get(sid) != due:
                    continue  # replanned since this entry was pushed
                del self._next[sid]
                schedule = self.book.get(sid)
                if schedule is None or schedule.state != "active":
                    continue
                await self._decide(schedule, now, decided, runs, claimed)
                if schedule.kind == "once":
                    finished.append(schedule)
                else:
                    self.plan(schedule, now)
            await self._write([("fire" if f.outcome is None else "end", f) for f in decided])
            for firing in decided:
                await self._announce(firing)
            for schedule, firing in runs:
                await self._deliver(schedule, firing)
            if finished:
                await self._finish(finished)
            return decided

    async def _decide(
        self,
        schedule: Schedule,
        now: float,
        decided: list[Firing],
        runs: list[tuple[Schedule, Firing]],
        claimed: set[str],
    ) -> None:
        sid = schedule.schedule_id
        after = max(self.log.last_due(sid) or schedule.since, schedule.since)
        dues, older = due_times(schedule.timing, after, now, self.zone(), MAX_MISSED)
        if not dues:
            return
        *missed, last = dues
        for index, due in enumerate(missed):
            count = 1 + (older if index == 0 else 0)
            decided.append(self._skip(schedule, due, now, "host_down", self._down_text(due, count), count))
        if last < self._started_at and schedule.missed == "skip":
            decided.append(self._skip(schedule, last, now, "host_down", self._down_text(last, 1), 1))
            return
        spent = self._budgets.spent(schedule.agent_id) or (
            self._budgets.spent(work_id=schedule.work_id) if schedule.work_id else None
        )
        if spent is not None:
            decided.append(self._skip(schedule, last, now, "budget", spent, 1))
            return
        print_now = None
        if schedule.watch is not None:
            workspace = self._store.data_dir / "agents" / schedule.agent_id / "scratch"
            print_now = await asyncio.to_thread(watch_print, workspace, schedule.watch)
            before = self.log.last_print(sid)
            if print_now is not None and before == print_now:
                decided.append(
                    self._skip(schedule, last, now, "unchanged", f"nothing under {schedule.watch} changed", 1)
                )
                return
        agent = schedule.agent_id
        busy = agent in claimed or self._busy(agent)
        if busy and schedule.when_busy == "skip":
            decided.append(self._skip(schedule, last, now, "busy", f"{agent} was busy", 1))
            return
        claimed.add(agent)
        firing = Firing(
            firing_id(sid, last), sid, agent, schedule.work_id, last, now, run_id=new_run_id(), print=print_now
        )
        decided.append(firing)
        runs.append((schedule, firing))

    def _busy(self, agent_id: str) -> bool:
        if not self._store.exists(agent_id):
            return False
        return self._runs.active_run(agent_id) is not None or bool(self._deliveries.inbox(agent_id).waiting())

    def _skip(self, schedule: Schedule, due: float, now: float, reason: str, detail: str, count: int) -> Firing:
        sid = schedule.schedule_id
        return Firing(
            firing_id(sid, due),
            sid,
            schedule.agent_id,
            schedule.work_id,
            due,
            now,
            "skipped",
            reason,
            detail,
            None,
            count,
        )

    def _down_text(self, due: float, count: int) -> str:
        more = f" (and {count - 1} earlier due times)" if count > 1 else ""
        return f"the host was not running at {self.iso(due)}{more}"

    def iso(self, t: float) -> str:
        return datetime.fromtimestamp(t, self.zone()).isoformat(timespec="seconds")

    # -- acting ---------------------------------------------------------------------------------------------

    def _item(self, schedule: Schedule, firing: Firing) -> InboxItem:
        run_id = firing.run_id or new_run_id()
        who = "proposed by you and approved by the user" if schedule.proposed_by else "set by the user"
        name = f'"{schedule.label}" ' if schedule.label else ""
        due = self.iso(firing.due)
        header = f"[scheduled run {name}({schedule.schedule_id}), due {due}; {who}, who may not be watching]"
        if schedule.work_id is None:
            return InboxItem(run_id, "schedule", f"{header}\n{schedule.message}", firing_id=firing.firing_id)
        work = self._works.works.get(schedule.work_id)
        text = f"{header}\nInstruction for this Work:\n{schedule.message}\n\n{board_text(work)}"
        return InboxItem(run_id, "work", text, work_id=schedule.work_id, firing_id=firing.firing_id)

    async def _deliver(self, schedule: Schedule, firing: Firing) -> None:
        try:
            item = self._item(schedule, firing)
            if schedule.work_id is not None:
                text = f"scheduled, to {schedule.agent_id}: {schedule.message}"
                await self._works.record(schedule.work_id, "dispatch", "schedule", text, {"runId": item.run_id})
            await self._deliveries.deliver(schedule.agent_id, item)
        except HostError as exc:  # no run was started: the outcome names none
            await self._end(replace(firing, run_id=None), "failed", None, f"no run could start: {exc.message}", None)

    async def _finish(self, schedules: list[Schedule]) -> None:
        """One-off schedules that have fired are done."""
        book = self.book.without(set())
        for schedule in schedules:
            current = self.book.get(schedule.schedule_id)
            if current is not None and current.state == "active":
                book[schedule.schedule_id] = replace(current, state="done")
        await asyncio.to_thread(self.book.save, book)

    # -- outcomes -------------------------------------------------------------------------------------------

    async def item_ended(self, item: InboxItem, reason: ItemEnd, run: Run | None) -> None:
        """Deliveries' end listener: a firing's run ended (or was dropped before it started)."""
        if item.firing_id is None:
            return
        firing = self.log.open_firing(item.firing_id)
        if firing is None:
            return
        run_id = run.run_id if run is not None else item.run_id
        if reason == "idle" and run is not None:
            await self._end(firing, "ran", None, "", run_id)
            return
        words = {"cancelled": "its run was cancelled", "stopped": "its agent was stopped or deleted"}
        detail = words.get(reason, "its run failed")
        if reason == "error" and run is not None:
            detail = self._run_error(run) or detail
        await self._end(firing, "failed", None, detail, run_id)

    def _run_error(self, run: Run) -> str:
        for index, event in enumerate(self._runs.transcript_of(run).read_backwards()):
            if index > 200:
                break
            if event.get("type") == "ended" and event.get("runId") == run.run_id:
                return str(event.get("error") or "")
        return ""

    async def _end(self, firing: Firing, outcome: str, reason: str | None, detail: str, run_id: str | None) -> None:
        ended = replace(
            firing,
            decided_at=self.clock.now(),
            outcome=outcome,
            reason=reason,
            detail=detail,
            run_id=run_id or firing.run_id,
        )
        await self._write([("end", ended)])
        await self._announce(ended)

    async def _write(self, lines: list[tuple[str, Firing]]) -> None:
        """Append to the log durably, in order (a worker thread writes; the loop never waits on the fsync)."""
        if not lines:
            return
        async with self._writing:
            await asyncio.to_thread(self.log.append, lines)

    async def _announce(self, firing: Firing) -> None:
        try:
            await self._notify("schedule.fired", ScheduleFiredEvent(firing=self.firing_info(firing)))
        except Exception:  # an announcement is a courtesy: the outcome is already on disk
            logger.exception("could not announce firing %s", firing.firing_id)

    def firing_info(self, firing: Firing) -> FiringInfo:
        return FiringInfo.model_validate(
            {
                "firingId": firing.firing_id,
                "scheduleId": firing.schedule_id,
                "agentId": firing.agent_id,
                "workId": firing.work_id,
                "due": self.iso(firing.due),
                "decidedAt": self.iso(firing.decided_at),
                "outcome": firing.outcome,
                "reason": firing.reason,
                "detail": firing.detail,
                "runId": firing.run_id,
                "count": firing.count,
            }
        )

    # -- start-up -------------------------------------------------------------------------------------------

    async def reconcile(self) -> None:
        """Once the inboxes are recovered, before they deliver: drop each inbox item whose firing already has
        its outcome (the host died between writing the outcome and letting the item go)."""
        for agent in self._store.list():
            for item in list(self._deliveries.inbox(agent.agent_id).items):
                if item.firing_id is not None and self.log.has_outcome(item.firing_id):
                    await self._deliveries.withdraw(agent.agent_id, item.run_id)
                    logger.info("%s: firing %s already has its outcome; not run again", agent.agent_id, item.firing_id)

    async def recover(self) -> None:
        """After the inboxes are recovered: deliver decided runs that never reached an inbox, plan every
        schedule, and decide what was missed while the host was down (by each schedule's rule)."""
        self._started_at = self.clock.now()
        for firing in self.log.open_firings():
            if not self._store.exists(firing.agent_id):
                await self._end(firing, "failed", None, f"{firing.agent_id} no longer exists", None)
                continue
            if any(item.firing_id == firing.firing_id for item in self._deliveries.inbox(firing.agent_id).items):
                continue
            schedule = self.book.get(firing.schedule_id)
            if schedule is None:
                await self._end(firing, "failed", None, "its schedule was removed before the run started", None)
                continue
            again = replace(firing, decided_at=self.clock.now(), run_id=new_run_id())
            await self._write([("fire", again)])
            await self._deliver(schedule, again)
        for schedule in self.book.all():
            self.plan(schedule)
        await self.tick()
