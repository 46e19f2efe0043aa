"""Benchmark: the grep tool over a generated 10,000-file tree, against a pure-Python walk-and-regex search of the
same tree and against bare `rg` with the same arguments, all in the same run. Prints medians and ratios.

With `--linked` every file also has a second name outside the tree (as pnpm's store makes), so each is checked
against the run's protected files.

Run: python scripts/bench_grep.py [--files 10000] [--repeat 7] [--linked]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kernel.tools import ToolContext, find_rg, make_grep_tool
from sandbox import build_policy

PATTERN = r"needle_[0-9]+"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def make_tree(scratch: Path, files: int) -> int:
    """Write `files` text files in 100-file directories; about 1% hold a needle. Returns how many do."""
    rng = random.Random(7)
    with_needle = 0
    for n in range(files):
        directory = scratch / f"dir{n // 100:03}"
        directory.mkdir(exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(30)]
        if rng.random() < 0.01:
            lines[rng.randrange(30)] += f" needle_{n}"
            with_needle += 1
        (directory / f"file{n:05}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return with_needle


def python_search(root: Path) -> list[str]:
    regex = re.compile(PATTERN)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                if regex.search(handle.read()):
                    found.append(path)
    return found


def _cpu() -> float:
    """CPU seconds used so far by this process and its waited-for children (rg)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (this process and rg: what a busy machine does not inflate)."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _cpu()
        action()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


async def _approve(action: str, target: str, summary: str) -> bool:
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--linked", action="store_true", help="give every file a second name (a hard link)")
    options = parser.parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("rg not found")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        scratch = data / "agents" / "bench" / "scratch"
        scratch.mkdir(parents=True)
        expected = make_tree(scratch, options.files)
        if options.linked:
            store = Path(tmp) / "store"
            store.mkdir()
            for n, path in enumerate(sorted(scratch.rglob("*.txt"))):
                os.link(path, store / f"{n}.txt")
        ctx = ToolContext(build_policy(str(data), "bench"), "bench", _approve)
        tool = make_grep_tool(timeout=120)
        arguments = {"pattern": PATTERN, "output_mode": "files", "head_limit": 5000}

        async def run_tool() -> str:
            return (await tool.run(arguments, ctx)).content

        tool_lines = asyncio.run(run_tool()).splitlines()
        python_found = python_search(scratch)
        assert len(tool_lines) == len(python_found) == expected, (len(tool_lines), len(python_found), expected)
        flags = ["--json", "--no-config", "--no-pre", "--sort=path", "--max-count=1"]
        bare = [rg, *flags, "-e", PATTERN, "--", str(scratch)]

        t_tool, c_tool = timed(lambda: asyncio.run(run_tool()), options.repeat)
        t_python, c_python = timed(lambda: python_search(scratch), options.repeat)
        t_rg, c_rg = timed(lambda: subprocess.run(bare, capture_output=True, check=False), options.repeat)

    linked = ", each with a second name" if options.linked else ""
    print(f"tree: {options.files} files{linked}, {expected} with a match; medians of {options.repeat} runs")
    print("                        wall        CPU (this process and rg)")
    print(f"grep tool          {t_tool * 1000:9.1f} ms {c_tool * 1000:9.1f} ms")
    print(f"pure-Python search {t_python * 1000:9.1f} ms {c_python * 1000:9.1f} ms")
    print(f"bare rg --json     {t_rg * 1000:9.1f} ms {c_rg * 1000:9.1f} ms")
    print(f"ratio python / tool:      {t_python / t_tool:6.2f}x wall, {c_python / c_tool:6.2f}x CPU")
    print(f"tool over bare rg:        {t_tool / t_rg:6.2f}x wall, {c_tool / c_rg:6.2f}x CPU")


if __name__ == "__main__":
    main()
