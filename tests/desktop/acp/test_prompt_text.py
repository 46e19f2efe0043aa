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

from desktop.acp.prompt_text import prompt_message
from protocol.project_note import project_note, without_project_note


def test_text_runs_join_links_get_their_own_paragraphs_and_attachments_stay_apart() -> None:
    blocks = [
        text_block("look at "),
        text_block("this"),
        resource_link_block(name="app.py", uri="file:///p/app.py"),
        resource_block(embedded_text_resource("file:///p/notes.md", "line one\nline two", mime_type="text/markdown")),
        text_block("thanks"),
    ]
    message = prompt_message(blocks)
    assert message.text == "look at this\n\n[app.py](file:///p/app.py)\n\nthanks"
    assert message.attachments == [
        {"uri": "file:///p/notes.md", "text": "line one\nline two", "mimeType": "text/markdown"}
    ], "an attached file is never part of the typed words"


def test_binary_attachments_and_images_are_named_never_decoded() -> None:
    blob = resource_block(embedded_blob_resource("file:///x.bin", "AAAA", mime_type="application/octet-stream"))
    message = prompt_message([blob, image_block("iVBORw0KGgo=", "image/png")])
    assert message.attachments == [{"uri": "file:///x.bin", "mimeType": "application/octet-stream"}]
    assert "AAAA" not in message.text and "iVBOR" not in message.text and "image" in message.text


def test_the_project_line_comes_off_the_replayed_message_and_nothing_else_does() -> None:
    message = f"{project_note('/home/p/proj')}\n\nfix the tests"
    assert without_project_note(message) == "fix the tests"
    assert without_project_note("[The person is working in the project] as a person typed it") == (
        "[The person is working in the project] as a person typed it"
    )
