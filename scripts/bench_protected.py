"""Benchmark: what checking files by inode against the run's protected files costs, all in the same run.

A data dir of 50 agents (memory, transcript, prompt cache, a scratch of 200 files each) and a Work with a 2,000-file
scratch. Measures the protected set brought up to date with nothing changed (the kept listings) against listing it
from nothing, and `read_file` of a project file with one name (no check) against one with two (checked). Times
are this process's CPU time (`time.process_time`), so other work on a busy machine does not count. Prints medians
and ratios.

Run: python scripts/bench_protected.py [--agents 50] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kernel.tools import READ_FILE, ToolContext
from sandbox import ProtectedFiles, build_policy, protected_files


def make_data_dir(data: Path, agents: int) -> None:
    for n in range(agents):
        home = data / "agents" / f"agent{n:03}"
        (home / "memory").mkdir(parents=True)
        (home / "scratch").mkdir()
        for name in ("profile.json", "settings.json", "transcript.jsonl", "prompt-cache.json", "inbox.json"):
            (home / name).write_text("{}\n", encoding="utf-8")
        for name in ("ledger.jsonl", "MEMORY.md", "index.sqlite"):
            (home / "memory" / name).write_text("x\n", encoding="utf-8")
        for f in range(200):
            (home / "scratch" / f"f{f:03}.txt").write_text("scratch\n", encoding="utf-8")
    work = data / "works" / "w1" / "scratch"
    for d in range(20):
        (work / f"d{d:02}").mkdir(parents=True)
        for f in range(100):
            (work / f"d{d:02}" / f"f{f:03}.txt").write_text("work\n", encoding="utf-8")
    for name in ("secrets.bin", "secrets.key", "settings.json", "host.lock"):
        (data / name).write_text("x\n", encoding="utf-8")


def timed(action: Callable[[], object], repeat: int) -> float:
    """The median CPU time of `action` (this process's own, so other work on the machine does not count)."""
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def paired(first: Callable[[], object], second: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU times of both, run in turn."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for action, into in ((first, samples[0]), (second, samples[1])):
            start = time.process_time()
            action()
            into.append(time.process_time() - start)
    return statistics.median(samples[0]), statistics.median(samples[1])


async def _approve(action: str, target: str, summary: str, *, always_ask: bool = False) -> bool:
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, project = Path(tmp) / "data", Path(tmp) / "project"
        make_data_dir(data, options.agents)
        project.mkdir()
        (project / "one.py").write_text("x = 1\n" * 50, encoding="utf-8")
        (project / "two.py").write_text("x = 1\n" * 50, encoding="utf-8")
        os.link(project / "two.py", project / "two-again.py")
        policy = build_policy(str(data), "agent000", extra_writable=(str(project),))
        kept = protected_files(policy)  # the one the reads below use
        protected = len(kept.current().inodes)
        t_cold = timed(lambda: ProtectedFiles(policy).current(), max(5, options.repeat // 20))
        # The listings settle a second after the tree was written; only then are they kept.
        time.sleep(1.1)
        kept.current()
        t_warm = timed(kept.current, options.repeat)
        ctx = ToolContext(policy, "agent000", _approve)

        def read(name: str) -> None:
            result = asyncio.run(READ_FILE.run({"path": str(project / name)}, ctx))
            assert not result.is_error, result.content

        t_one, t_two = paired(lambda: read("one.py"), lambda: read("two.py"), options.repeat)

    print(f"data dir: {options.agents} agents, {protected} protected files; CPU-time medians of {options.repeat} runs")
    print(f"protected set, listed from nothing   {t_cold * 1000:8.2f} ms")
    print(f"protected set, kept and re-stamped   {t_warm * 1000:8.2f} ms")
    print(f"ratio cold / kept:                   {t_cold / t_warm:8.1f}x")
    print(f"read_file, a file with one name      {t_one * 1000:8.2f} ms")
    print(f"read_file, a file with two names     {t_two * 1000:8.2f} ms (checked against the set)")
    print(f"ratio two names / one name:          {t_two / t_one:8.2f}x ({(t_two - t_one) * 1000:+.2f} ms)")


if __name__ == "__main__":
    main()
