"""`write_file` and `edit_file`: changes to files, made atomically and never through a symlink.

The target is made canonical without resolving its last part, decided as a write, and replaced through
`write_atomic` (temp file in the pinned parent, then rename). An edit is an exact, unique replacement: zero or
several matches are clear errors that say what to do next.
"""

from __future__ import annotations

import os

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext, authorize
from kernel.tools.reader import MAX_FILE_BYTES
from kernel.tools.result import ToolResult
from sandbox import open_read, opened, protected_files, write_atomic

__all__ = ["WRITE_FILE", "EDIT_FILE"]


async def _write_file(args: Arguments, ctx: ToolContext) -> ToolResult:
    raw = args.text("path")
    data = args.text("content").encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise ToolArgumentError(f"`content` is over the {MAX_FILE_BYTES}-byte cap")
    path = await authorize(ctx, "write", raw, follow_final=False)
    write_atomic(ctx.policy, path, data)
    return ToolResult(f"wrote {len(data)} bytes to {ctx.show(path)}")


async def _edit_file(args: Arguments, ctx: ToolContext) -> ToolResult:
    raw = args.text("path")
    old = args.text("old_string")
    new = args.text("new_string")
    replace_all = args.flag("replace_all")
    if not old:
        raise ToolArgumentError("`old_string` must not be empty; use write_file to create a file")
    if old == new:
        raise ToolArgumentError("`old_string` and `new_string` are the same; nothing would change")
    path = await authorize(ctx, "write", raw, follow_final=False)
    with opened(open_read(path, protected=protected_files(ctx.policy))) as fd:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    if len(data) > MAX_FILE_BYTES or b"\x00" in data[:8192]:
        return ToolResult(f"error: {ctx.show(path)} is binary or too large to edit", is_error=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ToolResult(f"error: {ctx.show(path)} is not UTF-8 text", is_error=True)
    count = text.count(old)
    if count == 0:
        return ToolResult(f"error: old_string was not found in {ctx.show(path)}; nothing changed", is_error=True)
    if count > 1 and not replace_all:
        return ToolResult(
            f"error: old_string occurs {count} times in {ctx.show(path)}; include more surrounding text to make it "
            "unique, or set replace_all to true; nothing changed",
            is_error=True,
        )
    write_atomic(ctx.policy, path, text.replace(old, new).encode("utf-8"))
    return ToolResult(f"edited {ctx.show(path)}: {count} replacement{'s' if count > 1 else ''}")


WRITE_FILE = LocalTool(
    ToolDefinition(
        name="write_file",
        description=(
            "Create or replace a file with the given text (missing directories are created). Relative paths start "
            "in your workspace. Writes never follow a symbolic link."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to your workspace or absolute."},
                "content": {"type": "string", "description": "The whole new content of the file."},
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    ),
    _write_file,
)

EDIT_FILE = LocalTool(
    ToolDefinition(
        name="edit_file",
        description=(
            "Replace exact text in a file. old_string must occur exactly once (include surrounding lines to make "
            "it unique) unless replace_all is true."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to your workspace or absolute."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": False,
        },
    ),
    _edit_file,
)
