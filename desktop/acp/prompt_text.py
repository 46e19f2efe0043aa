"""An ACP prompt as the one text of a Hearth message: text as it is, resource links as links, embedded text
resources inline.

Embedded text is what the person attached, so it goes into their message, each attachment fenced and named by
its URI; a binary resource, an image or audio (not offered in the prompt capabilities) is named, never decoded.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

__all__ = ["PromptBlock", "prompt_text"]

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`, so the attachment cannot close it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _block_text(block: PromptBlock) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ResourceContentBlock):
        label = block.title or block.name
        return f"[{label}]({block.uri})"
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, BlobResourceContents):
            return f"[attached binary {resource.uri} ({resource.mime_type or 'unknown type'}), not shown]"
        fence = _fence(resource.text)
        body = resource.text if resource.text.endswith("\n") else resource.text + "\n"
        return f"Attached {resource.uri}:\n{fence}\n{body}{fence}"
    kind = "image" if isinstance(block, ImageContentBlock) else "audio"
    return f"[an attached {kind}, which this agent cannot see]"


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The blocks joined: text runs as given, every other block on its own paragraph."""
    parts: list[str] = []
    previous_was_text = True
    for block in blocks:
        text = _block_text(block)
        if not text:
            continue
        is_text = isinstance(block, TextContentBlock)
        if parts and not (is_text and previous_was_text):
            parts.append("\n\n")
        parts.append(text)
        previous_was_text = is_text
    return "".join(parts).strip()
