"""The overlap rule: a new path is refused when an admitted source of the same base reads it, or it would read
an admitted source, naming that source; siblings, skipped folders and files the pattern leaves out are not."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from host.knowledge import OverlappingSourceError, Owner
from host.knowledge.overlap import folder_reads, overlap
from host.knowledge.store import SourceSpec
from protocol.errors import INVALID_PARAMS
from tests.host.knowledge.conftest import served_hub, until_idle

EXCLUDED = "/nowhere/data"
DOCS = SourceSpec("s-00000001", "/home/ada/docs", "folder", None, False)
HTML = SourceSpec("s-00000002", "/home/ada/site", "folder", "*.html", False)
NOTE = SourceSpec("s-00000003", "/home/ada/notes/plan.md", "file", None, False)
SOURCES = [DOCS, HTML, NOTE]


def _why(path: str, kind: str = "folder", pattern: str | None = None) -> str | None:
    return overlap(path, path, kind, pattern, SOURCES, EXCLUDED)


@pytest.mark.parametrize(
    ("path", "kind", "pattern", "named", "says"),
    [
        ("/home/ada/docs/guide.md", "file", None, DOCS, "is inside the admitted folder"),
        ("/home/ada/docs/api", "folder", None, DOCS, "is inside the admitted folder"),
        ("/home/ada/docs/api", "folder", "*.md", DOCS, "is inside the admitted folder"),
        ("/home/ada/site/index.html", "file", None, HTML, "is inside the admitted folder"),
        ("/home/ada", "folder", None, DOCS, "holds the admitted folder"),
        ("/home/ada/notes", "folder", None, NOTE, "holds the admitted file"),
        ("/home/ada/notes", "folder", "*.md", NOTE, "holds the admitted file"),
        ("/home/ada/docs", "folder", "*.md", DOCS, "is admitted already as"),
        ("/home/ada/site", "folder", None, HTML, "is admitted already as"),
    ],
)
def test_a_path_that_reads_what_a_source_reads_is_refused_naming_the_source(
    path: str, kind: str, pattern: str | None, named: SourceSpec, says: str
) -> None:
    why = _why(path, kind, pattern)
    assert why is not None and says in why
    assert f"{named.source_id} ({named.path})" in why and f"remove {named.source_id} first" in why


@pytest.mark.parametrize(
    ("path", "kind", "pattern"),
    [
        ("/home/ada/docs", "folder", None),  # the very same source: kept as it is, not a second one
        ("/home/ada/site", "folder", "*.html"),
        ("/home/ada/notes/plan.md", "file", None),
        ("/home/ada/docs2", "folder", None),  # a sibling whose name starts with the admitted one's
        ("/home/ada/papers", "folder", None),
        ("/home/ada/notes/other.md", "file", None),
        ("/home/ada/docs/.drafts", "folder", None),  # the admitted folder skips hidden folders
        ("/home/ada/docs/node_modules/pkg", "folder", None),
        ("/home/ada/docs/.drafts/a.md", "file", None),
        ("/home/ada/site/notes.md", "file", None),  # the folder's pattern leaves it out
        ("/home/ada/notes", "folder", "*.txt"),  # the new pattern leaves the admitted file out
    ],
)
def test_a_path_that_reads_nothing_a_source_reads_is_no_overlap(path: str, kind: str, pattern: str | None) -> None:
    assert _why(path, kind, pattern) is None


def test_a_folder_reads_the_folders_below_it_but_not_itself_its_parent_or_the_data_dir() -> None:
    assert folder_reads(DOCS, "/home/ada/docs/a/b", "folder", EXCLUDED)
    assert not folder_reads(DOCS, "/home/ada/docs", "folder", EXCLUDED)
    assert not folder_reads(DOCS, "/home/ada", "folder", EXCLUDED)
    inside_data = SourceSpec("s-00000004", "/nowhere", "folder", None, False)
    assert not folder_reads(inside_data, "/nowhere/data/agents", "folder", EXCLUDED)


def test_a_path_is_compared_to_an_archived_source_resolved() -> None:
    """A source carried in by an archive may name its folder through a link; the comparison resolves it."""
    here = os.path.realpath("/tmp")
    carried = SourceSpec("s-00000005", "/tmp", "folder", None, False)
    why = overlap("/x", os.path.join(here, "sub"), "folder", None, [carried], EXCLUDED)
    assert why is not None and f"s-00000005 ({here})" in why


ADA, LAUNCH = Owner("agent", "ada"), Owner("work", "launch")


def test_the_hub_refuses_an_overlap_through_a_link_admits_nothing_of_the_call_and_lets_another_owner_admit_it(
    tmp_path: Path,
) -> None:
    docs, sibling = tmp_path / "docs", tmp_path / "docs-old"
    (docs / "api").mkdir(parents=True)
    sibling.mkdir()
    (docs / "api" / "a.md").write_text("# A\n\nThe amaranth note.\n", encoding="utf-8")
    (sibling / "b.md").write_text("# B\n\nThe bittern note.\n", encoding="utf-8")
    os.symlink(docs / "api", tmp_path / "api-link")

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            [first] = (await hub.add(ADA, [str(docs)], None)).source_ids
            await until_idle(reports)
            for paths in ([str(tmp_path / "api-link")], [str(sibling), str(docs / "api" / "a.md")], [str(tmp_path)]):
                with pytest.raises(OverlappingSourceError) as caught:
                    await hub.add(ADA, paths, None)
                assert caught.value.code == INVALID_PARAMS
                assert f"{first} ({docs})" in caught.value.message
            with pytest.raises(OverlappingSourceError):  # two paths of one call overlap each other
                await hub.add(ADA, [str(sibling), str(sibling / "b.md")], None)
            assert [row.source_id for row in await hub.sources(ADA)] == [first], "nothing of a refused call"
            again = await hub.add(ADA, [str(docs)], None)
            assert (again.source_ids, again.already) == ([first], {first})
            beside = await hub.add(ADA, [str(sibling)], None)
            assert beside.already == set() and len({first, *beside.source_ids}) == 2
            [work_source] = (await hub.add(LAUNCH, [str(docs)], None)).source_ids
            assert work_source != first
            while not await hub.search(LAUNCH, "amaranth", 5):
                await until_idle(reports)
            assert [h.chunk.source_id for h in await hub.search(LAUNCH, "amaranth", 5)] == [work_source]
            assert [h.chunk.source_id for h in await hub.search(ADA, "amaranth", 5)] == [first]

    asyncio.run(main())
