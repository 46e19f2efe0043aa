"""The task board: every change names the revision it expects; a stale one changes nothing."""

from __future__ import annotations

import pytest

from host.together.board import Board, Handoff, StaleRevisionError, assign_task, create_task, hand_off, move_task
from protocol.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND, JsonRpcError


def test_changes_move_the_revision_on_and_a_stale_one_is_refused_with_the_current_revision() -> None:
    board, task = create_task(Board(), 0, "Write", None)
    board, _ = assign_task(board, 1, task.task_id, "ann")
    with pytest.raises(StaleRevisionError) as stale:
        move_task(board, 1, task.task_id, "done")
    assert stale.value.code == CONFLICT and stale.value.data == {"revision": 2}
    assert board.task("t-1") == task.__class__("t-1", "Write", "todo", "ann")
    board, moved = move_task(board, 2, "t-1", "doing")
    assert board.revision == 3 and moved.status == "doing"


def test_a_handoff_sets_the_status_and_is_kept_with_the_task() -> None:
    board, _ = create_task(Board(), 0, "Write", "ann")
    handoff = Handoff("ann", "drafted", "review", ("notes.md",), "2026-01-01T00:00:00Z")
    board, task = hand_off(board, 1, "t-1", handoff)
    assert task.status == "review" and task.handoffs == (handoff,)
    board, second = create_task(board, 2, "Check", None)
    assert second.task_id == "t-2" and [t.task_id for t in board.tasks] == ["t-1", "t-2"]


def test_an_unknown_task_or_status_is_refused_and_changes_nothing() -> None:
    board, _ = create_task(Board(), 0, "Write", None)
    with pytest.raises(JsonRpcError) as missing:
        move_task(board, 1, "t-9", "done")
    assert missing.value.code == NOT_FOUND
    with pytest.raises(JsonRpcError) as bad:
        move_task(board, 1, "t-1", "finished")
    assert bad.value.code == INVALID_PARAMS
    assert board.revision == 1 and board.task("t-1").status == "todo"
