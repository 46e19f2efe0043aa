"""Benchmark: what the sandbox costs, against the same work without it, in the same run. Prints medians and ratios.

* Policy check per call (canonicalise + decide), and the whole read_file tool, against a bare read of the file.
* A command in the persistent sandboxed shell against the same persistent bash without a sandbox.
* Starting a sandboxed shell (bubblewrap, Landlock) against starting a bare `bash -c true`.

Run: python scripts/bench_sandbox.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kernel.tools import READ_FILE, ShellPool, ToolContext
from sandbox import Launch, Policy, ShellSandbox, build_policy, canonical_path, decide, detect_shell_sandbox
from sandbox.os_sandbox import shell_env


class Unsandboxed(ShellSandbox):
    """The same persistent bash and protocol, with no sandbox around it: the baseline."""

    def launch(self, policy: Policy, *, tmp_dir: str | None = None, command: tuple[str, ...] = ()) -> Launch:
        argv = command or (self.bash, "--noprofile", "--norc")
        return Launch(argv, shell_env(policy, "/tmp", "none"), policy.workspace)


def per_call(action: Callable[[], object], calls: int, repeat: int) -> float:
    """Median seconds per call over `repeat` samples of `calls` calls."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            action()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def read_bare(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


async def read_tool_per_call(policy: Policy, calls: int, repeat: int) -> float:
    async def approve(action: str, target: str, summary: str) -> bool:
        return True

    ctx = ToolContext(policy, "bench", approve)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            await READ_FILE.run({"path": "notes.txt"}, ctx)
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


async def shell_per_command(sandbox: ShellSandbox, policy: Policy, commands: int, repeat: int) -> float:
    pool = ShellPool(sandbox)
    try:
        await pool.run("bench", policy, "true", 30)  # start the shell outside the timing
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(commands):
                await pool.run("bench", policy, "true", 30)
            samples.append((time.perf_counter() - start) / commands)
        return statistics.median(samples)
    finally:
        await pool.close_all()


def one_shot(sandbox: ShellSandbox, policy: Policy, tmp_dir: str) -> Callable[[], object]:
    launch = sandbox.launch(policy, tmp_dir=tmp_dir, command=(sandbox.bash, "-c", "true"))
    env = dict(launch.env)
    return lambda: subprocess.run(launch.argv, env=env, cwd=launch.cwd, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    options = parser.parse_args()
    repeat = options.repeat
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        scratch = data / "agents" / "bench" / "scratch"
        (data / "agents" / "bench" / "memory").mkdir(parents=True)
        scratch.mkdir()
        target = scratch / "notes.txt"
        target.write_text("a small file\n" * 20, encoding="utf-8")
        policy = build_policy(str(data), "bench")

        check = per_call(lambda: decide(policy, "read", canonical_path("notes.txt", policy.workspace)), 2000, repeat)
        pure = per_call(lambda: decide(policy, "read", str(target)), 20000, repeat)
        bare = per_call(lambda: read_bare(target), 2000, repeat)
        print(f"policy check (canonicalise + decide) {check * 1e6:8.2f} us per call")
        print(f"  of which decide() alone             {pure * 1e6:8.2f} us per call")
        print(f"bare open + read of the file           {bare * 1e6:8.2f} us per call")
        print(f"ratio check / bare read:               {check / bare:8.2f}x")
        tool = asyncio.run(read_tool_per_call(policy, 2000, repeat))
        print(f"read_file tool (check + safe open)     {tool * 1e6:8.2f} us per call   ratio {tool / bare:6.2f}x")

        bwrap = detect_shell_sandbox("bubblewrap")
        landlock = detect_shell_sandbox("landlock")
        if not isinstance(bwrap, ShellSandbox):
            raise SystemExit(f"bubblewrap unavailable: {bwrap.reason}")
        baseline = Unsandboxed("bubblewrap", "none", bwrap.bash)
        sandboxed = asyncio.run(shell_per_command(bwrap, policy, 50, repeat))
        plain = asyncio.run(shell_per_command(baseline, policy, 50, repeat))
        print(f"persistent shell, bubblewrap           {sandboxed * 1e3:8.3f} ms per command")
        print(f"persistent shell, no sandbox           {plain * 1e3:8.3f} ms per command")
        print(f"ratio sandboxed / unsandboxed:         {sandboxed / plain:8.2f}x")

        bare_bash = per_call(one_shot(baseline, policy, tmp), 20, repeat)
        print(f"start bash -c true, no sandbox         {bare_bash * 1e3:8.3f} ms")
        for sandbox in (bwrap, landlock):
            if isinstance(sandbox, ShellSandbox):
                started = per_call(one_shot(sandbox, policy, tmp), 20, repeat)
                ratio = started / bare_bash
                print(f"start bash -c true, {sandbox.kind:<18} {started * 1e3:8.3f} ms   ratio {ratio:6.2f}x")
            else:
                print(f"unavailable: {sandbox.reason}")


if __name__ == "__main__":
    main()
