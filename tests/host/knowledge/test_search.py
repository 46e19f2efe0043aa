"""The word list is FTS5's own BM25 over every content word of the query: a chunk that holds only words many
chunks hold is still found (no word is left out for being common)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from host.knowledge import Owner
from tests.host.knowledge.conftest import served_hub, until_idle

ADA = Owner("agent", "ada")


def test_a_chunk_holding_only_common_query_words_is_found_beside_one_holding_a_rare_word(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    # 1,200 sections hold "river" and "bend" (common words), 1,800 others neither; the answer holds the two
    # words and nothing else (the shortest of them), and one other chunk holds the rare word "heron".
    sections = [f"# Part {n}\n\nThe river bend number {n}.\n" for n in range(1200)]
    sections += [f"# Tree {n}\n\nThe oak number {n}.\n" for n in range(1800)]
    (docs / "many.md").write_text("\n".join(sections), encoding="utf-8")
    (docs / "answer.md").write_text("# Answer\n\nRiver bend.\n", encoding="utf-8")
    (docs / "bird.md").write_text("# Bird\n\nA heron.\n", encoding="utf-8")

    async def main() -> None:
        async with served_hub(tmp_path / "data") as (hub, reports):
            await hub.add(ADA, [str(docs)], None)
            await until_idle(reports)
            hits = await hub.search(ADA, "heron river bend", 5)
            paths = [h.chunk.path for h in hits]
            assert str(docs / "bird.md") in paths and str(docs / "answer.md") in paths
            [answer] = [h for h in hits if h.chunk.path == str(docs / "answer.md")]
            assert answer.terms == ("river", "bend")

    asyncio.run(main())
