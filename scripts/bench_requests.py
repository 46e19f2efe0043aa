"""Requests under random faults: 100 `ask_agent` requests, each meeting a fault drawn with a fixed seed.

Run: `.venv/bin/python scripts/bench_requests.py [--count N] [--seed S]`. Prints the faults drawn, the
outcome counts from the durable request book, how many requests were left without an outcome (must be
0), and the median time from a question to the asker's outcome turn (faults included) against the
median of a plain person-to-agent turn measured in the same run (the baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _support(name: str) -> Any:
    """A module of the test support (the in-memory host and the fault harness), importable from the checkout."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"tests.support.{name}")


async def _baseline(data_dir: Path, rounds: int) -> list[float]:
    """Plain person-to-agent turns on the same in-memory host: the cost of one run, for the ratio."""
    times = []
    model = _support("host_process").scripted_model({"match": ".", "reply": "ok"})
    async with _support("memory_host").MemoryHost(data_dir) as host:
        await host.call("agent.create", {"name": "echo", "settings": model})
        for _ in range(rounds):
            start = time.perf_counter()
            await host.send_and_wait("echo", "ping")
            times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the scripted models decline extraction and compaction; that is expected
    with tempfile.TemporaryDirectory() as tmp:
        base = asyncio.run(_baseline(Path(tmp) / "baseline", 20))
        faults = _support("request_faults")
        report = asyncio.run(faults.run_requests_with_faults(Path(tmp) / "faults", args.count, args.seed))
    per_request = statistics.median(report.seconds)
    print(f"requests: {args.count} (seed {args.seed})")
    print("faults drawn: " + ", ".join(f"{k} {v}" for k, v in sorted(report.faults.items())))
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(report.statuses.items())))
    print(f"left without an outcome: {report.without_outcome}")
    print(f"outcome turns the asker received: {report.outcome_wakes}")
    print(f"median plain turn (baseline): {statistics.median(base) * 1000:.1f} ms")
    print(f"median request with its fault, question to outcome turn: {per_request * 1000:.1f} ms")
    print(f"ratio request / plain turn: {per_request / statistics.median(base):.2f}")
    return 0 if report.without_outcome == 0 and report.outcome_wakes == args.count else 1


if __name__ == "__main__":
    raise SystemExit(main())
