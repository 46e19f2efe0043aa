"""Work methods: `work.create/list/get/update/delete`, members, the timeline, the task board, `work.dispatch`."""

from __future__ import annotations

from host.rpc.table import ShellTable
from host.together.work_service import WorkService
from protocol.models.base import EmptyParams
from protocol.models.works import (
    BoardResult,
    TaskAssignParams,
    TaskCreateParams,
    TaskHandoffParams,
    TaskTransitionParams,
    TimelineEntry,
    WorkCreateParams,
    WorkDeleteResult,
    WorkDispatchParams,
    WorkDispatchResult,
    WorkInfo,
    WorkListResult,
    WorkMemberParams,
    WorkPostParams,
    WorkPostResult,
    WorkRef,
    WorkTimelineParams,
    WorkTimelineResult,
    WorkUpdateParams,
)

__all__ = ["register_work_methods"]


def register_work_methods(table: ShellTable, works: WorkService) -> None:
    """Add the `work.*` methods to `table`, backed by `works`."""

    async def create(p: WorkCreateParams) -> WorkInfo:
        return await works.create(p.name, p.work_id, p.description, p.members)

    async def list_works(_: EmptyParams) -> WorkListResult:
        return WorkListResult(works=works.all())

    async def get(p: WorkRef) -> WorkInfo:
        return works.get(p.work_id)

    async def update(p: WorkUpdateParams) -> WorkInfo:
        return await works.update(p.work_id, p.name, p.description)

    async def delete(p: WorkRef) -> WorkDeleteResult:
        await works.delete(p.work_id)
        return WorkDeleteResult(deleted=True)

    async def attach(p: WorkMemberParams) -> WorkInfo:
        return await works.attach(p.work_id, p.agent_id)

    async def detach(p: WorkMemberParams) -> WorkInfo:
        return await works.detach(p.work_id, p.agent_id)

    async def timeline(p: WorkTimelineParams) -> WorkTimelineResult:
        entries, has_more = works.timeline(p.work_id, p.after_seq, p.limit)
        return WorkTimelineResult(entries=[TimelineEntry.model_validate(e) for e in entries], has_more=has_more)

    async def post(p: WorkPostParams) -> WorkPostResult:
        works.get(p.work_id)
        return WorkPostResult(seq=await works.record(p.work_id, "post", "person", p.text))

    async def task_create(p: TaskCreateParams) -> BoardResult:
        task, revision = await works.create_task(p.work_id, p.title, p.assignee, p.expected_revision)
        return BoardResult(task=task, revision=revision)

    async def task_assign(p: TaskAssignParams) -> BoardResult:
        task, revision = await works.assign(p.work_id, p.task_id, p.assignee, p.expected_revision)
        return BoardResult(task=task, revision=revision)

    async def task_transition(p: TaskTransitionParams) -> BoardResult:
        task, revision = await works.transition(p.work_id, p.task_id, p.status, p.expected_revision)
        return BoardResult(task=task, revision=revision)

    async def handoff(p: TaskHandoffParams) -> BoardResult:
        task, revision = await works.handoff(
            p.work_id, "person", p.task_id, p.summary, p.status, p.deliverables, p.expected_revision
        )
        return BoardResult(task=task, revision=revision)

    async def dispatch(p: WorkDispatchParams) -> WorkDispatchResult:
        run_id, position = await works.dispatch(p.work_id, p.agent_id, p.instruction, p.task_id)
        return WorkDispatchResult(run_id=run_id, position=position)

    table.add("work.create", WorkCreateParams, create)
    table.add("work.list", EmptyParams, list_works)
    table.add("work.get", WorkRef, get)
    table.add("work.update", WorkUpdateParams, update)
    table.add("work.delete", WorkRef, delete)
    table.add("work.attach", WorkMemberParams, attach)
    table.add("work.detach", WorkMemberParams, detach)
    table.add("work.timeline", WorkTimelineParams, timeline)
    table.add("work.post", WorkPostParams, post)
    table.add("work.taskCreate", TaskCreateParams, task_create)
    table.add("work.taskAssign", TaskAssignParams, task_assign)
    table.add("work.taskTransition", TaskTransitionParams, task_transition)
    table.add("work.handoff", TaskHandoffParams, handoff)
    table.add("work.dispatch", WorkDispatchParams, dispatch)
