"""Benchmark: a real host answering `ping` while it refuses hostile archives, against the same host idle.

Each hostile archive is about 200 KiB on disk and declares a 200 MiB member: a transcript of one endless line
(refused once the line passes its cap) or a ledger within its cap (read, then refused as not a record). For
each round the client sends `agent.import` and, until its answer comes, pings the host on the same
connection. Prints the median ping round trip idle (the baseline) and during the imports, their ratio, how
many pings were answered during each import, and how much the host's peak resident memory (VmHWM) grew.

Run: python scripts/bench_archive_import.py [--rounds 5] [--idle 200]  (--idle: idle pings per round)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import statistics
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from protocol.models.host import PROTOCOL_VERSION

REPO_ROOT = Path(__file__).resolve().parents[1]
READ_LIMIT = 64 * 1024 * 1024 + 1024
MEMBER = 200 << 20
LEDGER = 60 << 20


class Client:
    """JSON-RPC over the host's stdio, several requests in flight, answers matched by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin, self._stdout = process.stdin, process.stdout
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0

    async def read(self) -> None:
        while raw := await self._stdout.readline():
            message = json.loads(raw)
            future = self._waiting.pop(message.get("id"), None) if isinstance(message, dict) else None
            if future is not None:
                future.set_result(message)

    def send(self, method: str, params: dict[str, object]) -> asyncio.Future[dict[str, Any]]:
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = future
        line = json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        self._stdin.write(line.encode() + b"\n")
        return future

    async def ping(self) -> float:
        start = time.perf_counter()
        answer = await self.send("ping", {})
        if "error" in answer:
            raise RuntimeError(f"ping failed: {answer['error']}")
        return time.perf_counter() - start


def _hostile(member: str, size: int) -> bytes:
    """A gzipped tar with the other members, then `member` declaring `size` bytes of zeros, streamed."""
    head = io.BytesIO()
    others = {
        "hearth-agent.json": b'{"format": "hearth-agent", "version": 2, "agentId": "hostile"}',
        "profile.json": b'{"name": "hostile"}',
        "settings.json": b"{}",
        "transcript.jsonl": b'{"seq": 1, "ts": "t", "type": "user", "text": "hi"}\n',
    }
    for name, data in others.items():
        if name == member:
            continue
        info = tarfile.TarInfo(name)
        info.size = len(data)
        head.write(info.tobuf() + data + b"\0" * (-len(data) % 512))
    info = tarfile.TarInfo(member)
    info.size = size
    head.write(info.tobuf())
    packer = zlib.compressobj(wbits=31)
    parts = [packer.compress(head.getvalue())]
    parts += [packer.compress(b"0" * (1 << 20)) for _ in range(size >> 20)]
    return b"".join([*parts, packer.compress(b"\0" * 1024), packer.flush()])


def _peak_rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    return next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:"))


async def _main(rounds: int, idle: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        archives = {"transcript": Path(tmp) / "t.hearth", "ledger": Path(tmp) / "l.hearth"}
        archives["transcript"].write_bytes(_hostile("transcript.jsonl", MEMBER))
        archives["ledger"].write_bytes(_hostile("memory/ledger.jsonl", LEDGER))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "host", "--data-dir", str(Path(tmp) / "data"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            cwd=REPO_ROOT, limit=READ_LIMIT,
        )  # fmt: skip
        client = Client(process)
        reader = asyncio.create_task(client.read())
        hello = await client.send("initialize", {"client": {"name": "bench"}, "protocolVersion": PROTOCOL_VERSION})
        assert "result" in hello, hello
        for _ in range(idle):  # warm up
            await client.ping()
        before = _peak_rss(process.pid)
        baseline: list[float] = []
        during: list[float] = []
        answered: dict[str, list[int]] = {name: [] for name in archives}
        refusals: set[str] = set()
        for _ in range(rounds):  # idle and loaded pings interleaved, so load on the machine hits both alike
            baseline += [await client.ping() for _ in range(idle)]
            for name, path in archives.items():
                importing = client.send("agent.import", {"path": str(path), "agentId": "hostile"})
                count = 0
                while not importing.done():
                    during.append(await client.ping())
                    count += 1
                answered[name].append(count)
                refused = importing.result().get("error", {})
                assert refused.get("code") == -32602, f"a hostile archive must be refused: {importing.result()}"
                refusals.add(refused["message"])
        grown = _peak_rss(process.pid) - before
        client.send("shutdown", {})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 30)
        reader.cancel()
    base, load = statistics.median(baseline), statistics.median(during)
    print(f"ping idle                  median {base * 1000:7.2f} ms   ({len(baseline)} pings)")
    print(
        f"ping during hostile import median {load * 1000:7.2f} ms   ratio {load / base:5.2f}x   ({len(during)} pings)"
    )
    for name, counts in answered.items():
        print(f"pings answered per import of the {name} archive: median {statistics.median(counts):.0f} {counts}")
    for message in sorted(refusals):
        print(f"refused: {message}")
    print(f"host peak memory grew by {grown / (1 << 20):.1f} MiB over {rounds * 2} imports of 200 MiB / 60 MiB members")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle", type=int, default=200)
    options = parser.parse_args()
    asyncio.run(_main(options.rounds, options.idle))
