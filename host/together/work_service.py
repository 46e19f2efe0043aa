"""Works as the shell and the members see them: created, joined, posted to, planned and dispatched.

Every change is written before it is announced: `work.updated` carries the Work as it now stands,
`work.event` each new timeline entry. Board changes go through `host.together.board`, so a stale revision
changes nothing. A dispatched instruction runs as a Work run of the member, queued like any message; the
member's final message of that run is posted to the timeline.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from host.errors import InvalidRequestError, NotFoundError
from host.runs.scheduler import Notify, Run, RunManager
from host.store.agents import AgentStore
from host.store.transcript import utc_now
from host.together.asks import final_text
from host.together.board import Board, Handoff, Task, assign_task, create_task, hand_off, move_task
from host.together.delivery import Deliveries, ItemEnd
from host.together.inbox import InboxItem
from host.together.works import Work, WorkStore
from protocol.models.works import TimelineEntry, WorkEventEvent, WorkInfo, WorkTask, WorkUpdatedEvent

__all__ = ["WorkService", "work_info", "board_text"]

BoardChange = Callable[[Board], tuple[Board, Task]]


def _task(task: Task) -> WorkTask:
    return WorkTask.model_validate(
        {
            "taskId": task.task_id,
            "title": task.title,
            "status": task.status,
            "assignee": task.assignee,
            "handoffs": [
                {"by": h.by, "summary": h.summary, "status": h.status, "deliverables": list(h.deliverables), "at": h.at}
                for h in task.handoffs
            ],
        }
    )


def work_info(work: Work) -> WorkInfo:
    return WorkInfo(
        work_id=work.work_id,
        name=work.name,
        description=work.description,
        created_at=work.created_at,
        members=list(work.members),
        revision=work.board.revision,
        tasks=[_task(task) for task in work.board.tasks],
    )


def board_text(work: Work) -> str:
    """The board as a member reads it, with the revision a handoff must name."""
    lines = [f"Task board of {work.name!r} at revision {work.board.revision}:"]
    for task in work.board.tasks:
        who = f", assigned to {task.assignee}" if task.assignee else ""
        lines.append(f"- {task.task_id} [{task.status}] {task.title}{who}")
    if not work.board.tasks:
        lines.append("(no tasks yet)")
    return "\n".join(lines)


class WorkService:
    """Args:
    works: the Work store.
    store: the agent store (members must be agents).
    runs: the run manager (for a Work run's final message).
    deliveries: the inboxes (dispatches are queued there).
    notify: sends events to the shell.
    """

    def __init__(
        self, works: WorkStore, store: AgentStore, runs: RunManager, deliveries: Deliveries, notify: Notify
    ) -> None:
        self.works = works
        self._store = store
        self._runs = runs
        self._deliveries = deliveries
        self._notify = notify
        self.before_delete: list[Callable[[str], Awaitable[None]]] = []
        """Awaited before a Work's directory goes to the trash (its open files are closed then)."""
        deliveries.end_listeners.append(self._item_ended)

    async def _changed(self, work_id: str) -> None:
        work = work_info(self.works.get(work_id)) if self.works.exists(work_id) else None
        await self._notify("work.updated", WorkUpdatedEvent(work_id=work_id, work=work))

    async def record(self, work_id: str, kind: str, actor: str, text: str, data: dict[str, Any] | None = None) -> int:
        """Append a timeline entry and announce it; returns its seq."""
        raw = {"kind": kind, "actor": actor, "text": text, "data": data or {}}
        stored = self.works.timeline(work_id).append(raw)
        await self._notify("work.event", WorkEventEvent(work_id=work_id, entry=TimelineEntry.model_validate(stored)))
        return int(stored["seq"])

    def _check_members(self, members: list[str] | tuple[str, ...]) -> None:
        for agent_id in members:
            if not self._store.exists(agent_id):
                raise NotFoundError(f"no agent {agent_id!r}")

    async def create(self, name: str, work_id: str | None, description: str, members: list[str]) -> WorkInfo:
        self._check_members(members)
        work = self.works.create(name, work_id, description, tuple(dict.fromkeys(members)))
        await self.record(work.work_id, "created", "person", f"Work {name!r} created")
        await self._changed(work.work_id)
        return work_info(work)

    def all(self) -> list[WorkInfo]:
        return [work_info(work) for work in self.works.list()]

    def get(self, work_id: str) -> WorkInfo:
        return work_info(self.works.get(work_id))

    async def update(self, work_id: str, name: str | None, description: str | None) -> WorkInfo:
        work = self.works.get(work_id)
        changes = {k: v for k, v in (("name", name), ("description", description)) if v is not None}
        work = self.works.update(work, **changes)
        await self.record(work_id, "updated", "person", "Work details changed", {"fields": sorted(changes)})
        await self._changed(work_id)
        return work_info(work)

    async def delete(self, work_id: str) -> None:
        self.works.get(work_id)
        for hook in self.before_delete:
            await hook(work_id)
        self.works.delete(work_id)
        await self._changed(work_id)

    async def attach(self, work_id: str, agent_id: str) -> WorkInfo:
        work = self.works.get(work_id)
        self._check_members([agent_id])
        if agent_id not in work.members:
            work = self.works.update(work, members=(*work.members, agent_id))
            await self.record(work_id, "member", "person", f"{agent_id} joined", {"agentId": agent_id, "joined": True})
            await self._changed(work_id)
        return work_info(work)

    async def detach(self, work_id: str, agent_id: str) -> WorkInfo:
        work = self.works.get(work_id)
        if agent_id in work.members:
            work = self.works.update(work, members=tuple(m for m in work.members if m != agent_id))
            await self.record(work_id, "member", "person", f"{agent_id} left", {"agentId": agent_id, "joined": False})
            await self._changed(work_id)
        return work_info(work)

    async def agent_deleted(self, agent_id: str) -> None:
        for work in self.works.list():
            if agent_id in work.members:
                await self.detach(work.work_id, agent_id)

    def timeline(self, work_id: str, after_seq: int | None, limit: int) -> tuple[list[dict[str, Any]], bool]:
        self.works.get(work_id)
        entries = [e for e in self.works.timeline(work_id).read_all() if after_seq is None or e["seq"] > after_seq]
        return entries[:limit], len(entries) > limit

    async def change_board(
        self, work_id: str, actor: str, kind: str, describe: str, change: BoardChange
    ) -> tuple[Task, int]:
        """Apply one board change (raises StaleRevisionError and changes nothing when stale), then record it."""
        work = self.works.get(work_id)
        board, task = change(work.board)
        self.works.update(work, board=board)
        await self.record(work_id, kind, actor, f"{task.task_id} {describe}", {"taskId": task.task_id})
        await self._changed(work_id)
        return task, board.revision

    async def create_task(self, work_id: str, title: str, assignee: str | None, expected: int) -> tuple[WorkTask, int]:
        if assignee is not None:
            self._require_member(self.works.get(work_id), assignee)
        task, revision = await self.change_board(
            work_id, "person", "task", f"created: {title}", lambda b: create_task(b, expected, title, assignee)
        )
        return _task(task), revision

    async def assign(self, work_id: str, task_id: str, assignee: str | None, expected: int) -> tuple[WorkTask, int]:
        if assignee is not None:
            self._require_member(self.works.get(work_id), assignee)
        task, revision = await self.change_board(
            work_id,
            "person",
            "task",
            f"assigned to {assignee or 'nobody'}",
            lambda b: assign_task(b, expected, task_id, assignee),
        )
        return _task(task), revision

    async def transition(self, work_id: str, task_id: str, status: str, expected: int) -> tuple[WorkTask, int]:
        task, revision = await self.change_board(
            work_id, "person", "task", f"moved to {status}", lambda b: move_task(b, expected, task_id, status)
        )
        return _task(task), revision

    async def handoff(
        self, work_id: str, actor: str, task_id: str, summary: str, status: str, deliverables: list[str], expected: int
    ) -> tuple[WorkTask, int]:
        handoff = Handoff(actor, summary, status, tuple(deliverables), utc_now())
        task, revision = await self.change_board(
            work_id,
            actor,
            "handoff",
            f"handed off as {status}: {summary}",
            lambda b: hand_off(b, expected, task_id, handoff),
        )
        return _task(task), revision

    def _require_member(self, work: Work, agent_id: str) -> None:
        if agent_id not in work.members:
            raise InvalidRequestError(f"{agent_id} is not a member of Work {work.work_id}; attach it first")

    async def dispatch(self, work_id: str, agent_id: str, instruction: str, task_id: str | None) -> tuple[str, int]:
        """Queue `instruction` as a Work run of member `agent_id`; returns (runId, place in line)."""
        work = self.works.get(work_id)
        self._require_member(work, agent_id)
        task = work.board.task(task_id) if task_id else None
        about = f" (task {task.task_id}: {task.title})" if task else ""
        text = f"Instruction from the person for this Work{about}:\n{instruction}\n\n{board_text(work)}"
        run_id = f"run-{uuid.uuid4().hex[:12]}"
        await self.record(work_id, "dispatch", "person", f"to {agent_id}{about}: {instruction}", {"runId": run_id})
        _, position = await self._deliveries.deliver(agent_id, InboxItem(run_id, "work", text, work_id=work_id))
        return run_id, position

    async def _item_ended(self, item: InboxItem, reason: ItemEnd, run: Run | None) -> None:
        if item.kind != "work" or item.work_id is None or not self.works.exists(item.work_id) or run is None:
            return
        text = final_text(self._runs, run) if reason == "idle" else ""
        agent = run.agent_id
        if text:
            await self.record(item.work_id, "post", agent, text, {"runId": run.run_id})
        else:
            await self.record(item.work_id, "post", agent, f"(run ended: {reason})", {"runId": run.run_id})
