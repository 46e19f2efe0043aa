"""Benchmark: knowledge indexing and search over Python's own HTML documentation, through a real host.

Admits the folder of `*.html` pages to an agent of a `python -m host` process over stdio, pings the host
all through indexing (the goal: ping p99 under indexing <= 10 ms; the same pings before admission are the
baseline), and prints pages per second until every page is searchable by words and until every chunk also
has its vector. Then, at that size: the index's size against the chunks' text, and search p50/p95 (the
goal: p95 <= 50 ms) in process (the search `knowledge.search` runs, without the wire's framing), with plain
FTS5 over the same chunks as the baseline in the same run, and recall@5 on the question set
(`scripts/knowledge_questions.json`: each question names the page that answers it) for fusion, for its word
list alone and for plain FTS5.

The corpus: Debian's `python3-doc` (`apt-get install python3-doc`: /usr/share/doc/python3.X/html, ~530
pages). Run: python scripts/bench_knowledge.py [--corpus DIR] [--words-only] [--data-dir DIR to keep or
reuse the index] [--pages N to index N pages: every page a question names, then the first others; recall is
then over the questions whose page is indexed]. Fusion is measured once every chunk has its vector (the run
waits for them, and says how many there are when it reuses an index).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from host.knowledge import KnowledgeBase, Owner, search_chunks
from host.knowledge.search import words_only
from host.memory.embedder import default_embedder
from host.memory.query import match_expression, query_terms
from protocol.dispatch import Router
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import process_transport

REPO_ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = REPO_ROOT / "scripts" / "knowledge_questions.json"
OWNER = {"agentId": "reader"}


def _corpus() -> Path | None:
    found = sorted(glob.glob("/usr/share/doc/python3*/html"))
    return Path(found[-1]) if found else None


def _subset(corpus: Path, pages: int) -> list[Path]:
    """`pages` pages: every page a question names (so each question can be answered), then the first others."""
    named = {item["page"] for item in json.loads(QUESTIONS.read_text(encoding="utf-8"))}
    every = sorted(corpus.rglob("*.html"))
    chosen = [path for path in every if path.relative_to(corpus).as_posix() in named]
    return chosen[:pages] + [path for path in every if path not in chosen][: max(0, pages - len(chosen))]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


class Events(Router):
    """Keeps the latest `knowledge.progress` and wakes waiters on each."""

    def __init__(self) -> None:
        super().__init__()
        self.latest: dict[str, Any] = {}
        self.changed = asyncio.Event()

    async def dispatch(self, message: Any) -> Any:
        if isinstance(message, dict) and "id" not in message:
            if message.get("method") == "knowledge.progress":
                self.latest = message.get("params") or {}
                self.changed.set()
            return None
        return await super().dispatch(message)


async def _pings(peer: JsonRpcPeer, stop: asyncio.Event | None, count: int) -> list[tuple[float, float]]:
    """(when it was sent, its round trip in ms) of `count` pings back to back, or of pings every 10 ms until `stop`."""
    times: list[tuple[float, float]] = []
    while (stop is None and len(times) < count) or (stop is not None and not stop.is_set()):
        start = time.perf_counter()
        await peer.request("ping", {}, timeout=60)
        times.append((start, (time.perf_counter() - start) * 1000))
        if stop is not None:
            await asyncio.sleep(0.01)
    return times


async def _index(corpus: Path, data: Path, pages: int | None, words_only_run: bool) -> dict[str, Any]:
    source = corpus
    if pages is not None:
        source = data.parent / "corpus"
        shutil.rmtree(source, ignore_errors=True)
        for path in _subset(corpus, pages):
            target = source / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    env = {**os.environ, "HEARTH_EMBEDDINGS": "off" if words_only_run else "on"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "host",
        "--data-dir",
        str(data),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=REPO_ROOT,
        env=env,
        limit=READ_LIMIT,
    )
    events = Events()
    peer = JsonRpcPeer(process_transport(process), events, name="host", default_timeout=120)
    serving = asyncio.create_task(peer.serve())
    await peer.request("initialize", {"client": {"name": "bench"}, "protocolVersion": PROTOCOL_VERSION})
    await peer.request(
        "agent.create", {"name": "reader", "agentId": "reader", "settings": {"model": {"provider": "scripted"}}}
    )
    baseline = await _pings(peer, None, 400)
    page_count = len(list(source.rglob("*.html")))
    stop = asyncio.Event()
    started = time.perf_counter()
    pinger = asyncio.create_task(_pings(peer, stop, 0))
    await peer.request("knowledge.add", {**OWNER, "paths": [str(source)], "pattern": "*.html"}, timeout=600)
    words_done = embedded_done = None
    words_at = 0.0
    while True:
        events.changed.clear()
        latest = events.latest
        if words_done is None and latest.get("state") == "idle":
            listing = await peer.request("knowledge.list", OWNER)
            if not listing["queued"]:
                words_at = time.perf_counter()
                words_done = words_at - started
                print(f"  every page searchable by words after {words_done:.1f} s", flush=True)
        if words_done is not None and (words_only_run or latest.get("embedded") == latest.get("chunks")):
            embedded_done = time.perf_counter() - started
            break
        await events.changed.wait()
        if latest.get("embedded") and int(latest["embedded"]) % 2000 < 16:
            print(f"  {latest['embedded']}/{latest['chunks']} chunks by meaning", flush=True)
    stop.set()
    under = await pinger
    listing = await peer.request("knowledge.list", OWNER)
    await peer.request("shutdown", {})
    await process.wait()
    serving.cancel()
    [row] = listing["sources"]
    return {
        "pages": page_count,
        "files": row["files"],
        "chunks": row["chunks"],
        "embedded": row["embedded"],
        "failed": len(row["failed"]),
        "words_s": words_done,
        "all_s": embedded_done,
        "ping_base": [ms for _, ms in baseline],
        "ping_words": [ms for at, ms in under if at < words_at],
        "ping_vectors": [ms for at, ms in under if at >= words_at],
    }


def _indexed_paths(base: KnowledgeBase) -> set[str]:
    return {path for source in base.reader.specs() for path in base.reader.files(source)}


def _timed(fn: Any, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _plain(base: KnowledgeBase, query: str) -> list[int]:
    """Plain FTS5: BM25 over every content word of the query, ORed (no heading weight, no word left out)."""
    expression = match_expression(query_terms(query))
    return [] if expression is None else base.reader.plain_words(expression, 5)


def _search_figures(data: Path, questions: list[dict[str, str]], corpus: Path) -> None:
    base = KnowledgeBase(Owner("agent", "reader"), data)
    embedder = default_embedder() if len(base.vectors) else None
    text_bytes, index_bytes = base.reader.sizes()
    chunks, embedded = base.reader.counts()
    print(
        f"index: {index_bytes / 1e6:.1f} MB for {text_bytes / 1e6:.1f} MB of chunk text "
        f"({index_bytes / max(text_bytes, 1):.2f}x), {embedded} vectors"
    )
    if embedded == 0:
        print("fusion is measured by words alone: no chunk has a vector")
    else:
        print(
            f"fusion is measured with the vectors of {embedded} of {chunks} chunks"
            + ("" if embedded == chunks else " (NOT every chunk: its meaning list is partial)")
        )
    held = _indexed_paths(base)
    answerable = [q for q in questions if os.path.realpath(corpus / q["page"]) in held]
    if len(answerable) < len(questions):
        print(
            f"{len(questions) - len(answerable)} questions name a page not indexed; recall is over the other "
            f"{len(answerable)}"
        )
    questions = answerable
    vectors = {q["question"]: embedder.query(q["question"]) if embedder else None for q in questions}
    embed_ms = _timed(lambda: embedder.query("how do I sort a list") if embedder else None, 20) if embedder else []
    fused: list[float] = []
    plain: list[float] = []
    for _ in range(5):
        for item in questions:
            query = item["question"]
            fused += _timed(lambda q=query: search_chunks(base.reader, base.vectors, q, limit=5, vector=vectors[q]), 1)
            plain += _timed(lambda q=query: _plain(base, q), 1)
    print(
        f"search in process (given the query's vector): p50 {statistics.median(fused):.1f} ms, "
        f"p95 {_pct(fused, 0.95):.1f} ms"
    )
    if embed_ms:
        print(f"  the query's vector: p50 {statistics.median(embed_ms):.1f} ms, p95 {_pct(embed_ms, 0.95):.1f} ms")
    print(
        f"plain FTS5 over the same chunks: p50 {statistics.median(plain):.1f} ms, p95 {_pct(plain, 0.95):.1f} ms;"
        f" ratio of medians {statistics.median(fused) / max(statistics.median(plain), 1e-9):.2f}x"
    )
    hits_fused = hits_words = hits_plain = 0
    missed: list[str] = []
    for item in questions:
        answer = os.path.realpath(corpus / item["page"])  # the index holds canonical paths
        found = [
            h.chunk.path
            for h in search_chunks(
                base.reader, base.vectors, item["question"], limit=5, vector=vectors[item["question"]]
            )
        ]
        words = base.reader.chunks(words_only(base.reader, item["question"], 5))
        hits_fused += answer in found
        hits_words += answer in {row.path for row in words.values()}
        hits_plain += answer in {row.path for row in base.reader.chunks(_plain(base, item["question"])).values()}
        if answer not in found:
            missed.append(f"{item['page']}: {item['question']}")
    n = len(questions)
    print(
        f"recall@5 on {n} questions: fusion {hits_fused / n:.3f}, its word list alone {hits_words / n:.3f}, "
        f"plain FTS5 {hits_plain / n:.3f}"
    )
    for line in missed:
        print(f"  missed by fusion: {line}")
    base.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=_corpus())
    parser.add_argument("--data-dir", type=Path, help="keep the index here (reused when it is there)")
    parser.add_argument("--words-only", action="store_true", help="no vectors (HEARTH_EMBEDDINGS=off)")
    parser.add_argument("--pages", type=int, help="index N pages (the questions' pages first)")
    args = parser.parse_args()
    if args.corpus is None or not args.corpus.is_dir():
        sys.exit("no corpus: apt-get install python3-doc (or pass --corpus DIR)")
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    data = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-knowledge-")) / "data"
    corpus = args.corpus
    if not (data / "agents" / "reader" / "knowledge" / "index.sqlite").exists():
        figures = asyncio.run(_index(args.corpus, data, args.pages, args.words_only))
        base, under = figures["ping_base"], figures["ping_words"]
        print(
            f"indexed {figures['files']} of {figures['pages']} pages ({figures['failed']} not read) into "
            f"{figures['chunks']} chunks, {figures['embedded']} with vectors"
        )
        print(
            f"pages per second: {figures['pages'] / figures['words_s']:.2f} to words, "
            f"{figures['pages'] / figures['all_s']:.2f} to words and vectors"
        )
        print(
            f"ping before admission: p50 {statistics.median(base):.2f} ms, p99 {_pct(base, 0.99):.2f} ms; "
            f"under indexing to words ({len(under)} pings): p50 {statistics.median(under):.2f} ms, "
            f"p99 {_pct(under, 0.99):.2f} ms"
        )
        if vectors := figures["ping_vectors"]:
            print(
                f"ping while the vectors are computed ({len(vectors)} pings): p50 {statistics.median(vectors):.2f} ms,"
                f" p99 {_pct(vectors, 0.99):.2f} ms"
            )
        if args.pages is not None:
            corpus = data.parent / "corpus"
    elif args.pages is not None:
        corpus = data.parent / "corpus"
    _search_figures(data, questions, corpus)


if __name__ == "__main__":
    main()
