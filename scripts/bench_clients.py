"""Benchmark: one badly behaved client against a real host, beside a healthy one, each figure with its baseline
measured in the same run.

(a) A healthy client's streaming turn (about 1 s, 100 deltas of 3,000 characters), timed from `agent.send`
    to its `agent.ended`: alone, and with a stuck client beside it (one that connected and initialized just
    before the turn and reads nothing). Medians, maxima and the ratio of the medians.
(b) The host's resident memory before a client floods `--flood` requests without reading any answer, while
    it floods (after `--flood-seconds`, with the peak since the flood began), and once it has left.
(c) A second client's `ping` round trips while the shell sends one `--frame-mb` MB frame (a `ping` whose
    params hold one long string, answered -32602), against the same pings with no such frame.

`--repo DIR` runs the host from another checkout (for a before-and-after figure).

Run: python scripts/bench_clients.py [--turns 5] [--flood 20000] [--flood-seconds 5] [--frame-mb 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_VERSION = "2026-11-01"
STREAM = {"match": "^stream$", "reply": "s" * 300_000, "chunkChars": 3000, "delayMs": 10}


class Client:
    """Newline-delimited JSON-RPC over a reader and a writer: answers by id, run ends by run id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._next = 0
        self._answers: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._ended: dict[str, asyncio.Future[None]] = {}
        self._reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while line := await self._reader.readline():
            if b'"method"' in line[:40]:  # a notification: only a run's end matters here
                if b'"agent.ended"' in line[:80]:
                    run_id = json.loads(line)["params"]["runId"]
                    self._ended.setdefault(run_id, asyncio.get_running_loop().create_future()).set_result(None)
                continue
            message = json.loads(line)
            future = self._answers.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params or {}})
        return await self.send_line(line.encode() + b"\n", self._next)

    async def send_line(self, line: bytes, request_id: Any) -> dict[str, Any]:
        """Write `line` as it is and wait for the answer to `request_id`."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        self._writer.write(line)
        await self._writer.drain()
        return await future

    async def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = await self.call(method, params)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def turn(self, agent_id: str, text: str) -> float:
        """Seconds from `agent.send` to the run's `agent.ended`."""
        start = time.perf_counter()
        run_id = (await self.result("agent.send", {"agentId": agent_id, "text": text}))["runId"]
        await self._ended.setdefault(run_id, asyncio.get_running_loop().create_future())
        return time.perf_counter() - start

    async def ping(self) -> float:
        start = time.perf_counter()
        await self.result("ping")
        return time.perf_counter() - start


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of a process in MB: `VmRSS` (resident now) or `VmHWM` (its peak since the last reset)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def _connect_raw(data_dir: str) -> socket.socket:
    """A blocking socket client that initializes and then reads only what it is told to."""
    endpoint = json.loads(Path(data_dir, "host.endpoint").read_text(encoding="utf-8"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(endpoint["socket"])
    init = {"client": {"name": "raw"}, "protocolVersion": PROTOCOL_VERSION, "token": endpoint["token"]}
    sock.sendall(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode() + b"\n")
    answer = b""
    while b"\n" not in answer:
        answer += sock.recv(65536)
    return sock


def _figures(samples: list[float]) -> str:
    return (
        f"median {statistics.median(samples) * 1000:8.1f} ms   max {max(samples) * 1000:8.1f} ms   (n={len(samples)})"
    )


async def _turns(shell: Client, data_dir: str, turns: int) -> tuple[list[float], list[float]]:
    alone = [await shell.turn("streamer", "stream") for _ in range(turns)]
    stuck_beside = []
    for _ in range(turns):
        stuck = await asyncio.to_thread(_connect_raw, data_dir)
        try:
            stuck_beside.append(await shell.turn("streamer", "stream"))
        finally:
            stuck.close()
    return alone, stuck_beside


async def _flood(pid: int, data_dir: str, count: int, seconds: float) -> tuple[float, float, float, float]:
    Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="utf-8")  # the peak starts again from now
    before = _rss_mb(pid)
    flood = await asyncio.to_thread(_connect_raw, data_dir)
    requests = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{}}\n' % n for n in range(count))
    sending = threading.Thread(target=_send_quietly, args=(flood, requests), daemon=True)
    sending.start()
    await asyncio.sleep(seconds)  # the client floods and reads nothing for this long
    during = _rss_mb(pid)
    peak = _rss_mb(pid, "VmHWM")
    flood.shutdown(socket.SHUT_RDWR)
    flood.close()
    await asyncio.to_thread(sending.join, 30)
    await asyncio.sleep(seconds)  # the host lets go of what the client left behind
    return before, during, peak, _rss_mb(pid)


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass  # the bench closed it while the host was not reading


async def _pings_while(second: Client, busy: asyncio.Task[Any] | None, count: int) -> list[float]:
    samples: list[float] = []
    while (busy is None and len(samples) < count) or (busy is not None and not busy.done()):
        samples.append(await second.ping())
    return samples


async def main(args: argparse.Namespace) -> None:
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="hearth-bench-clients-") as data_dir:
        with open(Path(data_dir).with_suffix(".log"), "ab") as log:  # the child keeps its own copy
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "host",
                "--data-dir",
                data_dir,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                cwd=repo,
                env={**os.environ, "PYTHONPATH": str(repo)},
                limit=128 * 1024 * 1024,
            )
        assert process.stdin is not None and process.stdout is not None
        shell = Client(process.stdout, process.stdin)
        await shell.result("initialize", {"client": {"name": "bench-clients"}, "protocolVersion": PROTOCOL_VERSION})
        settings = {"model": {"provider": "scripted", "rules": [STREAM]}, "memory": False}
        await shell.result("agent.create", {"name": "streamer", "agentId": "streamer", "settings": settings})
        await shell.turn("streamer", "stream")  # the first turn freezes the prompt: not measured
        pid = process.pid

        alone, stuck_beside = await _turns(shell, data_dir, args.turns)
        before, during, peak, after = await _flood(pid, data_dir, args.flood, args.flood_seconds)

        endpoint = json.loads(Path(data_dir, "host.endpoint").read_text(encoding="utf-8"))
        reader, writer = await asyncio.open_unix_connection(endpoint["socket"], limit=128 * 1024 * 1024)
        second = Client(reader, writer)
        init = {"client": {"name": "second"}, "protocolVersion": PROTOCOL_VERSION, "token": endpoint["token"]}
        await second.result("initialize", init)
        idle = await _pings_while(second, None, 200)
        pad = b"y" * (args.frame_mb * 1000 * 1000)
        frame = b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"' + pad + b'"}}\n'

        sending = asyncio.create_task(shell.send_line(frame, "big"))
        loaded = await _pings_while(second, sending, 0)
        code = (await sending)["error"]["code"]
        writer.close()
        await shell.result("shutdown")
        await process.wait()

    print(f"host from {repo}")
    print(f"(a) streaming turn, alone              : {_figures(alone)}")
    print(f"    streaming turn, a stuck client too : {_figures(stuck_beside)}")
    print(f"    ratio of the medians               : {statistics.median(stuck_beside) / statistics.median(alone):.2f}x")
    print(f"(b) host RSS before a flood of {args.flood} unread requests: {before:7.1f} MB")
    print(
        f"    after {args.flood_seconds:g} s of it                          : {during:7.1f} MB   (peak {peak:.1f} MB)"
    )
    print(f"    {args.flood_seconds:g} s after the client left                  : {after:7.1f} MB")
    print(f"(c) second client's ping, idle         : {_figures(idle)}")
    print(f"    while a {args.frame_mb} MB frame is sent   : {_figures(loaded)}   (answered {code})")
    print(f"    ratio of the maxima                : {max(loaded) / max(idle):.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5, help="turns measured alone and with a stuck client each")
    parser.add_argument("--flood", type=int, default=20_000, help="requests the flooding client sends")
    parser.add_argument("--flood-seconds", type=float, default=5.0, help="how long it floods, and the wait after")
    parser.add_argument("--frame-mb", type=int, default=50, help="size of the one huge frame, in MB")
    parser.add_argument("--repo", default=str(REPO_ROOT), help="run the host from this checkout")
    asyncio.run(main(parser.parse_args()))
