"""docs/protocol.md is generated from the models and must match them."""

from __future__ import annotations

from protocol.docgen import render_protocol_markdown
from tests.support.host_process import REPO_ROOT


def test_protocol_doc_is_up_to_date_with_the_models() -> None:
    committed = (REPO_ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert committed == render_protocol_markdown(), "run: python scripts/gen_protocol_doc.py"
