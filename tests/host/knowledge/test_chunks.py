"""Chunks are bounded, keep their headings, and cover exactly the lines of their text."""

from __future__ import annotations

from host.knowledge.chunks import MAX_CHARS, chunk_blocks
from host.knowledge.documents import Block, text_blocks


def test_blocks_under_one_heading_pack_together_and_a_new_heading_starts_a_chunk() -> None:
    blocks = [Block("a", ("H",), 1, 1), Block("b", ("H",), 3, 4), Block("c", ("I",), 6, 6)]
    chunks = chunk_blocks(blocks)
    assert [(c.text, c.heading, c.start, c.end) for c in chunks] == [("a\n\nb", ("H",), 1, 4), ("c", ("I",), 6, 6)]


def test_a_short_term_stays_with_the_section_it_heads() -> None:
    blocks = [Block("open(file)", ("Functions",), 10, 10), Block("Opens a file.", ("Functions", "open(file)"), 11, 12)]
    [chunk] = chunk_blocks(blocks)
    assert (chunk.heading, chunk.start, chunk.end) == (("Functions", "open(file)"), 10, 12)


def test_a_long_block_is_cut_at_line_ends_and_each_piece_keeps_its_own_lines() -> None:
    lines = [f"line {n} " + "x" * 90 for n in range(1, 61)]
    [block] = text_blocks("\n".join(lines))
    chunks = chunk_blocks([block])
    assert len(chunks) > 1 and all(len(c.text) <= MAX_CHARS for c in chunks)
    for chunk in chunks:
        assert chunk.text.split("\n")[0].startswith(f"line {chunk.start} ")
        assert chunk.text.split("\n")[-1].startswith(f"line {chunk.end} ")
    assert chunks[0].start == 1 and chunks[-1].end == 60


def test_a_line_longer_than_a_chunk_is_cut_by_characters_on_its_own_line() -> None:
    chunks = chunk_blocks([Block("y" * (MAX_CHARS * 2 + 5), (), 4, 4)])
    assert [len(c.text) for c in chunks] == [MAX_CHARS, MAX_CHARS, 5]
    assert {(c.start, c.end) for c in chunks} == {(4, 4)}
