"""The firing log: each firing has one outcome, the fold survives a reopen, a torn line is skipped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from host.schedules.firings import FIRINGS_FILE, Firing, FiringLog, firing_id


def fired(schedule: str, due: float, run: str = "run-1") -> Firing:
    return Firing(firing_id(schedule, due), schedule, "ann", None, due, due, run_id=run, print="p1")


def test_a_fired_firing_is_open_until_its_outcome_and_the_fold_survives_a_reopen(tmp_path: Path) -> None:
    log = FiringLog(tmp_path)
    one, two = fired("s-000000000001", 60.0), fired("s-000000000002", 60.0, "run-2")
    log.append([("fire", one), ("fire", two)])
    assert {f.firing_id for f in log.open_firings()} == {one.firing_id, two.firing_id}
    log.append([("end", replace(one, outcome="ran"))])
    again = FiringLog(tmp_path)
    assert [f.firing_id for f in again.open_firings()] == [two.firing_id]
    assert again.has_outcome(one.firing_id) and not again.has_outcome(two.firing_id)
    assert again.last_due("s-000000000001") == 60.0 and again.last_print("s-000000000001") == "p1"
    last = again.last("s-000000000001")
    assert last is not None and last.outcome == "ran" and last.run_id == "run-1"


def test_a_second_outcome_for_one_firing_is_ignored(tmp_path: Path) -> None:
    log = FiringLog(tmp_path)
    one = fired("s-000000000001", 60.0)
    log.append([("fire", one), ("end", replace(one, outcome="ran")), ("end", replace(one, outcome="failed"))])
    history = FiringLog(tmp_path).history("s-000000000001", 10)
    assert [(f.firing_id, f.outcome) for f in history] == [(one.firing_id, "ran")]


def test_a_skip_is_one_line_and_moves_the_last_due_time(tmp_path: Path) -> None:
    log = FiringLog(tmp_path)
    skip = replace(fired("s-000000000001", 120.0), outcome="skipped", reason="busy", run_id=None)
    log.append([("end", skip)])
    assert log.open_firings() == [] and log.last_due("s-000000000001") == 120.0
    assert log.last_print("s-000000000001") is None  # a skip is no run: the watched files' print is not moved


def test_a_torn_last_line_is_skipped_and_the_next_append_stands_on_its_own_line(tmp_path: Path) -> None:
    log = FiringLog(tmp_path)
    kept = fired("s-000000000001", 60.0)
    log.append([("fire", kept)])
    with (tmp_path / FIRINGS_FILE).open("ab") as f:
        f.write(b'{"op":"fire","id":"f-torn')
    again = FiringLog(tmp_path)
    assert [f.firing_id for f in again.open_firings()] == [kept.firing_id]
    later = fired("s-000000000002", 60.0)
    again.append([("fire", later)])
    third = FiringLog(tmp_path)
    assert {f.firing_id for f in third.open_firings()} == {kept.firing_id, later.firing_id}


def test_one_due_time_of_one_schedule_is_always_the_same_firing() -> None:
    assert firing_id("s-0123456789ab", 1800000000.7) == firing_id("s-0123456789ab", 1800000000.2)
    assert firing_id("s-0123456789ab", 1800000060.0) != firing_id("s-0123456789ab", 1800000000.0)
