"""The hub admits, reads, searches and removes off the loop, and reads nothing it must not."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from host.knowledge import InadmissiblePathError, KnowledgeOffError, Owner, SourceNotFoundError
from protocol.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND
from tests.host.knowledge.conftest import WordVectors, served_hub, until_idle

ADA = Owner("agent", "ada")


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_folder_is_read_without_following_links_hidden_folders_or_the_data_dir(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "docs" / "hearth-data"
    (docs / ".git").mkdir(parents=True)
    data.mkdir()
    (docs / "a.md").write_text("# A\n\nThe amaranth note.\n", encoding="utf-8")
    (docs / ".git" / "b.md").write_text("hidden basilisk\n", encoding="utf-8")
    (data / "c.md").write_text("data dir cormorant\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("linked dodecagon\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", docs / "link.md")
    (docs / "skip.png").write_bytes(b"\x89PNG")

    async def main() -> None:
        async with served_hub(data) as (hub, reports):
            [source] = (await hub.add(ADA, [str(docs)], None)).source_ids
            await until_idle(reports)
            [row] = await hub.sources(ADA)
            assert (row.source_id, row.files, row.failed) == (source, 1, ())
            for word, found in (("amaranth", 1), ("basilisk", 0), ("cormorant", 0), ("dodecagon", 0)):
                assert len(await hub.search(ADA, word, 5)) == found, word

    asyncio.run(main())


def test_a_pattern_keeps_only_the_files_whose_name_fits(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text("<p>The heron page.</p>", encoding="utf-8")
    (docs / "page.txt").write_text("The heron text.", encoding="utf-8")

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            await hub.add(ADA, [str(docs)], "*.html")
            await until_idle(reports)
            assert [h.chunk.path for h in await hub.search(ADA, "heron", 5)] == [str(docs / "page.html")]

    asyncio.run(main())


def test_meaning_finds_a_chunk_that_shares_no_word_with_the_query_and_says_why(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Pets\n\nFelines purr when content.\n", encoding="utf-8")
    (docs / "dogs.md").write_text("# Pets\n\nHounds bark at strangers.\n", encoding="utf-8")
    embedder = WordVectors(["felines|cat", "hounds|dog"])

    async def main() -> None:
        async with served_hub(tmp_path / "data", embedder=embedder) as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            status = await until_idle(reports)
            while status.embedded < status.chunks or status.chunks < 2:
                status = await until_idle(reports)
            # The count is read from the table, written a moment before the searched vectors take the batch.
            for _ in range(100):
                if hits := await hub.search(ADA, "cat behaviour", 5):
                    break
                await asyncio.sleep(0.05)
            [hit] = hits
            assert hit.chunk.path == str(docs / "cats.md")
            assert (hit.words_rank, hit.meaning_rank, hit.terms) == (None, 1, ())
            assert hit.cosine is not None and hit.cosine > 0.9
            [both] = await hub.search(ADA, "felines purr", 5)
            assert (both.words_rank, both.meaning_rank, both.terms) == (1, 1, ("felines", "purr"))
        assert any(text.startswith("Pets\nFelines purr") for text in embedder.passages_seen)

    asyncio.run(main())


def test_removing_a_source_purges_its_bytes_from_the_index_and_keeps_the_others(tmp_path: Path) -> None:
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("# One\n\nThe quincunx is private.\n", encoding="utf-8")
    two.write_text("# Two\n\nThe rhomboid stays.\n", encoding="utf-8")
    data = tmp_path / "data"

    async def main() -> None:
        async with served_hub(data, embedder=WordVectors(["quincunx", "rhomboid"])) as (hub, reports):
            first, _ = (await hub.add(ADA, [str(one), str(two)], None)).source_ids
            status = await until_idle(reports)
            while status.embedded < 2:
                status = await until_idle(reports)
            assert _files_holding(data, b"quincunx")
            assert await hub.remove(ADA, first) == 1
            assert _files_holding(data, b"quincunx") == [] and _files_holding(data, b"private") == []
            assert [h.chunk.path for h in await hub.search(ADA, "quincunx rhomboid", 5)] == [str(two)]
            with pytest.raises(SourceNotFoundError) as caught:
                await hub.remove(ADA, first)
            assert caught.value.code == NOT_FOUND

    asyncio.run(main())


def test_off_means_nothing_is_admitted_searched_or_read_and_no_indexing_thread_runs(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The saffron note.\n", encoding="utf-8")
    state = {"on": True}

    async def main() -> None:
        async with served_hub(tmp_path / "data", on=lambda _: state["on"]) as (hub, reports):
            [source] = (await hub.add(ADA, [str(docs)], None)).source_ids
            await until_idle(reports)
            assert hub.has_sources(ADA)
            state["on"] = False
            await hub.settings_changed(ADA)
            assert not hub.has_sources(ADA) and not hub.indexer.running and not hub.status(ADA).watching
            for attempt in (hub.search(ADA, "saffron", 5), hub.add(ADA, [str(docs)], None)):
                with pytest.raises(KnowledgeOffError) as caught:
                    await attempt
                assert caught.value.code == CONFLICT
            assert [row.source_id for row in await hub.sources(ADA)] == [source]  # listing still works
            assert await hub.remove(ADA, source) == 1  # and so does removing
            assert not hub.indexer.running

    asyncio.run(main())


@pytest.mark.parametrize("where", ["missing", "data", "proc", "relative", "png"])
def test_a_path_that_cannot_be_admitted_is_refused(tmp_path: Path, where: str) -> None:
    data = tmp_path / "data"
    (tmp_path / "x.png").write_bytes(b"\x89PNG")
    paths = {
        "missing": str(tmp_path / "nope"),
        "data": str(data),
        "proc": "/proc/self",
        "relative": "docs",
        "png": str(tmp_path / "x.png"),
    }

    async def main() -> None:
        async with served_hub(data) as (hub, _):
            with pytest.raises(InadmissiblePathError) as caught:
                await hub.add(ADA, [paths[where]], None)
            assert caught.value.code == INVALID_PARAMS
            assert await hub.sources(ADA) == []

    asyncio.run(main())


def test_a_paused_source_is_not_read_again_while_another_is_and_resuming_reads_what_changed(tmp_path: Path) -> None:
    held, live = tmp_path / "held", tmp_path / "live"
    for folder, word in ((held, "juniper"), (live, "larkspur")):
        folder.mkdir()
        (folder / "a.md").write_text(f"# A\n\nThe {word} note.\n", encoding="utf-8")

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):

            async def paths(word: str) -> list[str]:
                return [h.chunk.path for h in await hub.search(ADA, word, 5)]

            async def watching() -> None:
                while not hub.status(ADA).watching:
                    await until_idle(reports)

            [paused, _] = (await hub.add(ADA, [str(held), str(live)], None)).source_ids
            while not await paths("juniper"):  # read before it is paused (a pause drops the reads waiting)
                await until_idle(reports)
            await hub.pause(ADA, paused, True)
            await watching()  # the watcher of the live source alone
            # Both change in one moment; the watcher's batch that brings the live one would bring the held one.
            (held / "a.md").write_text("# A\n\nThe wormwood note.\n", encoding="utf-8")
            (live / "a.md").write_text("# A\n\nThe yarrow note.\n", encoding="utf-8")
            while not await paths("yarrow"):
                await until_idle(reports)
            assert await paths("wormwood") == [] and await paths("juniper") == [str(held / "a.md")]
            await hub.pause(ADA, paused, False)
            while not await paths("wormwood"):
                await until_idle(reports)
            assert await paths("juniper") == []

    asyncio.run(main())


def test_once_nothing_waits_no_source_is_still_indexing(tmp_path: Path) -> None:
    """The base's count of waiting jobs and each source's state agree at every report: a listing that says
    nothing is queued never shows a source as still indexing (a terminal's `accept` waits on the count)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"{n}.md").write_text(f"# Note {n}\n\nThe heliotrope line {n}.\n", encoding="utf-8")
    (tmp_path / "one.md").write_text("# One\n\nA single quillwort.\n", encoding="utf-8")
    seen: list[tuple[int, set[str]]] = []

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            report = hub.indexer._on_progress

            def checked(base: object) -> None:
                # On the indexing thread, as each job's report is made.
                seen.append((hub.status(ADA).queued, hub.indexing(ADA)))
                report(base)  # type: ignore[arg-type]

            hub.indexer._on_progress = checked
            for path in (docs, tmp_path / "one.md"):
                await hub.add(ADA, [str(path)], None)
                await until_idle(reports)
            assert {row.files for row in await hub.sources(ADA)} == {3, 1}

    asyncio.run(main())
    idle = [sources for queued, sources in seen if queued == 0]
    assert idle, "some report came when nothing waited"
    assert all(not sources for sources in idle), seen
