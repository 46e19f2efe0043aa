"""The inbox file: order, a first place for interrupts, started items delivered again after a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host.together.inbox import Inbox, InboxItem, ItemKind


def item(run_id: str, kind: ItemKind = "user", **extra: Any) -> InboxItem:
    return InboxItem(run_id, kind, f"text of {run_id}", **extra)


def test_items_wait_in_order_and_a_front_item_goes_after_the_started_one(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    assert inbox.push(item("r1")) == 1
    inbox.mark_started("r1")
    assert inbox.push(item("r2")) == 1 and inbox.push(item("r3")) == 2
    assert inbox.push(item("r0"), front=True) == 1
    assert [i.run_id for i in inbox.items] == ["r1", "r0", "r2", "r3"]
    assert [i.run_id for i in inbox.waiting()] == ["r0", "r2", "r3"]


def test_the_file_survives_a_reopen_and_a_started_item_waits_again_after_a_restart(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    inbox.push(item("r1", "wake", from_agent="ann", hops=2, request_id="q-0123456789ab"))
    inbox.push(item("r2"))
    inbox.mark_started("r1")
    again = Inbox(tmp_path / "inbox.json")
    assert again.items == inbox.items and again.items[0].started
    assert [i.run_id for i in again.restart()] == ["r1"]
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").waiting()] == ["r1", "r2"]
    wake = {"type": "wake", "text": "text of r1", "fromAgent": "ann", "hops": 2, "requestId": "q-0123456789ab"}
    assert again.items[0].event() == {**wake, "seq": 0, "ts": ""}


def test_removing_one_item_keeps_the_others(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    for run_id in ("r1", "r2", "r3"):
        inbox.push(item(run_id))
    assert inbox.remove("r2") is not None and inbox.remove("r2") is None
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").items] == ["r1", "r3"]


def test_a_corrupt_inbox_file_is_set_aside_whole_and_the_inbox_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_text('{"items": [ {"runId": "torn', encoding="utf-8")
    inbox = Inbox(path)
    assert inbox.items == []
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("inbox.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == '{"items": [ {"runId": "torn'
    inbox.push(item("r1"))
    assert json.loads(path.read_text(encoding="utf-8"))["items"][0]["run_id"] == "r1"


def test_an_item_marked_started_and_then_not_waits_again_in_its_place(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox.json")
    inbox.push(item("r1"))
    inbox.push(item("r2"))
    inbox.mark_started("r1")
    inbox.mark_started("r1", False)
    assert [i.run_id for i in Inbox(tmp_path / "inbox.json").waiting()] == ["r1", "r2"]
