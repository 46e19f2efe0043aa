"""The word list: when a query holds rare and common words, only chunks holding a rarer one are ranked, and the
common words still count in their BM25."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.knowledge import Owner
from host.knowledge import search as knowledge_search
from tests.host.knowledge.conftest import served_hub, until_idle

ADA = Owner("agent", "ada")


def test_common_words_rank_the_chunks_a_rare_word_finds_and_find_none_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_search, "COMMON_TERM_CHUNKS", 2)  # "river" is in three chunks: common here
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Grey heron flies.\n", encoding="utf-8")
    (docs / "b.md").write_text("Grey heron river.\n", encoding="utf-8")
    for name in ("c", "d"):
        (docs / f"{name}.md").write_text("The river bends.\n", encoding="utf-8")
    for n, word in enumerate(("oak", "ash", "elm", "yew", "fir", "pine")):
        (docs / f"tree{n}.md").write_text(f"The {word} grows.\n", encoding="utf-8")  # so "river" still weighs

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            await until_idle(reports)
            hits = await hub.search(ADA, "heron river", 5)
            assert [h.chunk.path for h in hits] == [str(docs / "b.md"), str(docs / "a.md")]
            assert hits[0].terms == ("heron", "river") and hits[1].terms == ("heron",)
            only_common = await hub.search(ADA, "river", 5)  # no rarer word: the common one ranks alone
            assert sorted(h.chunk.path for h in only_common) == [str(docs / f"{n}.md") for n in "bcd"]

    asyncio.run(main())
