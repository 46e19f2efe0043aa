"""Fuzz the wire: 10,000 seeded hostile frames (and lines near the 64 MiB limit) through a real host process.

Every frame is followed by a `ping`; each outcome is checked against the answer a correct host gives (its
code and id, or no answer), every stdout line is parsed strictly, a host that exits is counted and started
again. Then the host must still answer `ping`, create and list agents, and no agent file may hold a
replacement character or a lone surrogate. Prints the counts; exits non-zero if anything did not hold.

Run: python scripts/fuzz_wire.py [--frames 10000] [--seed 10] [--no-long-lines]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


async def main(frames: int, seed: int, long_lines: bool) -> int:
    # The generator and the driver live with the tests (the CI test runs a few hundred of the same frames).
    sys.path.insert(0, str(REPO_ROOT))
    from protocol.framing import MAX_FRAME_BYTES
    from tests.support.hostile_frames import hostile_cases, long_line_cases
    from tests.support.wire_fuzz import check_agent_files, run_fuzz

    cases = hostile_cases(seed, frames)
    if long_lines:
        cases += long_line_cases(MAX_FRAME_BYTES)
    with tempfile.TemporaryDirectory(prefix="hearth-fuzz-") as data_dir:
        started = time.perf_counter()
        report = await run_fuzz(Path(data_dir), cases, stderr_to=Path(data_dir) / "host.log")
        elapsed = time.perf_counter() - started
        bad_files = check_agent_files(Path(data_dir))
    print(f"wire fuzz, seed {seed}: {len(cases)} frames of {len(report.kinds)} kinds in {elapsed:.1f} s")
    print(f"  {report.summary()}")
    print(f"  agent files with a replacement character, a surrogate or bad UTF-8: {len(bad_files)}")
    for problem in [*report.wrong[:20], *report.after, *bad_files[:20]]:
        print(f"  ! {problem}")
    failed = report.deaths or report.wrong or report.not_json or report.after or bad_files
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000, help="how many hostile frames to send")
    parser.add_argument("--seed", type=int, default=10, help="the generator's seed (same seed, same frames)")
    parser.add_argument("--no-long-lines", action="store_true", help="skip the three lines near the 64 MiB limit")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.frames, args.seed, not args.no_long_lines)))
