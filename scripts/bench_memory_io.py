"""Benchmark how long a memory write stalls the event loop on a slow disk (issue 10, item 16).

`os.fsync` is made to sleep `--fsync-ms` (a disk that takes that long to flush) for the ledger append and the
MEMORY.md write alike. While one agent writes `--notes` notes, one at a time, a ticker coroutine on the same
loop sleeps 1 ms at a time; the gap between its ticks is how long every other agent's stream waits. Two
rounds in one run: the baseline runs every disk call of the write on the loop (the code path before this
change, still there for the store's opening), the other runs them in a worker thread as the store does now.
It prints, per round, the median and maximum gap between ticks, the median note latency, and the ratios
baseline / now.

Run: python scripts/bench_memory_io.py [--notes 50] [--fsync-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from host.memory import Evidence, MemoryStore
from host.memory.embedder import use_embedder

USER = Evidence("user")
TICK = 0.001


@dataclass(frozen=True)
class Round:
    gaps_ms: list[float]  # time between consecutive ticks of the 1 ms ticker while the notes were written
    latencies_ms: list[float]


def _slow_fsync(real: Callable[[int], None], delay: float) -> Callable[[int], None]:
    def fsync(fd: int) -> None:
        time.sleep(delay)
        real(fd)

    return fsync


async def _round(agent_dir: Path, notes: int, *, on_loop: bool) -> Round:
    store = MemoryStore(agent_dir)
    # The baseline: every disk call inline, on the loop (how the store opens, and how every write ran before).
    store._disk.inline = on_loop
    ticks: list[float] = []
    writing = asyncio.Event()
    ticked = asyncio.Event()
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            await asyncio.sleep(TICK)
            if writing.is_set():
                ticks.append(time.perf_counter())
            ticked.set()

    latencies: list[float] = []
    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(ticker())
        writing.set()
        for number in range(notes):
            started = time.perf_counter()
            await store.note(f"User fact number {number} about the slow disk", evidence=USER)
            latencies.append((time.perf_counter() - started) * 1000)
            ticked.clear()
            await ticked.wait()  # one tick between notes at least, as between two requests
        stop.set()
    store.close()
    gaps = [(later - earlier) * 1000 for earlier, later in zip(ticks, ticks[1:], strict=False)]
    return Round(gaps, latencies)


def _row(name: str, result: Round) -> tuple[float, float, float]:
    median, peak = statistics.median(result.gaps_ms), max(result.gaps_ms)
    latency = statistics.median(result.latencies_ms)
    print(f"{name:<24} {len(result.gaps_ms):>7} {median:>10.2f} {peak:>10.2f} {latency:>12.2f}")
    return median, peak, latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=50)
    parser.add_argument("--fsync-ms", type=float, default=20.0)
    args = parser.parse_args()
    use_embedder(None)
    real = os.fsync
    os.fsync = _slow_fsync(real, args.fsync_ms / 1000)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            before = asyncio.run(_round(Path(tmp) / "agents" / "before", args.notes, on_loop=True))
            after = asyncio.run(_round(Path(tmp) / "agents" / "after", args.notes, on_loop=False))
    finally:
        os.fsync = real
    print(f"{args.notes} notes, fsync {args.fsync_ms:g} ms: gaps between 1 ms ticks (ms), note latency (ms)")
    print(f"{'':<24} {'ticks':>7} {'median gap':>10} {'max gap':>10} {'latency p50':>12}")
    base = _row("disk calls on the loop", before)
    now = _row("disk calls in a thread", after)
    print(
        f"ratio on-loop / in-thread: median gap {base[0] / now[0]:.1f}x, max gap {base[1] / now[1]:.1f}x, "
        f"note latency {base[2] / now[2]:.2f}x"
    )


if __name__ == "__main__":
    main()
