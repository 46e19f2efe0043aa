"""Each format's parser gives blocks with their headings and their exact place in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.knowledge.documents import UnreadableDocumentError, document_kind, read_document
from tests.support.documents import write_pdf


def _read(name: str, text: str) -> list[tuple[tuple[str, ...], int, int, str]]:
    document = read_document(Path(name), text.encode("utf-8"))
    return [(b.heading, b.start, b.end, b.text) for b in document.blocks]


def test_markdown_blocks_keep_their_source_lines_and_the_headings_above_them() -> None:
    text = "# Title\n\nIntro line.\n\n## Part\n\n```\ncode one\ncode two\n```\n\n- a\n- b\n\n# Next\n\nEnd.\n"
    assert _read("a.md", text) == [
        (("Title",), 3, 3, "Intro line."),
        (("Title", "Part"), 7, 10, "```\ncode one\ncode two\n```"),
        (("Title", "Part"), 12, 13, "- a\n- b"),
        (("Next",), 17, 17, "End."),
    ]


def test_html_keeps_the_main_content_with_its_lines_and_drops_scripts_and_navigation() -> None:
    page = (
        "<html><head><title>t</title><script>alert(1)</script></head>\n<body><nav>Menu</nav>\n"
        '<div role="main">\n<h1>Manual<a class="headerlink">¶</a></h1>\n<p>First\nparagraph &amp; more.</p>\n'
        "<dl><dt>open(file)</dt><dd><p>Opens a file.</p></dd></dl>\n<pre>  x = 1\n  y = 2</pre>\n</div>\n"
        "<footer>Copyright</footer></body></html>\n"
    )
    assert _read("a.html", page) == [
        (("Manual",), 5, 6, "First paragraph & more."),
        (("Manual",), 7, 7, "open(file)"),
        (("Manual", "open(file)"), 7, 7, "Opens a file."),
        (("Manual",), 8, 9, "  x = 1\n  y = 2"),
    ]


def test_html_without_a_main_element_keeps_every_visible_block() -> None:
    blocks = _read("a.htm", "<p>one</p>\n<aside>side</aside>\n<p hidden>secret</p>\n<p>two</p>")
    assert [text for *_, text in blocks] == ["one", "two"]


def test_a_pdf_gives_one_block_per_paragraph_placed_on_its_page_under_its_outline(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "p.pdf", [["Intro text."], ["Second page words."]], outline=[("One", 1), ("Two", 2)])
    document = read_document(path, path.read_bytes())
    assert document.unit == "page"
    assert [(b.heading, b.start, b.end, b.text) for b in document.blocks] == [
        (("One",), 1, 1, "Intro text."),
        (("Two",), 2, 2, "Second page words."),
    ]


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("x.pdf", b"%PDF-1.4 nothing here", "not a readable PDF"),
        ("x.txt", b"\x00\x01binary", "a binary file"),
        ("x.md", b"caf\xe9", "not UTF-8"),
        ("x.exe", b"MZ", "not a kind of file"),
    ],
)
def test_a_file_that_cannot_be_read_says_why(name: str, data: bytes, reason: str) -> None:
    with pytest.raises(UnreadableDocumentError) as caught:
        read_document(Path(name), data)
    assert caught.value.reason.startswith(reason)


def test_a_pdf_without_text_is_refused_as_a_scan(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [[]])
    with pytest.raises(UnreadableDocumentError) as caught:
        read_document(path, path.read_bytes())
    assert "without text" in caught.value.reason


def test_the_kind_of_a_file_follows_its_name() -> None:
    kinds = [document_kind(Path(n)) for n in ("a.MD", "b.html", "c.pdf", "d.rst", "e.py", "README", "f.png")]
    assert kinds == ["markdown", "html", "pdf", "text", "code", "text", None]
