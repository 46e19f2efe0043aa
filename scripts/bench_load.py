"""Benchmark: `ping` latency through a real host while 50 agents run scripted turns, against the same host
idle, in the same run. Prints p50/p99/max of each and the ratio of the loaded p99 to the idle p99 (the goal
is a loaded p99 of at most 10 ms: one agent's disk work must never stall the loop that answers the others).

Every agent sends a message, waits for its run to end and sends the next, for `--seconds`; each turn streams
a 264-character reply in 12-character deltas, one every `--delay-ms` (50 ms: about 60 tokens a second, a
fast model's pace; 0 streams flat out, which measures a saturated host instead) and writes its transcript
lines (each fsynced). Pings go out every 5 ms and are timed from the write to the moment their answer line
is read, so the client's own scheduling adds as little as it can. Memory is off for the agents, so the
figure is about runs and transcripts. The CPU each process used while loaded is printed too: on a shared
machine, a host that is starved of CPU answers late whatever its loop does.

Every agent has one turn before the measuring starts (`--cold` skips that, to include fifty first turns,
each freezing its prompt, at once).

Run: python scripts/bench_load.py [--agents 50] [--seconds 10] [--delay-ms 50] [--cold]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from protocol.models.host import PROTOCOL_VERSION

REPO_ROOT = Path(__file__).resolve().parents[1]
READ_LIMIT = 64 * 1024 * 1024 + 1024
REPLY = "A scripted reply that streams in small pieces so every turn sends the shell many deltas. " * 3


class Client:
    """A thin JSON-RPC client over a host's pipes: answers by id, run ends by run id, arrival times kept."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.Future[Any], list[float]]] = {}
        self._ended: dict[str, asyncio.Future[None]] = {}
        self._early_ends: set[str] = set()
        self.notifications = 0

    async def read(self) -> None:
        while raw := await self._stdout.readline():
            arrived = time.perf_counter()
            if b'"method"' in raw:
                # A notification: only a run's end matters here, so the rest are counted, not decoded,
                # to keep this client's own work out of the latencies it measures.
                self.notifications += 1
                if b'"agent.ended"' not in raw:
                    continue
                run_id = json.loads(raw)["params"]["runId"]
                waiter = self._ended.pop(run_id, None)
                if waiter is None:
                    self._early_ends.add(run_id)
                elif not waiter.done():
                    waiter.set_result(None)
                continue
            message = json.loads(raw)
            future, stamp = self._pending.pop(message["id"])
            stamp.append(arrived)
            if not future.done():
                future.set_result(message)

    async def call(self, method: str, params: dict[str, Any], stamp: list[float] | None = None) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, stamp if stamp is not None else [])
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        if stamp is not None:
            stamp.append(time.perf_counter())
        self._stdin.write(line.encode())
        await self._stdin.drain()
        answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method} failed: {answer['error']}")
        return answer["result"]

    async def ping_once(self) -> float:
        stamp: list[float] = []
        await self.call("ping", {}, stamp)
        return stamp[1] - stamp[0]

    async def turn(self, agent_id: str, text: str) -> None:
        sent = await self.call("agent.send", {"agentId": agent_id, "text": text})
        run_id = sent["runId"]
        if run_id in self._early_ends:
            self._early_ends.discard(run_id)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ended[run_id] = waiter
        await waiter


async def _pings(client: Client, stop: asyncio.Event, every: float) -> list[float]:
    samples = []
    while not stop.is_set():
        samples.append(await client.ping_once())
        try:
            async with asyncio.timeout(every):
                await stop.wait()
        except TimeoutError:
            pass
    return samples


async def _agent_loop(client: Client, agent_id: str, stop: asyncio.Event, turns: list[int]) -> None:
    n = 0
    while not stop.is_set():
        await client.turn(agent_id, f"turn {n}")
        n += 1
    turns.append(n)


def _figures(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms   "
        f"max {ordered[-1] * 1000:7.2f} ms   ({len(ordered)} pings)"
    )


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux `/proc`)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def main(agents: int, seconds: float, delay_ms: int, cold: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="hearth-bench-load-") as data_dir:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "host",
            "--data-dir",
            data_dir,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=open(os.path.join(data_dir, "..", os.path.basename(data_dir) + ".log"), "ab"),
            cwd=REPO_ROOT,
            limit=READ_LIMIT,
        )
        client = Client(process)
        reading = asyncio.create_task(client.read())
        await client.call("initialize", {"client": {"name": "bench-load"}, "protocolVersion": PROTOCOL_VERSION})
        await client.call("settings.set", {"maxConcurrentRuns": min(agents, 64)})
        rule = {"match": "^turn", "on": "user", "reply": REPLY, "chunkChars": 12, "delayMs": delay_ms}
        settings = {"model": {"provider": "scripted", "rules": [rule]}, "memory": False}
        for n in range(agents):
            await client.call("agent.create", {"name": f"agent {n}", "agentId": f"agent-{n:02d}", "settings": settings})
        # Every agent has had its first turn (its prompt frozen, its transcript created): the figures are
        # of agents at work, not of fifty first turns at once, whose one-time writes `--cold` includes.
        warm = ["agent-00"] if cold else [f"agent-{n:02d}" for n in range(agents)]
        await asyncio.gather(*(client.turn(agent_id, "turn warm-up") for agent_id in warm))

        stop = asyncio.Event()
        idle_task = asyncio.create_task(_pings(client, stop, 0.005))
        await asyncio.sleep(min(5.0, seconds / 2))
        stop.set()
        idle = await idle_task

        stop = asyncio.Event()
        turns: list[int] = []
        loops = [asyncio.create_task(_agent_loop(client, f"agent-{n:02d}", stop, turns)) for n in range(agents)]
        await asyncio.sleep(1.0)  # every agent is mid-turn before the pinging starts
        status = await client.call("host.status", {})
        pids = {"host": process.pid, "kernel": status["kernel"]["pid"]}
        before = client.notifications
        pids["client"] = os.getpid()
        cpu_before = {name: _cpu_seconds(pid) for name, pid in pids.items()}
        loaded_task = asyncio.create_task(_pings(client, stop, 0.005))
        await asyncio.sleep(seconds)
        stop.set()
        loaded = await loaded_task
        cpu = {name: (_cpu_seconds(pid) - cpu_before[name]) / seconds for name, pid in pids.items()}
        notified = client.notifications - before
        await asyncio.gather(*loops)

        await client.call("shutdown", {})
        await process.wait()
        reading.cancel()

    print(f"ping, idle host             : {_figures(idle)}")
    print(f"ping, {agents} agents in turns : {_figures(loaded)}   (a delta every {delay_ms} ms per agent)")
    print(f"loaded p99 / idle p99       : {_p99(loaded) / _p99(idle):.2f}x   (goal: loaded p99 <= 10 ms)")
    print(f"load: {sum(turns)} turns in {seconds:g} s ({sum(turns) / seconds:.0f}/s), {notified} notifications read")
    print(
        f"cpu while loaded: host {cpu['host']:.0%} of a core, kernel {cpu['kernel']:.0%}, "
        f"this client {cpu['client']:.0%}; {os.cpu_count()} cores"
    )
    print(f"machine load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--delay-ms", type=int, default=50, help="pause between one agent's deltas (0: flat out)")
    parser.add_argument("--cold", action="store_true", help="measure the agents' first turns too")
    args = parser.parse_args()
    asyncio.run(main(args.agents, args.seconds, args.delay_ms, args.cold))
