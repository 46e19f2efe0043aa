"""An MCP tool result as text for the model: every content block named, capped like the shell's output.

Text is kept; images, audio and binary resources are described, never inlined; a result with only
structured content is given as JSON. The whole is cut (head and tail kept) at `MAX_RESULT_CHARS`, and the
cut says so and states the cap. The server's secret values are withheld before anything else sees the text.
"""

from __future__ import annotations

import json

import mcp_types

from kernel.mcp.spec import ServerSpec
from kernel.tools import ToolResult
from kernel.tools.shell_pool import clip_text

__all__ = ["MAX_RESULT_CHARS", "result_text"]

MAX_RESULT_CHARS = 30_000
"""The cap on one MCP result's text, the same as the shell's output cap."""


def _block_text(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link: {block.uri}]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        return f"[resource {resource.uri}: {len(resource.blob) * 3 // 4} bytes of binary data, not shown]"
    return f"[{type(block).__name__} content, not shown]"


def result_text(result: mcp_types.CallToolResult, spec: ServerSpec) -> ToolResult:
    """The model's view of one result.

    Args:
        result: what the server answered.
        spec: the server (its secrets are withheld from the text).

    Returns:
        The capped text, an error when the server said the call failed.
    """
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True))
    text = spec.redact("\n".join(parts)) or "(the tool returned nothing)"
    if len(text) > MAX_RESULT_CHARS:
        text = clip_text(text, MAX_RESULT_CHARS)
        text += f"\n[the result was cut: MCP results are capped at {MAX_RESULT_CHARS} characters]"
    if result.is_error:
        return ToolResult(f"error: {text}", is_error=True)
    return ToolResult(text)
