"""Benchmark how long a memory write stalls the event loop: a note on a slow disk, and an erase beside a note.

Part 1 (issue 10, item 16): `os.fsync` is made to sleep `--fsync-ms` (a disk that takes that long to flush)
for the ledger append and the MEMORY.md write alike. While one agent writes `--notes` notes, one at a time,
a ticker coroutine on the same loop sleeps 1 ms at a time; the gap between its ticks is how long every other
agent's stream waits. Two rounds in one run: the baseline runs every disk call of the write on the loop (the
code path before that change, still there for the store's opening), the other runs them in a worker thread
as the store does now. It prints, per round, the median and maximum gap between ticks, the median note
latency, and the ratios baseline / now.

Part 2 (issue 22, item 2), on the real disk: a memory of 2,000 and of 20,000 facts, with a transcript of
half as many events (a fifth of them memory_recall replies quoting five facts each). For each size it
measures the longest gap between ticks during each of `--erases` notes and as many erases, during as long
a time with nothing running (the machine's own noise), and during an erase whose disk work runs inline on
the loop (the baseline: how every erase ran before), and prints the medians, the maxima, the median
latencies and the ratio erase / note. The goal: an erase at 20,000 facts stalls the loop 50 ms at most.

Run: python scripts/bench_memory_io.py [--notes 50] [--fsync-ms 20] [--erases 5] [--sizes 2000,20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from host.memory import Evidence, MemoryStore
from host.memory.embedder import use_embedder
from host.memory.ledger import Ledger
from host.memory.records import Record, content_signature, format_instant, new_record_id

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


def _fact(number: int) -> str:
    return (
        f"User fact number {number}: the {('garden', 'kitchen', 'office', 'studio')[number % 4]} note {number * 7919}"
    )


def _build(agent_dir: Path, facts: int) -> None:
    """A memory of `facts` confirmed notes (written to the ledger directly, indexed when it opens) and a
    transcript of facts / 2 events, a fifth of them memory_recall replies quoting five facts."""
    ledger = Ledger(agent_dir / "memory" / "ledger.jsonl")
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for first in range(0, facts, 1000):
        drafts = [
            Record(
                seq=0,
                id=new_record_id(),
                op="assert",
                source="user",
                observed_at=format_instant(start + timedelta(seconds=n)),
                trust="confirmed",
                tier="note",
                text=_fact(n),
                sig=content_signature(_fact(n)),
            )
            for n in range(first, min(facts, first + 1000))
        ]
        ledger.advance(ledger.write(drafts))
    ledger.close()
    pick = random.Random(7)
    lines = []
    for seq in range(1, facts // 2 + 1):
        if seq % 5:
            event = {"seq": seq, "type": "user", "text": f"message {seq} about the weather"}
        else:
            quoted = "\n".join(f"{k}. [m-000000000000] {_fact(pick.randrange(facts))}" for k in range(1, 6))
            event = {
                "seq": seq,
                "type": "tool",
                "runId": "r",
                "toolCallId": "c",
                "name": "memory_recall",
                "content": quoted,
            }
        lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    (agent_dir / "transcript.jsonl").write_text("".join(lines), encoding="utf-8")
    MemoryStore(agent_dir).close()  # opening indexes the ledger, once


async def _stall(operation: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """The longest gap between 1 ms ticks while `operation` runs, and its latency (both in ms)."""
    gaps: list[float] = []
    done = asyncio.Event()
    ticking = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            ticking.set()

    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(ticker())
        await ticking.wait()
        gaps.clear()
        started = time.perf_counter()
        await operation()
        latency = (time.perf_counter() - started) * 1000
        done.set()
    return max(gaps) * 1000, latency


async def _stalls(operations: Sequence[Callable[[], Awaitable[object]]]) -> tuple[list[float], list[float]]:
    """Each operation's longest stall and its latency (ms), one after the other."""
    measured = [await _stall(operation) for operation in operations]
    return [stall for stall, _ in measured], [latency for _, latency in measured]


async def _erase_beside_note(agent_dir: Path, count: int) -> dict[str, tuple[list[float], list[float]]]:
    store = MemoryStore(agent_dir)
    try:
        ids = [fact.id for fact in store.list_facts("current").facts[: count + 2]]
        notes = [
            lambda n=n: store.note(f"User note {n} written beside the erases", evidence=USER) for n in range(count)
        ]
        erases = [lambda rid=rid: store.erase(rid) for rid in ids[:count]]
        rows = {"note": await _stalls(notes), "erase": await _stalls(erases)}
        # The machine's own noise: the ticker alone, for as long as an erase took.
        pause = statistics.median(rows["erase"][1]) / 1000
        rows["nothing, as long"] = await _stalls([lambda: asyncio.sleep(pause) for _ in range(count)])
        store._disk.inline = True  # the baseline: the erase's disk work on the loop, as every erase ran before
        rows["erase, disk work inline"] = await _stalls([lambda: store.erase(ids[count])])
        store._disk.inline = False
        return rows
    finally:
        store.close()


def _part_two(sizes: list[int], count: int) -> None:
    print(f"\nerase beside note, real disk: longest gap between 1 ms ticks during one operation (ms), {count} each")
    print(f"{'facts':>7} {'operation':<24} {'p50 stall':>10} {'max stall':>10} {'p50 latency':>12}")
    goal = ""
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            agent_dir = Path(tmp) / "agents" / "ann"
            _build(agent_dir, size)
            rows = asyncio.run(_erase_beside_note(agent_dir, count))
        medians = {}
        for name, (stalls, latencies) in rows.items():
            medians[name] = statistics.median(stalls)
            latency = statistics.median(latencies)
            print(f"{size:>7} {name:<24} {medians[name]:>10.1f} {max(stalls):>10.1f} {latency:>12.1f}")
        print(
            f"{size:>7} ratio erase / note: {medians['erase'] / medians['note']:.2f}x; "
            f"inline / in the worker: {medians['erase, disk work inline'] / medians['erase']:.1f}x"
        )
        goal = f"longest stall of an erase at {size} facts: {max(rows['erase'][0]):.1f} ms (goal: 50 ms at 20000)"
    print(goal)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=50)
    parser.add_argument("--fsync-ms", type=float, default=20.0)
    parser.add_argument("--erases", type=int, default=5)
    parser.add_argument("--sizes", default="2000,20000")
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
    _part_two([int(size) for size in args.sizes.split(",")], args.erases)


if __name__ == "__main__":
    main()
