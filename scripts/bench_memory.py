"""Benchmark Hearth's memory: a turn's prompt cost against history length.

It builds a turn's prompt (`assemble_prompt`: the frozen system prompt plus the per-turn recall block)
for an agent whose ledger holds 1,000, 10,000 and 100,000 records, and prints the median time per turn and
the ratio of 100,000 to 1,000 (the goal is under 1.5). It also prints the turn after an explicit note (a new
epoch: the memory section is rendered again), the cost of one note, and opening the memory from its checkpoint.

Recall quality (LoCoMo) and a query's latency with embeddings are measured by `scripts/bench_recall.py`;
here semantic recall is off, so the figures are the cost of the prompt and of the full-text path alone
(100,000 records would take the background embedder hours; its per-query cost does not grow with history
beyond one matrix product, which bench_recall times at 10,000 records).

It then fills a memory with log entries spread over two simulated years (1,000 against 100,000) and prints
the memory section's bytes and the time to build it (the prompt's build at a new epoch, summaries already
kept; the first, cold build apart), and how much of the two years the section represents through
summaries against the newest-first cut that shows today's entries alone. Both memories have the same shape
where the section shows entries in full: the days it shows whole (today and the two before) hold
RECENT_PER_DAY entries each at every size, more than fit, so both sections are full and the ratio compares
like with like (with 1,000 entries spread evenly, those days would hold about four, and the baseline would
render almost none); the rest are spread evenly over the two years before.

Run: python scripts/bench_memory.py [--sizes 1000,10000,100000] [--turns 200] [--years-sizes 1000,100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import use_embedder
from host.memory.fold import classify
from host.memory.records import format_instant
from host.memory.section import SectionLimits, render_section
from host.memory.summaries import HORIZON_DAYS, cut_date, parse_span
from host.prompt.cache import assemble_prompt
from host.prompt.identity import AgentIdentity

ROOT = Path(__file__).resolve().parents[1]
USER = Evidence("user")
ADA = AgentIdentity("bench", "Bench")
NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)

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


def _print_ratio(what: str, medians: dict[int, float], goal: str) -> None:
    sizes = list(medians)
    if len(sizes) > 1:
        ratio = medians[sizes[-1]] / medians[sizes[0]]
        print(f"ratio of {what} at {sizes[-1]:,} to {sizes[0]:,} records: {ratio:.2f} (goal {goal})")


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
    print(f"Building a turn's prompt, semantic recall off (median of {turns} turns)")
    print(f"{'records':>9} {'turn ms':>9} {'turn after note ms':>19} {'note ms':>8} {'open ms':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            agent_dir = Path(tmp) / "agents" / "bench"
            agent_dir.mkdir(parents=True)
            store = MemoryStore(agent_dir)
            asyncio.run(_fill(store, size, rng, vocab, weights))
            assemble_prompt(agent_dir, ADA, [("peer", "Peer", "")], store, queries[0])
            samples = []
            for query in queries:
                start = time.perf_counter()
                assemble_prompt(agent_dir, ADA, [("peer", "Peer", "")], store, query)
                samples.append(time.perf_counter() - start)
            bumped, notes = [], []
            for number in range(7):
                start = time.perf_counter()
                asyncio.run(store.note(f"User mentioned detail {number} today", evidence=USER))
                notes.append(time.perf_counter() - start)
                start = time.perf_counter()
                assemble_prompt(agent_dir, ADA, [("peer", "Peer", "")], store, queries[number])
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
    _print_ratio("a turn", medians, "< 1.5")


RECENT_PER_DAY = 40
"""Log entries dated on each day the section shows in full (today and the HORIZON_DAYS before), at every size:
more than the section can show, so both memories fill it alike and differ only in how much older history
the summaries cover."""


def _fill_years(store: MemoryStore, count: int, rng: random.Random, vocab: list[str], weights: list[float]) -> None:
    today = NOW.date()
    recent = min(count, RECENT_PER_DAY * (HORIZON_DAYS + 1))
    batch: list[NoteItem] = []
    for number in range(count):
        if number < recent:
            day = today - timedelta(days=number // RECENT_PER_DAY)
        else:  # the rest spread over the two years before the recent days
            older = count - recent
            day = today - timedelta(days=HORIZON_DAYS + 1 + (730 - HORIZON_DAYS - 1) * (number - recent) // older)
        batch.append(NoteItem(f"{_sentence(rng, vocab, weights, 6, 14)} ({number})", tier="log", valid_from=str(day)))
        if len(batch) == 5000:
            asyncio.run(store.note_many(batch, evidence=USER))
            batch = []
    if batch:
        asyncio.run(store.note_many(batch, evidence=USER))


def _newest_first(store: MemoryStore) -> tuple[int, int]:
    """What the section showed before summaries: the newest entries by seq (how many, over how many days)."""
    standing, totals = store.recent_standing(60)
    section = render_section(classify(standing.current, format_instant(NOW)), SectionLimits(), totals)
    shown = [fact for fact in standing.current if fact.id in set(section.shown_ids)]
    return len(shown), len({(fact.valid_from or "")[:10] for fact in shown})


def bench_years(sizes: list[int], rounds: int) -> None:
    rng = random.Random(11)
    vocab = _vocabulary(rng, 20_000)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    print(f"\nTwo years of log entries: the memory section (median of {rounds} builds at a new epoch)")
    print(
        f"{'records':>9} {'bytes':>6} {'lines':>6} {'cold ms':>8} {'build ms':>9} {'represented':>12} "
        f"{'days':>5} {'newest-first':>13} {'days':>5}"
    )
    medians: dict[int, float] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            agent_dir = Path(tmp) / "agents" / "bench"
            agent_dir.mkdir(parents=True)
            store = MemoryStore(agent_dir, clock=lambda: NOW)
            _fill_years(store, size, rng, vocab, weights)
            start = time.perf_counter()
            store.prompt_section()
            cold = time.perf_counter() - start
            samples = []
            for _ in range(rounds):
                start = time.perf_counter()
                section = store.prompt_section()
                samples.append(time.perf_counter() - start)
            told = [parse_span(sid) for sid in section.summary_ids]
            first, cut = NOW.date() - timedelta(days=730), cut_date(NOW)
            days = {span.start + timedelta(days=n) for span in told if span for n in range(span.days)}
            days = {day for day in days if day >= first} | {cut + timedelta(days=n) for n in range(HORIZON_DAYS + 1)}
            through = size - section.hidden
            cut_count, cut_days = _newest_first(store)
            store.close()
        medians[size] = _median_ms(samples)
        print(
            f"{size:>9,} {len(section.text.encode()):>6} {len(section.text.splitlines()):>6} {cold * 1000:>8.1f} "
            f"{medians[size]:>9.2f} {through:>12,} {len(days):>5} {cut_count:>13,} {cut_days:>5}"
        )
    _print_ratio("a section build", medians, "<= 1.5")
    print("budget: 6000 bytes, 60 lines; represented = entries shown or counted in a summary shown")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="ledger sizes, comma-separated")
    parser.add_argument("--turns", type=int, default=200, help="turns timed per size")
    parser.add_argument("--years-sizes", default="1000,100000", help="two-year memories, comma-separated")
    parser.add_argument("--rounds", type=int, default=50, help="section builds timed per two-year memory")
    args = parser.parse_args()
    use_embedder(None)
    if args.sizes:
        bench_turns([int(size) for size in args.sizes.split(",")], args.turns)
    bench_years([int(size) for size in args.years_sizes.split(",")], args.rounds)


if __name__ == "__main__":
    main()
