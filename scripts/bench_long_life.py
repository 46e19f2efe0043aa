"""Benchmark: one agent's turn over a long life. A real host (and its kernel) is driven over its stdio like a
client, through `--turns` short turns (5,000 by default) against a local fake OpenAI-compatible model in its
own process. Prints the median turn, and the host's, kernel's and model's CPU per turn, over turns 1-100 (the
baseline, measured in the same run) and over the 100 turns up to 1,000, 2,500 and the last, then the ratio of
the last window's median to the first and PASS/FAIL against the goal (at most 1.3x).

A turn is timed from writing `agent.send` to reading its `agent.ended`. CPU is read from `/proc/<pid>/stat`
before and after every turn (clock ticks: a single turn's figure is coarse, a window's mean is not). The agent
has the default settings a person's agent has: memory on, extraction `auto` (each message is worth extracting,
so every turn is followed by a background extraction call with the turn's messages), and the provider's
default context window (128,000 tokens). A turn here is estimated at about 30 tokens, so the context holds
the whole conversation for about 3,000 turns (6,000 messages) before compaction bounds it, as it would for
a person; the run prints the turns in which compactions ran. The request to the model grows with the
context; the fake model only reads it. `--context-window` sets another window.

Run: python scripts/bench_long_life.py [--turns 5000] [--context-window N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
READ_LIMIT = 64 * 1024 * 1024 + 1024
GOAL = 1.3
WINDOW = 100
MARKS = (1000, 2500, 5000)

FAKE_MODEL = """
import sys
from tests.kernel.providers.fake_llm_server import FakeModelServer
from tests.support.fake_model import EXTRACTION_MARK, NO_OPERATIONS, say

REPLY, NOTHING, MARK = say("Noted; that is on the list."), say(NO_OPERATIONS), EXTRACTION_MARK.encode()


class Model(FakeModelServer):
    # Nothing is recorded and the body is only searched, never decoded: the model's own work stays flat
    # (a real model's work is not Hearth's), so the figures that grow are the host's and the kernel's.
    def _handler_class(self):
        base = super()._handler_class()

        class Handler(base):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                self._send(NOTHING if MARK in raw else REPLY)

        return Handler


server = Model()
server.start()
print(server.url, flush=True)
sys.stdin.read()
server.stop()
"""


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux `/proc`)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Host:
    """A sequential JSON-RPC client over a host's pipes: one call at a time, notifications read past."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._next_id = 0

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        self._stdin.write(line.encode() + b"\n")
        await self._stdin.drain()
        while True:
            message = await self._line()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    async def turn(self, agent_id: str, text: str) -> str:
        """Send `text` and read until the run's `agent.ended`; returns its reason."""
        run_id = (await self.call("agent.send", {"agentId": agent_id, "text": text}))["runId"]
        while True:
            raw = await self._stdout.readline()
            # Only a run's end is decoded, so this client's own work stays out of the figures.
            if b'"agent.ended"' in raw and run_id.encode() in raw:
                return str(json.loads(raw)["params"]["reason"])
            if not raw:
                raise ConnectionError("the host closed its stdout")

    async def _line(self) -> dict[str, Any]:
        raw = await self._stdout.readline()
        if not raw:
            raise ConnectionError("the host closed its stdout")
        message: dict[str, Any] = json.loads(raw)
        return message


@dataclass(frozen=True, slots=True)
class Turn:
    seconds: float
    host_cpu: float
    kernel_cpu: float
    model_cpu: float


async def _start(argv: list[str], data_dir: str, stderr: Any) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        limit=READ_LIMIT,
    )


async def _kernel_pid(host: Host) -> int:
    async with asyncio.timeout(60):
        while True:
            kernel = (await host.call("host.status", {}))["kernel"]
            if kernel["state"] == "up" and kernel.get("pid"):
                return int(kernel["pid"])
            await asyncio.sleep(0.1)


async def run(turns: int, context_window: int | None, progress: bool) -> list[Turn]:
    from protocol.models.host import PROTOCOL_VERSION

    with tempfile.TemporaryDirectory(prefix="hearth-bench-long-") as data_dir:
        log = open(Path(data_dir).with_suffix(".log"), "ab")  # closed once both processes have ended
        model = await _start([sys.executable, "-c", FAKE_MODEL], data_dir, log)
        assert model.stdout is not None and model.stdin is not None
        url = (await model.stdout.readline()).decode().strip()
        process = await _start([sys.executable, "-m", "host", "--data-dir", data_dir], data_dir, log)
        host = Host(process)
        await host.call("initialize", {"client": {"name": "bench-long-life"}, "protocolVersion": PROTOCOL_VERSION})
        kernel_pid = await _kernel_pid(host)
        settings: dict[str, Any] = {"model": {"provider": "openai", "name": "m", "baseUrl": url}}
        if context_window is not None:
            settings["model"]["contextWindow"] = context_window
        await host.call("agent.create", {"name": "Long", "agentId": "long", "settings": settings})
        pids = (process.pid, kernel_pid, model.pid)
        results: list[Turn] = []
        started = time.perf_counter()
        for n in range(1, turns + 1):
            before = [cpu_seconds(pid) for pid in pids]
            start = time.perf_counter()
            reason = await host.turn("long", f"Message {n}: please keep item {n} on the shopping list.")
            seconds = time.perf_counter() - start
            after = [cpu_seconds(pid) for pid in pids]
            if reason != "idle":
                raise RuntimeError(f"turn {n} ended {reason}; see {log.name}")
            results.append(Turn(seconds, *(a - b for a, b in zip(after, before, strict=True))))
            if progress and n % 250 == 0:
                recent = statistics.median(t.seconds for t in results[-WINDOW:]) * 1000
                print(f"  turn {n:5d}: median of the last {WINDOW} {recent:6.1f} ms", file=sys.stderr, flush=True)
        elapsed = time.perf_counter() - started
        await host.call("shutdown", {})
        async with asyncio.timeout(30):
            await process.wait()
        model.stdin.close()
        await model.wait()
        log.close()
        compacted = _compactions(Path(data_dir) / "agents" / "long" / "transcript.jsonl")
    print(f"{turns} turns in {elapsed:.0f} s; compactions: {len(compacted)}", end="")
    print(f" (in turns {', '.join(map(str, compacted))})" if compacted else " (the whole conversation in context)")
    return results


def _compactions(transcript: Path) -> list[int]:
    """The turns in which a compaction ran (by the count of the person's messages up to it)."""
    turn, found = 0, []
    with transcript.open(encoding="utf-8") as lines:
        for line in lines:
            kind = json.loads(line).get("type")
            turn += kind == "user"
            if kind == "compact":
                found.append(turn)
    return found


def _row(label: str, window: list[Turn]) -> str:
    median = statistics.median(t.seconds for t in window) * 1000
    host = sum(t.host_cpu for t in window) / len(window) * 1000
    kernel = sum(t.kernel_cpu for t in window) / len(window) * 1000
    model = sum(t.model_cpu for t in window) / len(window) * 1000
    return (
        f"{label:<16} median {median:7.1f} ms   cpu per turn: host {host:6.1f} ms, kernel {kernel:6.1f} ms,"
        f" model {model:5.1f} ms"
    )


def report(results: list[Turn]) -> bool:
    """Print the windows and the verdict; True when the last window is within the goal."""
    first = results[:WINDOW]
    print(_row(f"turns 1-{len(first)}", first))
    ends = [mark for mark in MARKS if WINDOW < mark < len(results)] + [len(results)]
    for end in ends:
        print(_row(f"turns {end - WINDOW + 1}-{end}", results[end - WINDOW : end]))
    base = statistics.median(t.seconds for t in first)
    last = statistics.median(t.seconds for t in results[-WINDOW:])
    ratio = last / base
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"median turn at {len(results)} / at 1-{len(first)}: {ratio:.2f}x   (goal <= {GOAL}x): {verdict}")
    return ratio <= GOAL


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5000, help="how many turns (at least 200)")
    parser.add_argument("--context-window", type=int, help="the model's context window (default: the provider's)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args()
    if args.turns < 2 * WINDOW:
        parser.error(f"--turns must be at least {2 * WINDOW}")
    sys.path.insert(0, str(REPO_ROOT))
    figures = asyncio.run(run(args.turns, args.context_window, not args.quiet))
    sys.exit(0 if report(figures) else 1)
