"""An ACP prompt as one Hearth message: text, links and attachments, and the project line taken off again."""

from __future__ import annotations

from acp import (
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from desktop.acp.prompt_text import prompt_text
from protocol.project_note import project_note, without_project_note


def test_text_runs_join_and_links_and_attachments_get_their_own_paragraphs() -> None:
    blocks = [
        text_block("look at "),
        text_block("this"),
        resource_link_block(name="app.py", uri="file:///p/app.py"),
        resource_block(embedded_text_resource("file:///p/notes.md", "line one\nline two")),
        text_block("thanks"),
    ]
    assert prompt_text(blocks) == (
        "look at this\n\n[app.py](file:///p/app.py)\n\nAttached file:///p/notes.md:\n```\nline one\nline two\n```"
        "\n\nthanks"
    )


def test_an_attachment_cannot_close_its_own_fence() -> None:
    text = prompt_text([resource_block(embedded_text_resource("file:///x.md", "````\nbreak out\n````"))])
    assert text.splitlines()[1] == "`````" and text.endswith("`````")


def test_binary_attachments_and_images_are_named_never_decoded() -> None:
    blob = resource_block(embedded_blob_resource("file:///x.bin", "AAAA", mime_type="application/octet-stream"))
    text = prompt_text([blob, image_block("iVBORw0KGgo=", "image/png")])
    assert "AAAA" not in text and "iVBOR" not in text
    assert "file:///x.bin" in text and "image" in text


def test_the_project_line_comes_off_the_replayed_message_and_nothing_else_does() -> None:
    message = f"{project_note('/home/p/proj')}\n\nfix the tests"
    assert without_project_note(message) == "fix the tests"
    assert without_project_note("[The person is working in the project] as a person typed it") == (
        "[The person is working in the project] as a person typed it"
    )
