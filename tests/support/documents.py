"""Documents for the knowledge tests: a small PDF written by hand (text pages, an outline), and a folder of
Markdown, HTML and PDF files with one distinctive fact each, so a search can be checked to the file and line.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_pdf", "write_corpus", "CORPUS_FACTS"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str]], outline: list[tuple[str, int]] | None = None) -> Path:
    """A PDF of text pages (each a list of lines, Helvetica 11pt) with an optional outline of (title, page)."""
    objects: list[bytes] = []

    def add(body: str | bytes) -> int:
        objects.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(objects)

    catalog = add("")  # filled in below
    pages_obj = add("")
    font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    page_ids = []
    for lines in pages:
        text = "BT /F1 11 Tf 14 TL 72 740 Td " + " ".join(f"({_escape(line)}) Tj T*" for line in lines) + " ET"
        stream = add(f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
        page_ids.append(
            add(
                f"<< /Type /Page /Parent {pages_obj} 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {stream} 0 R >>"
            )
        )
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects[pages_obj - 1] = f"<< /Type /Pages /Kids [{kids}] /Count {len(page_ids)} >>".encode("latin-1")
    outline_ref = ""
    if outline:
        root = add("")
        items = []
        for title, page in outline:
            items.append(
                add(f"<< /Title ({_escape(title)}) /Parent {root} 0 R /Dest [{page_ids[page - 1]} 0 R /Fit] >>")
            )
        for n, item in enumerate(items):
            links = (f" /Prev {items[n - 1]} 0 R" if n else "") + (
                f" /Next {items[n + 1]} 0 R" if n + 1 < len(items) else ""
            )
            objects[item - 1] = objects[item - 1][:-2] + links.encode("latin-1") + b" >>"
        objects[root - 1] = (
            f"<< /Type /Outlines /First {items[0]} 0 R /Last {items[-1]} 0 R /Count {len(items)} >>".encode()
        )
        outline_ref = f" /Outlines {root} 0 R"
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_obj} 0 R{outline_ref} >>".encode("latin-1")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root {catalog} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


CORPUS_FACTS = {
    "guide.md": ("zephyrine", 7),
    "manual.html": ("quillfeather", 9),
    "paper.pdf": ("obsidianite", 2),
}
"""A distinctive word in each file of `write_corpus`, and the line (the page for the PDF) it is on."""


def write_corpus(folder: Path) -> Path:
    """A folder with a Markdown guide, an HTML manual and a two-page PDF paper (see `CORPUS_FACTS`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "guide.md").write_text(
        "# Garden guide\n\n## Watering\n\nWater the beds at dawn.\n\n"
        "The zephyrine hose attachment gives a fine mist for seedlings.\n\n## Pruning\n\nPrune in late winter.\n",
        encoding="utf-8",
    )
    (folder / "manual.html").write_text(
        "<!doctype html>\n<html><head><title>Manual</title><script>var x = 1;</script></head>\n<body>\n"
        "<nav>Home | About</nav>\n<main>\n<h1>Espresso machine manual</h1>\n<h2>Cleaning</h2>\n"
        "<p>Descale every month.\nUse the quillfeather brush for the steam wand.</p>\n</main>\n"
        "<footer>Copyright</footer>\n</body></html>\n",
        encoding="utf-8",
    )
    write_pdf(
        folder / "paper.pdf",
        [
            ["Rock formation survey", "Field notes from the northern ridge."],
            ["Findings", "Veins of obsidianite run east."],
        ],
        outline=[("Introduction", 1), ("Findings", 2)],
    )
    return folder
