"""Regenerate docs/protocol.md from the wire models: `python scripts/gen_protocol_doc.py`."""

from __future__ import annotations

from pathlib import Path

from protocol.docgen import render_protocol_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
    target.write_text(render_protocol_markdown(), encoding="utf-8")
    print(f"wrote {target}")
