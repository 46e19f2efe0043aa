"""PDF through pypdf (pure Python, kept by its maintainers, no native code): one page's text at a time.

A block is a paragraph of one page, and its place is that page (`start` = `end` = the page number), so a
result cites `path:p.N`. The document's outline, when it has one, gives each page the heading path of the
last outline entry at or before it. An encrypted file (without an empty password), one that does not parse,
or one whose pages hold no text (a scan) is refused with that reason.
"""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import PyPdfError
from pypdf.generic import Destination

from host.knowledge.documents import Block, Document, UnreadableDocumentError, text_blocks

__all__ = ["pdf_document"]

logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns on every quirk of a file, at length


def _outline(reader: PdfReader) -> dict[int, tuple[str, ...]]:
    """The heading path of the outline entries, by the 0-based page each begins on."""
    starts: dict[int, tuple[str, ...]] = {}

    def walk(items: list[object], path: tuple[str, ...]) -> None:
        last: tuple[str, ...] = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)  # the children of the entry just before
                continue
            if not isinstance(item, Destination):
                continue
            title = str(item.title or "").strip()
            try:
                page = reader.get_destination_page_number(item)
            except (PyPdfError, KeyError, TypeError, ValueError, AttributeError):
                continue
            last = (*path, title[:160])
            if page is not None and page >= 0:
                starts.setdefault(page, last)

    try:
        walk(list(reader.outline), ())
    except (PyPdfError, KeyError, TypeError, ValueError, AttributeError, RecursionError):
        return {}
    return starts


def pdf_document(data: bytes) -> Document:
    """The paragraphs of every page of a PDF, each placed on its page.

    Raises:
        UnreadableDocumentError: encrypted, malformed, or without any text.
    """
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocumentError("an encrypted PDF")
        headings = _outline(reader)
        blocks: list[Block] = []
        heading: tuple[str, ...] = ()
        for number, page in enumerate(reader.pages):
            heading = headings.get(number, heading)
            for block in text_blocks(page.extract_text() or ""):
                blocks.append(Block(block.text, heading, number + 1, number + 1))
    except UnreadableDocumentError:
        raise
    except (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise UnreadableDocumentError(f"not a readable PDF ({type(exc).__name__})") from None
    if not blocks:
        raise UnreadableDocumentError("a PDF without text (a scan needs text recognition first)")
    return Document(blocks, unit="page")
