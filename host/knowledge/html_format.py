"""HTML through the standard library's tokenizer (`html.parser`): text blocks with the lines they came from.

The tokenizer reports where every piece of text starts, which a tree builder such as selectolax does not
(docs/decisions.md), so each block cites its source lines. What a page shows around its content is left
out: scripts, styles, navigation, headers, footers, sidebars and forms; when the page marks its main content
(`<main>` or `role="main"`), only that is kept. Headings h1-h6 set the heading path of the blocks below;
a definition list's term (`<dt>`) heads its definition too, until the list ends.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from host.knowledge.documents import Block

__all__ = ["html_blocks"]

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav", "aside", "form", "button"})
_SKIPPED |= frozenset({"select", "header", "footer", "iframe", "object", "canvas", "math"})
_SKIPPED_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
_SKIPPED_CLASSES = frozenset({"sphinxsidebar", "sidebar", "related", "navigation", "breadcrumbs", "footer"})
_SKIPPED_CLASSES |= frozenset({"headerlink", "nav", "menu", "toc-drawer", "skip-link"})
_BLOCKS = frozenset(
    """p div li dt dd pre blockquote table tr td th caption figcaption section article main ul ol dl
    h1 h2 h3 h4 h5 h6 br hr details summary address""".split()
)
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_TITLE_CHARS = 160
_SPACE = re.compile(r"[ \t\r\f\v\n]+")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[Block, bool]] = []
        self.saw_main = False
        self._open: list[tuple[str, bool, bool]] = []  # (tag, skipped, main) of each open element
        self._skip = 0
        self._main = 0
        self._pre = 0
        self._parts: list[str] = []
        self._start = 0
        self._end = 0
        self._headings: list[tuple[int, str]] = []
        self._heading: int | None = None
        self._lists = 0  # open definition lists
        self._term = False

    def _flush(self) -> None:
        text = "".join(self._parts)
        text = text.strip("\n") if self._pre else _SPACE.sub(" ", text).strip()
        self._parts = []
        if not text:
            return
        level = self._heading if self._heading is not None else 6 + self._lists if self._term else None
        if self._heading is None:
            heading = tuple(t for _, t in self._headings)
            self.blocks.append((Block(text, heading, self._start, max(self._start, self._end)), self._main > 0))
        if level is not None:
            title = _SPACE.sub(" ", text.rstrip("¶# ")).strip()[:_TITLE_CHARS]
            self._headings = [(n, t) for n, t in self._headings if n < level] + [(level, title)]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        classes = set(values.get("class", "").split())
        skipped = (
            tag in _SKIPPED
            or values.get("role") in _SKIPPED_ROLES
            or bool(classes & _SKIPPED_CLASSES)
            or "hidden" in values
            or values.get("aria-hidden") == "true"
        )
        main = tag == "main" or values.get("role") == "main"
        if tag in _BLOCKS and not self._skip:
            self._flush()
        if tag in _VOID:
            return
        self._open.append((tag, skipped, main))
        self._skip += skipped
        self._main += main
        self.saw_main = self.saw_main or main
        if tag == "pre":
            self._pre += 1
        if tag in _HEADINGS and not self._skip:
            self._heading = _HEADINGS[tag]
        self._lists += tag == "dl"
        self._term = self._term or (tag == "dt" and not self._skip)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not any(name == tag for name, _, _ in self._open):
            return  # a stray end tag closes nothing
        while self._open:
            name, skipped, main = self._open.pop()
            if tag in _BLOCKS and not self._skip:
                self._flush()
            self._skip -= skipped
            self._main -= main
            if name == "pre":
                self._pre -= 1
            if name in _HEADINGS:
                self._heading = None
            if name == "dt":
                self._term = False
            if name == "dl":
                self._headings = [(n, t) for n, t in self._headings if n < 6 + self._lists]
                self._lists -= 1
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._skip or not data:
            return
        line = self.getpos()[0]
        if not "".join(self._parts).strip():
            # The block starts at its first visible character, below any newlines the text opens with.
            self._start = line + data[: len(data) - len(data.lstrip())].count("\n")
        self._parts.append(data)
        self._end = line + data.rstrip().count("\n")

    def close(self) -> None:
        super().close()
        self._flush()


def html_blocks(text: str) -> list[Block]:
    """The text blocks of an HTML page in order, each under the headings that precede it."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    if reader.saw_main:
        return [block for block, in_main in reader.blocks if in_main]
    return [block for block, _ in reader.blocks]
