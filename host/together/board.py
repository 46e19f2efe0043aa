"""A Work's task board: pure changes to its tasks, each against an expected revision.

Every change names the revision it was made against; a stale one raises `StaleRevisionError` with the
current revision and changes nothing. A change that goes through returns the new board with the revision
one higher. Task ids are `t-1`, `t-2`, ... in creation order and never reused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from host.errors import ConflictError, InvalidRequestError, NotFoundError

__all__ = ["Handoff", "Task", "Board", "StaleRevisionError", "create_task", "assign_task", "move_task", "hand_off"]

STATUSES = ("todo", "doing", "review", "blocked", "done")
HANDOFF_STATUSES = ("review", "blocked", "done")


class StaleRevisionError(ConflictError):
    """The board changed since the revision the caller saw; `data` holds the current one."""


@dataclass(frozen=True, slots=True)
class Handoff:
    by: str
    summary: str
    status: str
    deliverables: tuple[str, ...]
    at: str


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    title: str
    status: str = "todo"
    assignee: str | None = None
    handoffs: tuple[Handoff, ...] = ()


@dataclass(frozen=True, slots=True)
class Board:
    revision: int = 0
    tasks: tuple[Task, ...] = ()
    next_number: int = 1

    def task(self, task_id: str) -> Task:
        """Raises: NotFoundError for an unknown task."""
        for task in self.tasks:
            if task.task_id == task_id:
                return task
        raise NotFoundError(f"there is no task {task_id!r} on this board")


def _check(board: Board, expected: int) -> None:
    if expected != board.revision:
        raise StaleRevisionError(
            f"the board is at revision {board.revision}, not {expected}; read it again and retry",
            data={"revision": board.revision},
        )


def _put(board: Board, task: Task) -> Board:
    tasks = tuple(task if t.task_id == task.task_id else t for t in board.tasks)
    return replace(board, revision=board.revision + 1, tasks=tasks)


def create_task(board: Board, expected: int, title: str, assignee: str | None) -> tuple[Board, Task]:
    _check(board, expected)
    task = Task(f"t-{board.next_number}", title, assignee=assignee)
    grown = replace(board, revision=board.revision + 1, tasks=(*board.tasks, task), next_number=board.next_number + 1)
    return grown, task


def assign_task(board: Board, expected: int, task_id: str, assignee: str | None) -> tuple[Board, Task]:
    _check(board, expected)
    task = replace(board.task(task_id), assignee=assignee)
    return _put(board, task), task


def move_task(board: Board, expected: int, task_id: str, status: str) -> tuple[Board, Task]:
    """Raises: StaleRevisionError, NotFoundError, InvalidRequestError (an unknown status)."""
    _check(board, expected)
    if status not in STATUSES:
        raise InvalidRequestError(f"a task's status is one of {', '.join(STATUSES)}")
    task = replace(board.task(task_id), status=status)
    return _put(board, task), task


def hand_off(board: Board, expected: int, task_id: str, handoff: Handoff) -> tuple[Board, Task]:
    """Record a handoff; the task takes the handoff's status."""
    _check(board, expected)
    if handoff.status not in HANDOFF_STATUSES:
        raise InvalidRequestError(f"a handoff's status is one of {', '.join(HANDOFF_STATUSES)}")
    old = board.task(task_id)
    task = replace(old, status=handoff.status, handoffs=(*old.handoffs, handoff))
    return _put(board, task), task
