"""Issue 12: requests meeting random faults all end with one outcome, delivered to the asker once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.request_faults import run_requests_with_faults


def test_every_request_under_random_faults_ends_with_exactly_one_outcome(tmp_path: Path) -> None:
    report = asyncio.run(run_requests_with_faults(tmp_path, 12, seed=7))
    assert sum(report.faults.values()) == 12 and len(report.faults) >= 4
    assert report.without_outcome == 0 and report.outcome_wakes == 12
    assert sum(report.statuses.values()) == 12
    assert report.statuses["answered"] == report.faults["answer"] + report.faults["reply"]
    assert report.statuses["timeout"] == report.faults["timeout"]
    assert report.statuses["failed"] == report.faults["fail"]
    assert report.statuses["refused"] == report.faults["stop"] + report.faults["delete"]
