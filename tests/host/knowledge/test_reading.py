"""A file is read (parsed, chunked, masked) in a worker process that exists only while the indexing thread does,
below the host's priority and without loading the rest of the host; a worker that dies fails the file it was
reading, not the files after it."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

from host.knowledge import Owner
from host.knowledge.reading import READING_NICENESS, ReadingProcess, read_file
from host.knowledge.store import word_values
from tests.host.knowledge.conftest import served_hub, until_idle

ADA = Owner("agent", "ada")
KEY = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"


def test_a_file_is_read_into_masked_chunks_and_a_link_is_not_followed(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(f"# Deploy\n\nexport OPENAI_API_KEY={KEY}\n\n# Water\n\nWater at dawn.\n", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(notes)
    read = read_file(str(notes))
    assert read.reason is None and read.unit == "line" and read.size == notes.stat().st_size
    assert [(c.heading, c.start, c.end, masked) for c, masked in read.chunks] == [
        (("Deploy",), 3, 3, True),
        (("Water",), 7, 7, False),
    ]
    assert all(KEY not in chunk.text for chunk, _ in read.chunks)
    # What the word index holds of each chunk comes computed, of the masked text, off the indexing thread.
    assert read.words == tuple(word_values(chunk.heading, chunk.text) for chunk, _ in read.chunks)
    assert read.words[1] == ("Water", "Water at dawn.") and all(KEY not in body for _, body in read.words)
    assert read_file(str(tmp_path / "link.md")).gone
    assert read_file(str(tmp_path / "missing.md")).gone


def test_the_reading_process_is_another_process_and_stop_ends_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Saffron grows from corms.\n", encoding="utf-8")
    reader = ReadingProcess()
    assert multiprocessing.active_children() == []  # started on first use, not before
    [(chunk, _)] = reader.read(str(tmp_path / "a.txt")).chunks
    assert chunk.text == "Saffron grows from corms."
    [worker] = multiprocessing.active_children()
    assert worker.pid != os.getpid()
    reader.stop()
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_fails_that_file_and_a_new_one_reads_the_next(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Saffron grows from corms.\n", encoding="utf-8")
    reader = ReadingProcess()
    try:
        reader.read(str(tmp_path / "a.txt"))
        [worker] = multiprocessing.active_children()
        worker.kill()
        worker.join()
        failed = reader.read(str(tmp_path / "a.txt"))
        assert failed.reason == "the reader stopped while reading it" and failed.chunks == ()
        [(chunk, _)] = reader.read(str(tmp_path / "a.txt")).chunks
        assert chunk.text == "Saffron grows from corms."
    finally:
        reader.stop()
    assert multiprocessing.active_children() == []


def test_turning_knowledge_off_leaves_no_indexing_thread_and_no_reading_process(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"{n}.md").write_text(f"# Note {n}\n\nThe saffron note number {n}.\n", encoding="utf-8")
    state = {"on": True}

    async def main() -> None:
        async with served_hub(tmp_path / "data", on=lambda _: state["on"]) as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            await until_idle(reports)
            assert len(await hub.search(ADA, "saffron", 5)) == 3
            state["on"] = False
            await hub.settings_changed(ADA)
            # At once, not eventually: the thread and its worker are gone when the change is answered.
            assert not hub.indexer.running and multiprocessing.active_children() == []

    asyncio.run(main())


def test_the_reading_process_runs_below_the_host_priority(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Saffron grows from corms.\n", encoding="utf-8")
    reader = ReadingProcess()
    try:
        reader.read(str(tmp_path / "a.txt"))
        [worker] = multiprocessing.active_children()
        assert worker.pid is not None
        host_niceness = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == min(19, host_niceness + READING_NICENESS)
    finally:
        reader.stop()


def test_the_reading_modules_load_without_the_rest_of_the_host() -> None:
    # What the reading process imports before its first file: not the host's wiring, memory's store or numpy.
    code = "import sys, host.knowledge.reading; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "host.knowledge.masking" in loaded
    assert {"host.app", "host.memory.hub", "host.memory.store", "host.knowledge.hub", "numpy"} & set(loaded) == set()


def _one_note(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe saffron note.\n", encoding="utf-8")
    return docs


def test_a_change_after_the_base_fell_idle_is_read_by_the_same_reading_process(tmp_path: Path) -> None:
    docs = _one_note(tmp_path)

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            await until_idle(reports)
            [first] = multiprocessing.active_children()
            (docs / "b.md").write_text("# B\n\nThe crocus note.\n", encoding="utf-8")
            while not await hub.search(ADA, "crocus", 5):
                await until_idle(reports)
            assert multiprocessing.active_children() == [first]  # not a new worker per burst of changes
        assert multiprocessing.active_children() == []

    asyncio.run(main())


def test_the_indexing_thread_runs_below_the_event_loop_priority(tmp_path: Path) -> None:
    docs = _one_note(tmp_path)

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            await until_idle(reports)
            [thread] = [t for t in threading.enumerate() if t.name == "knowledge-index"]  # waiting for more work
            assert thread.native_id is not None
            loop_niceness = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            expected = min(19, loop_niceness + READING_NICENESS)
            assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == expected

    asyncio.run(main())
