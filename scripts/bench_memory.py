"""Benchmark Hearth's memory: a turn's prompt cost against history length, and recall on LoCoMo.

Part 1 builds a turn's prompt (`assemble_prompt`: the frozen system prompt plus the per-turn recall block)
for an agent whose ledger holds 1,000, 10,000 and 100,000 records, and prints the median time per turn and
the ratio of 100,000 to 1,000 (the goal is under 1.5). It also prints the turn after an explicit note (a new
epoch: the memory section is rendered again), the cost of one note, and opening the memory from its checkpoint.

Part 2 loads each LoCoMo conversation into one agent's memory (each turn one `log` record: the speaker and
any shared image's caption in the text, the session date as its valid time), asks every question with
evidence through `MemoryStore.search` (the path `memory_recall` uses), and prints recall@5 and @10 overall
and per category, beside the paper's best retriever (58.8 / 67.5), the same path with log context switched
off, and a plain FTS5 BM25 floor (default tokenizer, all question words OR-joined), all measured in the same
run. The data stays in ../shared/bench/ (read from there, never copied).

Run: python scripts/bench_memory.py [--sizes 1000,10000,100000] [--turns 200] [--skip-locomo]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import host.memory.index as memory_index
from host.memory import Evidence, MemoryStore, NoteItem
from host.prompt.cache import assemble_prompt
from host.prompt.identity import AgentIdentity

ROOT = Path(__file__).resolve().parents[1]

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
PAPER = (58.8, 67.5)
USER = Evidence("user")
ADA = AgentIdentity("bench", "Bench")

_SYLLABLES = "ka lo mi ne ru sa te vi do fa gu hi jo ke li mo nu pa ri so ta vu wa ye zo an el in or un".split()
_COMMON = (
    "went said like home work friend family time day week trip book music dinner called new old good moved "
    "started bought visited planned met loves wants city garden project class team birthday weekend"
).split()


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return _COMMON + sorted(words)


def _sentence(rng: random.Random, vocab: list[str], weights: list[float], low: int, high: int) -> str:
    return " ".join(rng.choices(vocab, weights=weights, k=rng.randint(low, high)))


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _fill(store: MemoryStore, count: int, rng: random.Random, vocab: list[str], weights: list[float]) -> None:
    batch: list[NoteItem] = []
    for number in range(count):
        tier = "log" if number % 3 else "note"
        key = f"user.slot{number % 40}" if number % 97 == 0 else None
        text = f"User {_sentence(rng, vocab, weights, 6, 16)} (fact {number})"
        batch.append(NoteItem(text, key=key, tier=tier, valid_from=f"20{10 + number % 15}-01-01"))
        if len(batch) == 5000:
            await store.note_many(batch, evidence=USER)
            batch = []
    if batch:
        await store.note_many(batch, evidence=USER)


def bench_turns(sizes: list[int], turns: int) -> None:
    rng = random.Random(7)
    vocab = _vocabulary(rng, 20_000)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    queries = [f"what about the {_sentence(rng, vocab, weights, 4, 10)}?" for _ in range(turns)]
    medians: dict[int, float] = {}
    print(f"Part 1: building a turn's prompt (median of {turns} turns)")
    print(f"{'records':>9} {'turn ms':>9} {'turn after note ms':>19} {'note ms':>8} {'open ms':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            agent_dir = Path(tmp) / "agents" / "bench"
            agent_dir.mkdir(parents=True)
            store = MemoryStore(agent_dir)
            asyncio.run(_fill(store, size, rng, vocab, weights))
            assemble_prompt(agent_dir, ADA, [("peer", "Peer")], store, queries[0])
            samples = []
            for query in queries:
                start = time.perf_counter()
                assemble_prompt(agent_dir, ADA, [("peer", "Peer")], store, query)
                samples.append(time.perf_counter() - start)
            bumped, notes = [], []
            for number in range(7):
                start = time.perf_counter()
                asyncio.run(store.note(f"User mentioned detail {number} today", evidence=USER))
                notes.append(time.perf_counter() - start)
                start = time.perf_counter()
                assemble_prompt(agent_dir, ADA, [("peer", "Peer")], store, queries[number])
                bumped.append(time.perf_counter() - start)
            store.close()
            start = time.perf_counter()
            MemoryStore(agent_dir).close()
            opened = time.perf_counter() - start
        medians[size] = _median_ms(samples)
        print(
            f"{size:>9,} {medians[size]:>9.2f} {_median_ms(bumped):>19.1f} {_median_ms(notes):>8.1f} "
            f"{opened * 1000:>8.1f}"
        )
    if len(sizes) > 1:
        ratio = medians[sizes[-1]] / medians[sizes[0]]
        print(f"ratio of a turn at {sizes[-1]:,} to {sizes[0]:,} records: {ratio:.2f} (goal < 1.5)")


def _session_instant(text: str) -> str:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()


def _turn_text(turn: dict[str, object]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def _evidence_ids(raw: list[str]) -> list[str]:
    ids: list[str] = []
    for item in raw:
        for part in re.split(r"[;,]", item):
            part = part.strip().replace(" ", "")
            if part:
                ids.append(part)
    return ids


def _floor_search(db: sqlite3.Connection, question: str, limit: int) -> list[str]:
    words = re.findall(r"\w+", question.lower())
    if not words:
        return []
    expression = " OR ".join('"' + w + '"' for w in dict.fromkeys(words))
    rows = db.execute("SELECT dia FROM floor WHERE floor MATCH ? ORDER BY bm25(floor) LIMIT ?", (expression, limit))
    return [row[0] for row in rows]


def _load(sample: dict[str, object]) -> list[tuple[str, str, str]]:
    conversation = sample["conversation"]
    assert isinstance(conversation, dict)
    turns: list[tuple[str, str, str]] = []
    for key, value in conversation.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
            when = _session_instant(conversation[f"{key}_date_time"])
            turns += [(str(turn["dia_id"]), _turn_text(turn), when) for turn in value]
    return turns


def _score(scores: dict[str, list[float]], category: str, evidence: list[str], found: list[str]) -> None:
    for k in (5, 10):
        top = set(found[:k])
        value = sum(item in top for item in evidence) / len(evidence)
        scores[f"all@{k}"].append(value)
        scores[f"{category}@{k}"].append(value)


def bench_locomo() -> None:
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    columns = ("memory_recall", "no log context", "plain FTS")
    scores: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in columns}
    started = time.perf_counter()
    for sample in samples:
        turns = _load(sample)
        with tempfile.TemporaryDirectory() as tmp:
            agent_dir = Path(tmp) / "agents" / "locomo"
            agent_dir.mkdir(parents=True)
            store = MemoryStore(agent_dir)
            items = [NoteItem(text, tier="log", valid_from=when) for _, text, when in turns]
            outcomes = asyncio.run(store.note_many(items, evidence=USER))
            record_of = {dia: o.fact.id for (dia, _, _), o in zip(turns, outcomes, strict=True) if o.fact}
            floor = sqlite3.connect(":memory:")
            floor.execute("CREATE VIRTUAL TABLE floor USING fts5(body, dia UNINDEXED)")
            floor.executemany("INSERT INTO floor(body, dia) VALUES (?, ?)", [(text, dia) for dia, text, _ in turns])
            for qa in sample["qa"]:
                evidence = [dia for dia in _evidence_ids(qa.get("evidence", [])) if dia in record_of]
                if not evidence:
                    continue
                category = CATEGORIES.get(int(qa["category"]), str(qa["category"]))
                question = str(qa["question"])
                wanted = [record_of[dia] for dia in evidence]
                _score(scores["memory_recall"], category, wanted, [h.fact.id for h in store.search(question, limit=10)])
                weight, memory_index.CONTEXT_WEIGHT = memory_index.CONTEXT_WEIGHT, 0.0
                try:
                    plain = [h.fact.id for h in store.search(question, limit=10)]
                finally:
                    memory_index.CONTEXT_WEIGHT = weight
                _score(scores["no log context"], category, wanted, plain)
                _score(scores["plain FTS"], category, evidence, _floor_search(floor, question, 10))
            floor.close()
            store.close()
    elapsed = time.perf_counter() - started
    asked = len(scores["memory_recall"]["all@5"])
    print(f"\nPart 2: LoCoMo retrieval recall @5 / @10, {asked} questions with evidence ({elapsed:.1f} s)")
    print(f"{'':14}" + "".join(f"{name:>22}" for name in columns) + f"{'questions':>11}")
    for name in ["all", *CATEGORIES.values()]:
        cells = "".join(
            f"{100 * statistics.fmean(scores[c][name + '@5']):>15.1f} / "
            f"{100 * statistics.fmean(scores[c][name + '@10']):4.1f}"
            for c in columns
        )
        print(f"{name:14}{cells}{len(scores['memory_recall'][name + '@5']):>11}")
    print(f"{'paper (best)':14}{PAPER[0]:>15.1f} / {PAPER[1]:4.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="ledger sizes, comma-separated")
    parser.add_argument("--turns", type=int, default=200, help="turns timed per size")
    parser.add_argument("--skip-locomo", action="store_true", help="only time the prompt")
    parser.add_argument("--skip-turns", action="store_true", help="only measure LoCoMo recall")
    args = parser.parse_args()
    if not args.skip_turns:
        bench_turns([int(size) for size in args.sizes.split(",")], args.turns)
    if not args.skip_locomo:
        if not LOCOMO.exists():
            sys.exit(f"LoCoMo data not found at {LOCOMO}")
        bench_locomo()


if __name__ == "__main__":
    main()
