"""Schedule and budget methods: `schedule.add/list/get/pause/resume/approve/remove/firings`, `budget.get/set`.

`debug.advanceClock` is added only for a host whose schedules run on a test clock (`HEARTH_TEST_CLOCK` set
when it started); nothing on the wire can turn it on.
"""

from __future__ import annotations

from host.rpc.table import ShellTable
from host.schedules import Budgets, ManualClock, ScheduleDesk, ScheduleService
from host.store.agents import AgentStore
from host.together.work_service import WorkService
from protocol.models.schedules import (
    BudgetInfo,
    BudgetRef,
    BudgetSetParams,
    DebugAdvanceClockParams,
    DebugAdvanceClockResult,
    ScheduleAddParams,
    ScheduleFiringsParams,
    ScheduleFiringsResult,
    ScheduleInfo,
    ScheduleListParams,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRemoveResult,
)

__all__ = ["register_schedule_methods"]


def register_schedule_methods(
    table: ShellTable,
    desk: ScheduleDesk,
    service: ScheduleService,
    budgets: Budgets,
    store: AgentStore,
    works: WorkService,
    *,
    test_clock: ManualClock | None = None,
) -> None:
    """Add the `schedule.*` and `budget.*` methods to `table` (and `debug.advanceClock` with a test clock)."""

    async def add(p: ScheduleAddParams) -> ScheduleInfo:
        return await desk.add(p)

    async def list_schedules(p: ScheduleListParams) -> ScheduleListResult:
        return ScheduleListResult(schedules=desk.listing(p.agent_id, p.work_id))

    async def get(p: ScheduleRef) -> ScheduleInfo:
        return desk.info(desk.get(p.schedule_id))

    async def pause(p: ScheduleRef) -> ScheduleInfo:
        return await desk.pause(p.schedule_id)

    async def resume(p: ScheduleRef) -> ScheduleInfo:
        return await desk.resume(p.schedule_id)

    async def approve(p: ScheduleRef) -> ScheduleInfo:
        return await desk.approve(p.schedule_id)

    async def remove(p: ScheduleRef) -> ScheduleRemoveResult:
        return ScheduleRemoveResult(removed=await desk.remove(p.schedule_id))

    async def firings(p: ScheduleFiringsParams) -> ScheduleFiringsResult:
        return ScheduleFiringsResult(firings=desk.firings(p.schedule_id, p.limit))

    def _check(p: BudgetRef) -> None:
        if p.agent_id is not None:
            store.get(p.agent_id)
        else:
            works.works.get(p.work_id or "")

    async def budget_get(p: BudgetRef) -> BudgetInfo:
        _check(p)
        return budgets.info(p.agent_id, p.work_id)

    async def budget_set(p: BudgetSetParams) -> BudgetInfo:
        _check(p)
        return await budgets.set_limits(p.agent_id, p.work_id, p.tokens_per_day, p.requests_per_day)

    table.add("schedule.add", ScheduleAddParams, add)
    table.add("schedule.list", ScheduleListParams, list_schedules)
    table.add("schedule.get", ScheduleRef, get)
    table.add("schedule.pause", ScheduleRef, pause)
    table.add("schedule.resume", ScheduleRef, resume)
    table.add("schedule.approve", ScheduleRef, approve)
    table.add("schedule.remove", ScheduleRef, remove)
    table.add("schedule.firings", ScheduleFiringsParams, firings)
    table.add("budget.get", BudgetRef, budget_get)
    table.add("budget.set", BudgetSetParams, budget_set)
    if test_clock is None:
        return
    clock = test_clock

    async def advance(p: DebugAdvanceClockParams) -> DebugAdvanceClockResult:
        clock.set(p.to if p.to is not None else clock.now() + (p.by or 0.0))
        fired = await service.tick()
        return DebugAdvanceClockResult(now=clock.now(), fired=[service.firing_info(f) for f in fired])

    table.add("debug.advanceClock", DebugAdvanceClockParams, advance)
