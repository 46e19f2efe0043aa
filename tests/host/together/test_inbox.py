"""The inbox file: order, a first place for interrupts, and a started item waiting again after a restart as a
new attempt under a new run id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host.together.inbox import Inbox, InboxItem, ItemKind


def item(run_id: str, kind: ItemKind = "user", **extra: Any) -> InboxItem:
    return InboxItem(run_id, kind, f"text of {run_id}", **extra)


def push(inbox: Inbox, new: InboxItem, *, front: bool = False) -> None:
    inbox.write(inbox.pushed(new, front=front))


def test_items_wait_in_order_and_a_front_item_goes_after_the_started_one(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    push(inbox, item("r1"))
    inbox.write(inbox.marked("r1"))
    push(inbox, item("r2"))
    push(inbox, item("r3"))
    push(inbox, item("r0"), front=True)
    assert [i.run_id for i in inbox.items] == ["r1", "r0", "r2", "r3"]
    assert [i.run_id for i in inbox.waiting()] == ["r0", "r2", "r3"]


def test_an_item_whose_run_had_begun_waits_again_as_a_new_attempt_and_the_others_keep_their_ids(
    tmp_path: Path,
) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    push(inbox, item("r1", "wake", from_agent="ann", hops=2, request_id="q-0123456789ab"))
    push(inbox, item("r2"))
    push(inbox, item("r3"))
    inbox.write(inbox.marked("r3"))
    again = Inbox(tmp_path / "inbox.json")
    assert again.items == inbox.items
    again.write(again.retried({"r1"}))
    first, second, third = Inbox(tmp_path / "inbox.json").items
    assert first.run_id not in ("r1", "r2", "r3") and first.run_id.startswith("run-")
    assert (first.attempts, first.started, first.text, first.request_id) == (1, False, "text of r1", "q-0123456789ab")
    assert (second.run_id, second.attempts) == ("r2", 0), "an item that never started keeps its id"
    assert third.run_id != "r3" and (third.attempts, third.started) == (1, False), "marked started: begun too"
    wake = {"type": "wake", "text": "text of r1", "fromAgent": "ann", "hops": 2, "requestId": "q-0123456789ab"}
    assert first.event() == {**wake, "seq": 0, "ts": ""}


def test_removing_one_item_keeps_the_others(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    for run_id in ("r1", "r2", "r3"):
        push(inbox, item(run_id))
    inbox.write(inbox.without("r2"))
    assert inbox.find("r2") is None
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").items] == ["r1", "r3"]


def test_a_corrupt_inbox_file_is_set_aside_whole_and_the_inbox_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_text('{"items": [ {"runId": "torn', encoding="utf-8")
    inbox = Inbox(path)
    assert inbox.items == []
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("inbox.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == '{"items": [ {"runId": "torn'
    push(inbox, item("r1"))
    assert json.loads(path.read_text(encoding="utf-8"))["items"][0]["run_id"] == "r1"


def test_an_item_marked_started_and_then_not_waits_again_in_its_place(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    push(inbox, item("r1"))
    push(inbox, item("r2"))
    inbox.write(inbox.marked("r1"))
    inbox.write(inbox.marked("r1", False))
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").waiting()] == ["r1", "r2"]


def test_a_list_made_but_not_written_changes_nothing(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    push(inbox, item("r1"))
    inbox.pushed(item("r2"))
    inbox.without("r1")
    assert [i.run_id for i in inbox.items] == ["r1"]
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").items] == ["r1"]
