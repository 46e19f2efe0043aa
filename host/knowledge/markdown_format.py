"""Markdown through markdown-it-py (CommonMark, with tables): each top-level block keeps its source lines.

The parser's token map gives every block's line range, so a block's text is the Markdown source of those
lines (a code fence, a table or a list stays as written) and its place is exact. Headings are not blocks of
their own: they set the heading path of the blocks below them, down to the next heading of their level.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from host.knowledge.documents import Block

__all__ = ["markdown_blocks"]

_PARSER = MarkdownIt("commonmark").enable("table")


def markdown_blocks(text: str) -> list[Block]:
    """The blocks of a Markdown document, in order, each under the headings that precede it."""
    lines = text.splitlines()
    tokens = _PARSER.parse(text)
    headings: list[tuple[int, str]] = []
    blocks: list[Block] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        first, last = token.map
        if token.type == "heading_open":
            level = int(token.tag[1:])
            title = tokens[index].content.strip() if index < len(tokens) else ""
            headings = [(n, t) for n, t in headings if n < level] + [(level, title)]
            continue
        if token.type == "hr":
            continue
        # A list's range runs on over the blank line after it: a block's place is its non-blank lines.
        while last > first and not lines[last - 1].strip():
            last -= 1
        while first < last and not lines[first].strip():
            first += 1
        body = "\n".join(line.rstrip() for line in lines[first:last])
        if body.strip():
            blocks.append(Block(body, tuple(t for _, t in headings), first + 1, last))
    return blocks
