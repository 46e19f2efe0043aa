"""The wire fuzzer in CI: a few hundred seeded hostile frames of every kind through the real host (issue 10).

`scripts/fuzz_wire.py` runs the same generator with 10,000 frames and lines near the 64 MiB limit.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.hostile_frames import KINDS, hostile_cases
from tests.support.wire_fuzz import check_agent_files, run_fuzz


def test_hostile_frames_never_kill_the_host_and_each_gets_its_answer(tmp_path: Path) -> None:
    cases = hostile_cases(seed=10, count=30 * len(KINDS))
    report = asyncio.run(run_fuzz(tmp_path, cases, stderr_to=tmp_path / "host.log"))
    assert report.deaths == 0, report.summary()
    assert report.wrong == [], report.summary()
    assert report.not_json == 0 and report.lines > len(cases)
    assert report.right == len(cases)
    assert report.after == []
    assert check_agent_files(tmp_path) == []
    assert len(report.kinds) >= 40, sorted(report.kinds)
