"""Chunks: a document's blocks packed into passages of bounded size that keep their headings and their place.

Consecutive blocks under one heading path are packed together up to `MAX_CHARS`; a new heading path starts a
new chunk, except that a short run of text (a term, a title) followed by the section it heads stays with it.
A block longer than a chunk is cut at line ends (a very long line, at `MAX_CHARS`), each piece keeping its
own lines, so `start`..`end` always covers exactly the source lines of the chunk's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from host.knowledge.documents import Block

__all__ = ["Chunk", "MAX_CHARS", "chunk_blocks", "heading_text"]

MAX_CHARS = 1500
"""The most characters of text in one chunk."""
_LEAD_CHARS = 300
"""Text shorter than this, before a section it heads, joins that section's first chunk."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One passage: its text, the headings above it, and its first and last line (or page)."""

    text: str
    heading: tuple[str, ...]
    start: int
    end: int


def heading_text(heading: tuple[str, ...]) -> str:
    """A heading path as one line: `Guide > Install > From source`."""
    return " > ".join(heading)


def _pieces(block: Block) -> Iterator[Block]:
    """`block` cut at line ends into pieces of at most `MAX_CHARS` (a longer line on its own, cut by characters)."""
    if len(block.text) <= MAX_CHARS:
        yield block
        return
    lines: list[str] = []
    size = 0
    start = block.start
    single = block.start == block.end  # a page, or one line: every piece has the block's place
    for offset, line in enumerate(block.text.split("\n")):
        number = block.start if single else block.start + offset
        if lines and size + len(line) + 1 > MAX_CHARS:
            yield Block("\n".join(lines), block.heading, start, number if single else number - 1)
            lines, size = [], 0
        if not lines:
            start = number
        while len(line) > MAX_CHARS:
            yield Block(line[:MAX_CHARS], block.heading, number, number)
            line = line[MAX_CHARS:]
        lines.append(line)
        size += len(line) + 1
    if lines:
        yield Block("\n".join(lines), block.heading, start, block.end)


def chunk_blocks(blocks: list[Block]) -> list[Chunk]:
    """Pack a document's blocks into chunks, in order (see the module docstring for the rules)."""
    chunks: list[Chunk] = []
    texts: list[str] = []
    heading: tuple[str, ...] = ()
    start = end = 0
    size = 0

    def flush() -> None:
        if texts:
            chunks.append(Chunk("\n\n".join(texts), heading, start, end))

    for whole in blocks:
        for block in _pieces(whole):
            heads = bool(texts) and size < _LEAD_CHARS and block.heading[: len(heading)] == heading
            fits = size + len(block.text) + 2 <= MAX_CHARS
            if texts and (not fits or (block.heading != heading and not heads)):
                flush()
                texts, size = [], 0
            if not texts:
                start = block.start
            heading = block.heading
            texts.append(block.text)
            size += len(block.text) + 2
            end = max(end, block.end) if len(texts) > 1 else block.end
    flush()
    return chunks
