"""A document as knowledge reads it: blocks of text, each with its heading path and its place in the file.

`read_document` picks the parser by the file's name (Markdown, HTML, PDF, plain text and source code) and
returns the blocks in file order. A block's `start`/`end` are 1-based, inclusive line numbers (pages for a
PDF), so every chunk made of blocks can be cited as `path:start-end` and opened there. A file that cannot be
read as a document raises `UnreadableDocumentError` with a reason fit to show a person; nothing is guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "Block",
    "Document",
    "UnreadableDocumentError",
    "MAX_FILE_BYTES",
    "document_kind",
    "read_document",
    "decode_text",
    "text_blocks",
]

Unit = Literal["line", "page"]

MAX_FILE_BYTES = 32 << 20
"""A larger file is listed as not indexed (too large), not read."""

_MARKDOWN = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_HTML = frozenset({".html", ".htm", ".xhtml"})
_TEXT = frozenset({".txt", ".text", ".rst", ".org", ".adoc", ".tex", ".csv", ".tsv", ".log"})
_CODE = frozenset(
    """
    .py .pyi .js .mjs .cjs .ts .tsx .jsx .go .rs .c .h .cc .cpp .cxx .hpp .hh .java .kt .kts .scala .swift .m
    .rb .php .pl .lua .r .jl .hs .ml .ex .exs .erl .clj .el .lisp .scm .sh .bash .zsh .fish .ps1 .sql .css
    .scss .less .vue .svelte .toml .yaml .yml .json .ini .cfg .conf .xml .proto .graphql .tf .nix .dart .zig
    """.split()
)
_NAMED = frozenset({"readme", "license", "copying", "changelog", "makefile", "dockerfile", "notice", "authors"})


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a document: its text, the headings above it (outermost first), and where it lies."""

    text: str
    heading: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its blocks in order, and whether their places are lines or pages."""

    blocks: list[Block]
    unit: Unit = "line"


class UnreadableDocumentError(Exception):
    """The file cannot be read as a document; `reason` says why, for the source's list of failures."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def document_kind(path: Path) -> str | None:
    """`markdown`, `html`, `pdf`, `text` or `code` by the file's name, or None for a file knowledge skips."""
    suffix = path.suffix.lower()
    if suffix in _MARKDOWN:
        return "markdown"
    if suffix in _HTML:
        return "html"
    if suffix == ".pdf":
        return "pdf"
    if suffix in _TEXT or (not suffix and path.name.lower() in _NAMED):
        return "text"
    if suffix in _CODE or path.name.lower() in _NAMED:
        return "code"
    return None


def decode_text(data: bytes) -> str:
    """The text of a file's bytes (UTF-8, a BOM dropped).

    Raises:
        UnreadableDocumentError: the bytes hold NUL characters (a binary file) or are not UTF-8.
    """
    if b"\x00" in data[:8192]:
        raise UnreadableDocumentError("a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocumentError(f"not UTF-8 text (byte {exc.start})") from None


def text_blocks(text: str, heading: tuple[str, ...] = (), first_line: int = 1) -> list[Block]:
    """Plain text as blocks: runs of non-blank lines (paragraphs, or code between blank lines)."""
    blocks: list[Block] = []
    lines: list[str] = []
    start = first_line
    for number, line in enumerate(text.splitlines(), start=first_line):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.rstrip())
        elif lines:
            blocks.append(Block("\n".join(lines), heading, start, number - 1))
            lines = []
    if lines:
        blocks.append(Block("\n".join(lines), heading, start, start + len(lines) - 1))
    return blocks


def read_document(path: Path, data: bytes) -> Document:
    """Parse one file's bytes by the kind its name says.

    Args:
        path: the file (its name picks the parser).
        data: its contents, read by the caller.

    Raises:
        UnreadableDocumentError: the kind is not one knowledge reads, or the file does not parse as that kind.
    """
    kind = document_kind(path)
    if kind is None:
        raise UnreadableDocumentError(f"not a kind of file knowledge reads ({path.suffix or 'no suffix'})")
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableDocumentError(f"too large ({len(data) >> 20} MiB; the limit is {MAX_FILE_BYTES >> 20} MiB)")
    if kind == "pdf":
        from host.knowledge.pdf_format import pdf_document

        return pdf_document(data)
    text = decode_text(data)
    if kind == "markdown":
        from host.knowledge.markdown_format import markdown_blocks

        return Document(markdown_blocks(text))
    if kind == "html":
        from host.knowledge.html_format import html_blocks

        return Document(html_blocks(text))
    return Document(text_blocks(text))
