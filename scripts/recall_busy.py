"""`bench_recall.py --busy`: `memory.search` through the real host while a CPU hog runs on every core.

One agent's memory holds N log entries (LoCoMo's turns, then the same turns retold), written before the host
starts, so a host with embeddings on computes their vectors in the background while it answers. The bench
starts one hog per core itself, then for embeddings off and on in turn starts `python -m host`, times its
first search (and reads what the result says about meaning), then asks the questions over the wire: p50 and
p95 of every search, and the host's resident memory (VmRSS) after 10 and after the last search. Then it
stops the hogs and counts the vectors the host writes in a window (notes/s, with the load average).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from recall_sets import Conversation

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import use_embedder
from protocol.dispatch import Router
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport

__all__ = ["bench_busy"]

ROOT = Path(__file__).resolve().parents[1]
AGENT = "busy"


@contextmanager
def cpu_hogs(count: int) -> Iterator[list[int]]:
    """`count` processes that each spin one core until the block ends; yields their pids."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield [hog.pid for hog in hogs]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _rss_mb(pid: int) -> tuple[float, float]:
    """The process's resident memory and the anonymous part of it (the rest is mapped files: the model's)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", float("nan")), fields.get("RssAnon", float("nan"))


def _p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[int(0.95 * (len(ordered) - 1))]


def _prepare(data: Path, conversations: list[Conversation], size: int) -> None:
    """A data dir whose agent's memory holds `size` log entries and no vectors yet."""
    turns = [(text, when) for conversation in conversations for _, text, when in conversation.turns]
    texts = turns + [(f"Told again: {text}", when) for text, when in turns]
    items = [NoteItem(text, tier="log", valid_from=when) for text, when in texts[:size]]
    asyncio.run(_create_agent(data))
    use_embedder(None)
    with MemoryStore(data / "agents" / AGENT) as store:
        for start in range(0, len(items), 1000):
            asyncio.run(store.note_many(items[start : start + 1000], evidence=Evidence("user")))


class _Host:
    """`python -m host` over its pipes, with embeddings on or off."""

    def __init__(self, data: Path, embeddings: bool) -> None:
        self.data = data
        self.env = {**os.environ, "HEARTH_EMBEDDINGS": "on" if embeddings else "off"}
        self.process: asyncio.subprocess.Process | None = None
        self.peer: JsonRpcPeer | None = None
        self._serving: asyncio.Task[None] | None = None

    async def __aenter__(self) -> _Host:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "host",
            "--data-dir",
            str(self.data),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=ROOT,
            env=self.env,
            limit=READ_LIMIT,
        )
        self.peer = JsonRpcPeer(process_transport(self.process), Router(), name="host", default_timeout=600)
        self._serving = asyncio.create_task(self.peer.serve())
        await self.call("initialize", {"client": {"name": "bench-recall"}, "protocolVersion": PROTOCOL_VERSION})
        return self

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.peer is not None
        return await self.peer.request(method, params)

    async def __aexit__(self, *exc: object) -> None:
        assert self.process is not None and self._serving is not None
        await self.call("shutdown", {})
        await self.process.wait()
        self._serving.cancel()


async def _create_agent(data: Path) -> None:
    async with _Host(data, embeddings=False) as host:
        await host.call(
            "agent.create", {"name": AGENT, "agentId": AGENT, "settings": {"model": {"provider": "scripted"}}}
        )


async def _search(host: _Host, question: str) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    result = await host.call("memory.search", {"agentId": AGENT, "query": question, "limit": 10})
    return (time.perf_counter() - start) * 1000, result


async def _searches(data: Path, embeddings: bool, questions: Sequence[str]) -> dict[str, Any]:
    async with _Host(data, embeddings) as host:
        assert host.process is not None
        first_ms, first = await _search(host, questions[0])
        samples: list[float] = []
        rss: dict[int, tuple[float, float]] = {}
        for n, question in enumerate(questions, start=1):
            samples.append((await _search(host, question))[0])
            if n in (10, len(questions)):
                rss[n] = _rss_mb(host.process.pid)
    return {"first": first_ms, "firstMeaning": first.get("meaning"), "samples": samples, "rss": rss}


def _vector_count(index: Path) -> int:
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=30)
    try:
        return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])
    except sqlite3.OperationalError:  # no vectors table yet
        return 0
    finally:
        db.close()


async def _embedding_rate(data: Path, window: float) -> tuple[float, int, tuple[float, float, float]]:
    """Vectors the host writes a second over `window` seconds of its background work (after its start)."""
    index = data / "agents" / AGENT / "memory" / "index.sqlite"
    async with _Host(data, embeddings=True) as host:
        await _search(host, "warm up")  # opens the memory, which queues its backlog
        before, start = _vector_count(index), time.perf_counter()
        await asyncio.sleep(window)  # the bench measures a rate over a fixed window
        after, elapsed = _vector_count(index), time.perf_counter() - start
    return (after - before) / elapsed, after, os.getloadavg()


def bench_busy(conversations: list[Conversation], *, size: int, searches: int, window: float) -> None:
    """Print search p50/p95 with embeddings off and on under a hog per core, their ratio, RSS, and notes/s."""
    questions = [q.text for conversation in conversations for q in conversation.questions]
    questions = (questions * (searches // len(questions) + 1))[:searches]
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        started = time.perf_counter()
        _prepare(base, conversations, size)
        print(f"\nBusy machine: {size:,} log entries written in {time.perf_counter() - started:.0f} s", flush=True)
        runs: dict[str, dict[str, Any]] = {}
        with cpu_hogs(cores):
            print(f"a CPU hog on each of {cores} cores; {len(questions)} searches each", flush=True)
            for name, embeddings in (("embeddings off", False), ("embeddings on", True)):
                data = Path(tmp) / name.replace(" ", "-")
                shutil.copytree(base, data)
                runs[name] = asyncio.run(_searches(data, embeddings, questions))
                run = runs[name]
                print(
                    f"  {name}: first search {run['first']:.0f} ms (meaning: {run['firstMeaning']}), "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        last = len(questions)
        print(f"{'':16}{'p50 ms':>9}{'p95 ms':>9}   RSS MB after 10 / after {last} (anonymous part)")
        for name, run in runs.items():
            (rss10, anon10), (rss_last, anon_last) = run["rss"][10], run["rss"][last]
            p50, p95 = statistics.median(run["samples"]), _p95(run["samples"])
            print(
                f"{name:16}{p50:>9.1f}{p95:>9.1f}   {rss10:.1f} / {rss_last:.1f} = {rss_last / rss10:.2f}x "
                f"({anon10:.1f} / {anon_last:.1f} = {anon_last / anon10:.2f}x)"
            )
        off, on = runs["embeddings off"]["samples"], runs["embeddings on"]["samples"]
        (rss10, anon10), (rss_last, anon_last) = runs["embeddings on"]["rss"][10], runs["embeddings on"]["rss"][last]
        print(f"p95 on / off: {_p95(on) / _p95(off):.2f} (goal <= 3); RSS after {last} / after 10: ", end="")
        print(f"{rss_last / rss10:.2f}, anonymous {anon_last / anon10:.2f} (goal <= 1.2)")
        data = Path(tmp) / "rate"
        shutil.copytree(base, data)
        rate, written, load = asyncio.run(_embedding_rate(data, window))
        print(
            f"no hogs: {rate:.1f} notes/s embedded over {window:.0f} s ({written:,} of {size:,} written), "
            f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; "
            f"10,000 notes: {10_000 / max(rate, 1e-9) / 60:.1f} min (goal <= 5 min on an idle machine)"
        )
