"""Wire models for `work.*`: shared rooms of agents with a timeline, a task board, handoffs and dispatches.

The board has one `revision`; every board mutation names the revision it expects and a stale one is
refused with CONFLICT and `{"revision": current}` in the error's data. The timeline is append-only and
dense from seq 1. A Work's id is a slug like an agent's, so it is one safe path part.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import EmptyParams, Params, WireModel

__all__ = [
    "TaskStatus",
    "HandoffStatus",
    "WorkHandoff",
    "WorkTask",
    "WorkInfo",
    "TimelineEntry",
    "WorkCreateParams",
    "WorkRef",
    "WorkListResult",
    "WorkUpdateParams",
    "WorkDeleteResult",
    "WorkMemberParams",
    "WorkTimelineParams",
    "WorkTimelineResult",
    "WorkPostParams",
    "WorkPostResult",
    "TaskCreateParams",
    "TaskAssignParams",
    "TaskTransitionParams",
    "TaskHandoffParams",
    "BoardResult",
    "WorkDispatchParams",
    "WorkDispatchResult",
    "WorkUpdatedEvent",
    "WorkEventEvent",
    "WORK_METHODS",
    "WORK_EVENTS",
]

TaskStatus = Literal["todo", "doing", "review", "blocked", "done"]
HandoffStatus = Literal["review", "blocked", "done"]
WorkId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
TaskId = Annotated[str, Field(pattern=r"^t-[0-9]{1,6}$")]
Revision = Annotated[int, Field(ge=0, description="The board revision this change was made against.")]


class WorkHandoff(WireModel):
    """A member handing a task back: what was done, in what state, and which files hold it."""

    by: str
    summary: str
    status: HandoffStatus
    deliverables: list[str] = Field(default_factory=list)
    at: str


class WorkTask(WireModel):
    task_id: str
    title: str
    status: TaskStatus = "todo"
    assignee: str | None = None
    handoffs: list[WorkHandoff] = Field(default_factory=list)


class WorkInfo(WireModel):
    work_id: str
    name: str
    description: str = ""
    created_at: str
    members: list[str] = Field(default_factory=list)
    revision: int = 0
    tasks: list[WorkTask] = Field(default_factory=list)


class TimelineEntry(WireModel):
    """One line of a Work's timeline; `actor` is an agent id or `person`."""

    seq: int
    ts: str
    kind: Literal["created", "updated", "member", "post", "task", "handoff", "dispatch"]
    actor: str
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class WorkCreateParams(Params):
    name: str = Field(min_length=1, max_length=200)
    work_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    description: str = Field(default="", max_length=20_000)
    members: list[str] = Field(default_factory=list, max_length=64)


class WorkRef(Params):
    work_id: WorkId


class WorkListResult(WireModel):
    works: list[WorkInfo]


class WorkUpdateParams(Params):
    work_id: WorkId
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=20_000)


class WorkDeleteResult(WireModel):
    deleted: bool


class WorkMemberParams(Params):
    work_id: WorkId
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)


class WorkTimelineParams(Params):
    work_id: WorkId
    after_seq: int | None = Field(default=None, ge=0)
    limit: int = Field(default=100, ge=1, le=1000)


class WorkTimelineResult(WireModel):
    entries: list[TimelineEntry]
    has_more: bool


class WorkPostParams(Params):
    """A person's note on the timeline."""

    work_id: WorkId
    text: str = Field(min_length=1, max_length=20_000)


class WorkPostResult(WireModel):
    seq: int


class TaskCreateParams(Params):
    work_id: WorkId
    title: str = Field(min_length=1, max_length=1000)
    assignee: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    expected_revision: Revision


class TaskAssignParams(Params):
    """Assign a task to a member, or unassign it with `assignee: null`."""

    work_id: WorkId
    task_id: TaskId
    assignee: str | None = Field(pattern=AGENT_ID_PATTERN)
    expected_revision: Revision


class TaskTransitionParams(Params):
    work_id: WorkId
    task_id: TaskId
    status: TaskStatus
    expected_revision: Revision


class TaskHandoffParams(Params):
    """A handoff written by a person on a member's behalf (members use the `handoff_task` tool)."""

    work_id: WorkId
    task_id: TaskId
    summary: str = Field(min_length=1, max_length=20_000)
    status: HandoffStatus
    deliverables: list[str] = Field(default_factory=list, max_length=50)
    expected_revision: Revision


class BoardResult(WireModel):
    """The task the change touched and the board's new revision."""

    task: WorkTask
    revision: int


class WorkDispatchParams(Params):
    """Send an instruction to a member: it runs as a Work run of that agent (queued behind a busy one)."""

    work_id: WorkId
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    instruction: str = Field(min_length=1, max_length=20_000)
    task_id: TaskId | None = None


class WorkDispatchResult(WireModel):
    run_id: str
    position: int


class WorkUpdatedEvent(WireModel):
    """A Work was created, changed (members, board) or deleted (`work: null`)."""

    work_id: str
    work: WorkInfo | None


class WorkEventEvent(WireModel):
    """A new timeline entry."""

    work_id: str
    entry: TimelineEntry


WORK_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "work.create": (WorkCreateParams, WorkInfo),
    "work.list": (EmptyParams, WorkListResult),
    "work.get": (WorkRef, WorkInfo),
    "work.update": (WorkUpdateParams, WorkInfo),
    "work.delete": (WorkRef, WorkDeleteResult),
    "work.attach": (WorkMemberParams, WorkInfo),
    "work.detach": (WorkMemberParams, WorkInfo),
    "work.timeline": (WorkTimelineParams, WorkTimelineResult),
    "work.post": (WorkPostParams, WorkPostResult),
    "work.taskCreate": (TaskCreateParams, BoardResult),
    "work.taskAssign": (TaskAssignParams, BoardResult),
    "work.taskTransition": (TaskTransitionParams, BoardResult),
    "work.handoff": (TaskHandoffParams, BoardResult),
    "work.dispatch": (WorkDispatchParams, WorkDispatchResult),
}

WORK_EVENTS: dict[str, type[BaseModel]] = {
    "work.updated": WorkUpdatedEvent,
    "work.event": WorkEventEvent,
}
