"""An ACP prompt as a Hearth message: what the person typed, and apart from it the files they attached.

Text blocks are the typed words and resource links become `[name](uri)` among them; an embedded resource is a file
the editor attached, so it goes to `agent.send` as an attachment (`protocol.models.transcript.Attachment`), never
into the words: the host shows it to the model as file content, and memory counts only the words as the person's.
A binary resource is an attachment named by URI, never decoded; an image or audio (not offered in the prompt
capabilities) is a short note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

__all__ = ["Message", "PromptBlock", "prompt_message"]

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


@dataclass(frozen=True, slots=True)
class Message:
    """`text`: the typed words (and links); `attachments`: each attached file in `agent.send`'s wire form."""

    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)


def _attachment(block: EmbeddedResourceContentBlock) -> dict[str, Any]:
    resource = block.resource
    if isinstance(resource, BlobResourceContents):
        named: dict[str, Any] = {"uri": resource.uri}
    else:
        named = {"uri": resource.uri, "text": resource.text}
    if resource.mime_type:
        named["mimeType"] = resource.mime_type
    return named


def _block_text(block: PromptBlock) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ResourceContentBlock):
        label = block.title or block.name
        return f"[{label}]({block.uri})"
    kind = "image" if isinstance(block, ImageContentBlock) else "audio"
    return f"[an attached {kind}, which this agent cannot see]"


def prompt_message(blocks: Sequence[PromptBlock]) -> Message:
    """The words (text runs as given, every other block on its own paragraph) and the attachments, in order."""
    parts: list[str] = []
    attachments: list[dict[str, Any]] = []
    previous_was_text = True
    for block in blocks:
        if isinstance(block, EmbeddedResourceContentBlock):
            attachments.append(_attachment(block))
            continue
        text = _block_text(block)
        if not text:
            continue
        is_text = isinstance(block, TextContentBlock)
        if parts and not (is_text and previous_was_text):
            parts.append("\n\n")
        parts.append(text)
        previous_was_text = is_text
    return Message("".join(parts).strip(), attachments)
