"""Benchmark: `ping` round trips through a real host process against a bare NDJSON echo process, driven by
the same client over the same kind of pipes in the same run. Prints the median round trip of each and the
ratio (the goal is at most 2.0x).

The echo process is the floor: an asyncio loop over stdio that writes every line back, so the ratio is
what the host's reading, decoding, checking, dispatching, validating and encoding cost on top of the pipes.

Run: python scripts/bench_ping.py [--calls 2000] [--rounds 7]
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
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
READ_LIMIT = 64 * 1024 * 1024 + 1024

ECHO_SERVER = """
import asyncio, sys

async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()

asyncio.run(main())
"""


class Client:
    """Writes one request line and reads lines until the answer with its id (notifications are skipped)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._next_id = 0

    async def call(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self._next_id += 1
        request_id = self._next_id
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        self._stdin.write(line.encode() + b"\n")
        await self._stdin.drain()
        while True:
            raw = await self._stdout.readline()
            if not raw:
                raise ConnectionError(f"the process closed its stdout while {method} waited")
            message = json.loads(raw)
            if isinstance(message, dict) and message.get("id") == request_id:
                return message

    async def round_trips(self, calls: int) -> list[float]:
        """Seconds per sequential `ping`, one figure per call."""
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            answer = await self.call("ping", {})
            times.append(time.perf_counter() - start)
            if "error" in answer:
                raise RuntimeError(f"ping failed: {answer['error']}")
        return times


async def _spawn(argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=REPO_ROOT,
        env=env,
        limit=READ_LIMIT,
    )


async def _stop(process: asyncio.subprocess.Process, client: Client | None) -> None:
    if client is not None:
        await client.call("shutdown", {})
    assert process.stdin is not None
    process.stdin.close()
    async with asyncio.timeout(30):
        await process.wait()


async def _host_ready(client: Client) -> None:
    """Initialise and wait for the kernel, so its start-up does not share the CPU with the measured calls."""
    await client.call("initialize", {"client": {"name": "bench"}, "protocolVersion": _protocol_version()})
    async with asyncio.timeout(60):
        while True:
            status = await client.call("host.status", {})
            result = status.get("result")
            if isinstance(result, dict) and isinstance(result.get("kernel"), dict):
                if result["kernel"].get("state") == "up":
                    return
            await asyncio.sleep(0.1)


def _protocol_version() -> str:
    sys.path.insert(0, str(REPO_ROOT))
    from protocol.models.host import PROTOCOL_VERSION

    return PROTOCOL_VERSION


async def main(calls: int, rounds: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with tempfile.TemporaryDirectory(prefix="hearth-bench-ping-") as data_dir:
        host = await _spawn([sys.executable, "-m", "host", "--data-dir", data_dir], env)
        echo = await _spawn([sys.executable, "-c", ECHO_SERVER], env)
        host_client, echo_client = Client(host), Client(echo)
        await _host_ready(host_client)
        await host_client.round_trips(200)  # warm both paths before measuring
        await echo_client.round_trips(200)
        host_medians, echo_medians = [], []
        for _ in range(rounds):
            # Alternate the two in every round so machine noise falls on both alike.
            host_medians.append(statistics.median(await host_client.round_trips(calls)))
            echo_medians.append(statistics.median(await echo_client.round_trips(calls)))
        await _stop(host, host_client)
        await _stop(echo, None)
    host_us = statistics.median(host_medians) * 1e6
    echo_us = statistics.median(echo_medians) * 1e6
    print(f"ping round trip, {rounds} rounds of {calls} sequential calls each (median of the round medians)")
    print(f"  bare NDJSON echo process: {echo_us:8.1f} us")
    print(f"  hearth host:              {host_us:8.1f} us")
    print(f"  ratio host / echo:        {host_us / echo_us:8.2f}x   (goal <= 2.00x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="sequential pings per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (each measures host and echo)")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
