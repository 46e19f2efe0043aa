"""What a person (and an agent's proposal) does with schedules: add, list, pause, resume, approve, remove.

Every change is written to the book before it takes effect and is announced as `schedule.updated`. An
agent's `propose_schedule` writes a schedule in state `proposed`, which never fires: only a person's
`schedule.approve` makes it active. A schedule's first firing is its first due time after it was made
(or approved, or resumed), so nothing is caught up from before.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace

from host.errors import InvalidRequestError, NotFoundError
from host.runs.host_tools import ArgumentsError, HostCall, parse_arguments, tool_spec
from host.runs.scheduler import Notify, RunOrigin
from host.schedules.book import Schedule
from host.schedules.service import ScheduleService
from host.schedules.timing import check_cron, parse_at
from host.schedules.watch import check_watch
from host.store.agents import Agent, AgentStore
from host.together.work_service import WorkService
from protocol.models.kernel import ToolCallResult, ToolSpec
from protocol.models.schedules import (
    SCHEDULE_TOOLS,
    FiringInfo,
    ProposeScheduleArgs,
    ScheduleAddParams,
    ScheduleInfo,
    ScheduleTiming,
    ScheduleUpdatedEvent,
)

__all__ = ["ProposeScheduleTool", "ScheduleDesk"]


class ScheduleDesk:
    """Args:
    service: the schedule service (its book, log and clock).
    store: the agent store.
    works: the Works.
    notify: sends events to the shells.
    """

    def __init__(self, service: ScheduleService, store: AgentStore, works: WorkService, notify: Notify) -> None:
        self._service = service
        self._store = store
        self._works = works
        self._notify = notify

    def info(self, schedule: Schedule) -> ScheduleInfo:
        service = self._service
        due = service.next_due(schedule)
        last = service.log.last(schedule.schedule_id)
        return ScheduleInfo.model_validate(
            {
                "scheduleId": schedule.schedule_id,
                "agentId": schedule.agent_id,
                "workId": schedule.work_id,
                "label": schedule.label,
                "message": schedule.message,
                "kind": schedule.kind,
                "at": schedule.at,
                "everySeconds": schedule.every_seconds,
                "cron": schedule.cron,
                "timeZone": str(service.zone()),
                "whenBusy": schedule.when_busy,
                "missed": schedule.missed,
                "watch": schedule.watch,
                "state": schedule.state,
                "proposedBy": schedule.proposed_by,
                "createdAt": service.iso(schedule.created_at),
                "nextDue": service.iso(due) if due is not None else None,
                "last": service.firing_info(last) if last is not None else None,
            }
        )

    def get(self, schedule_id: str) -> Schedule:
        """Raises: NotFoundError when there is no such schedule."""
        schedule = self._service.book.get(schedule_id)
        if schedule is None:
            raise NotFoundError(f"no schedule {schedule_id!r}")
        return schedule

    def listing(self, agent_id: str | None, work_id: str | None) -> list[ScheduleInfo]:
        return [
            self.info(s)
            for s in self._service.book.all()
            if (agent_id is None or s.agent_id == agent_id) and (work_id is None or s.work_id == work_id)
        ]

    def firings(self, schedule_id: str, limit: int) -> list[FiringInfo]:
        self.get(schedule_id)
        return [self._service.firing_info(f) for f in self._service.log.history(schedule_id, limit)]

    def _new(self, agent_id: str, timing: ScheduleTiming, message: str, label: str) -> Schedule:
        """A schedule from a timing, checked (raises InvalidRequestError for a bad or past time or expression)."""
        now = self._service.clock.now()
        kind, anchor, cron, at = "interval", now, None, None
        if timing.at is not None:
            kind, anchor, at = "once", parse_at(timing.at, self._service.zone()), timing.at
            if anchor <= now:
                raise InvalidRequestError(f"{timing.at} has already passed")
            at = self._service.iso(anchor)
        elif timing.cron is not None:
            kind, cron = "cron", check_cron(timing.cron)
        return Schedule(
            schedule_id=f"s-{uuid.uuid4().hex[:12]}",
            agent_id=agent_id,
            message=message,
            kind=kind,
            anchor=anchor,
            since=now,
            created_at=now,
            label=label,
            at=at,
            every_seconds=timing.every_seconds,
            cron=cron,
        )

    async def add(self, params: ScheduleAddParams) -> ScheduleInfo:
        """A person's new schedule.

        Raises:
            NotFoundError: no such agent or Work.
            InvalidRequestError: the agent is not a member of the Work, or the time or expression is bad.
        """
        self._store.get(params.agent_id)
        if params.work_id is not None:
            work = self._works.works.get(params.work_id)
            if params.agent_id not in work.members:
                raise InvalidRequestError(
                    f"{params.agent_id} is not a member of Work {params.work_id}; attach it first"
                )
        watch = check_watch(params.watch) if params.watch is not None else None
        schedule = self._new(params.agent_id, params, params.message, params.label)
        schedule = replace(
            schedule, work_id=params.work_id, when_busy=params.when_busy, missed=params.missed, watch=watch
        )
        return await self._save(schedule)

    async def propose(self, agent_id: str, args: ProposeScheduleArgs) -> Schedule:
        """An agent's proposal: written as `proposed`, it does nothing until a person approves it."""
        schedule = self._new(agent_id, args, args.message, args.label)
        schedule = replace(schedule, when_busy=args.when_busy, state="proposed", proposed_by=agent_id)
        await self._save(schedule)
        return schedule

    async def pause(self, schedule_id: str) -> ScheduleInfo:
        schedule = self.get(schedule_id)
        if schedule.state != "active":
            raise InvalidRequestError(f"schedule {schedule_id} is {schedule.state}, not active")
        return await self._save(replace(schedule, state="paused"))

    async def resume(self, schedule_id: str) -> ScheduleInfo:
        """A paused schedule fires again from now on; what fell due while it was paused is not caught up."""
        schedule = self.get(schedule_id)
        if schedule.state != "paused":
            raise InvalidRequestError(f"schedule {schedule_id} is {schedule.state}, not paused")
        return await self._save(replace(schedule, state="active", since=self._service.clock.now()))

    async def approve(self, schedule_id: str) -> ScheduleInfo:
        """A person's yes to a proposed schedule."""
        schedule = self.get(schedule_id)
        if schedule.state != "proposed":
            raise InvalidRequestError(f"schedule {schedule_id} is {schedule.state}; only a proposed one is approved")
        if schedule.kind == "once" and schedule.anchor <= self._service.clock.now():
            raise InvalidRequestError(f"schedule {schedule_id} was for {schedule.at}, which has passed")
        return await self._save(replace(schedule, state="active", since=self._service.clock.now()))

    async def remove(self, schedule_id: str) -> bool:
        """Remove a schedule; its firings stay in the log. A run it started already goes on to its outcome."""
        self.get(schedule_id)
        await self._drop({schedule_id})
        return True

    async def agent_deleted(self, agent_id: str) -> None:
        """Agent lifecycle's hook: a deleted agent's schedules go with it."""
        await self._drop({s.schedule_id for s in self._service.book.all() if s.agent_id == agent_id})

    async def _drop(self, schedule_ids: set[str]) -> None:
        if not schedule_ids:
            return
        await asyncio.to_thread(self._service.book.save, self._service.book.without(schedule_ids))
        for schedule_id in sorted(schedule_ids):
            self._service.unplan(schedule_id)
            await self._notify("schedule.updated", ScheduleUpdatedEvent(schedule_id=schedule_id, schedule=None))

    async def _save(self, schedule: Schedule) -> ScheduleInfo:
        await asyncio.to_thread(self._service.book.save, self._service.book.with_schedule(schedule))
        self._service.plan(schedule)
        info = self.info(schedule)
        await self._notify("schedule.updated", ScheduleUpdatedEvent(schedule_id=schedule.schedule_id, schedule=info))
        return info


class ProposeScheduleTool:
    """`propose_schedule` as a host-tool provider: offered in an agent's direct runs, never in a Work run."""

    def __init__(self, desk: ScheduleDesk) -> None:
        self._desk = desk
        self._specs = [tool_spec(name, model) for name, model in SCHEDULE_TOOLS.items()]

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        return [] if origin.work_id is not None else list(self._specs)

    async def call(self, call: HostCall) -> ToolCallResult:
        try:
            args = parse_arguments(ProposeScheduleArgs, call.arguments)
            schedule = await self._desk.propose(call.agent.agent_id, args)
        except (ArgumentsError, InvalidRequestError) as exc:
            message = exc.message if isinstance(exc, InvalidRequestError) else str(exc)
            return ToolCallResult(content=f"Not proposed: {message}.", is_error=True)
        return ToolCallResult(
            content=f"Proposed schedule {schedule.schedule_id}. It does nothing until the user approves it "
            f"(`hearth schedule {call.agent.agent_id} approve {schedule.schedule_id}`); tell the user what you "
            "proposed and why.",
            is_error=False,
        )
