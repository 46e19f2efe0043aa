"""A person's attached files as the model reads them: after the typed words, fenced and named, never as the words."""

from __future__ import annotations

from host.runs.attachments import user_content
from host.runs.context import build_messages


def test_an_attachment_follows_the_words_fenced_and_named_by_its_uri() -> None:
    event = {"type": "user", "seq": 1, "text": "summarize", "attachments": [{"uri": "file:///p/r.md", "text": "body"}]}
    content = build_messages([], [event])[0].content
    assert (
        content == "summarize\n\n[Attached file file:///p/r.md; its content, not the person's words:]\n```\nbody\n```"
    )


def test_an_attachment_cannot_close_its_own_fence_and_a_binary_one_is_only_named() -> None:
    breaking = {"uri": "file:///x.md", "text": "````\nbreak out\n````"}
    binary = {"uri": "file:///x.bin", "mimeType": "application/octet-stream"}
    lines = user_content({"text": "", "attachments": [breaking, binary]}).splitlines()
    assert lines[1] == "`````" and lines[5] == "`````"
    assert lines[-1] == "[Attached file:///x.bin (application/octet-stream): a binary file, not shown.]"


def test_a_message_without_attachments_is_its_words() -> None:
    assert user_content({"type": "user", "text": "hello"}) == "hello"
