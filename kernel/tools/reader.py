"""`read_file` and `list_dir`: text files with line numbers, directories without following links.

Both go through `authorize` and the safe openers, so what is shown is exactly the canonical path the policy
allowed. Binary files (a NUL byte in the first 8 KiB) and files over the size cap are refused, long lines are
cut, and a partial read ends with the offset to continue from.
"""

from __future__ import annotations

import os

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext, authorize
from kernel.tools.result import ToolResult
from sandbox import list_entries, open_read, opened, protected_files
from sandbox.protected import PROTECTED_REASON

__all__ = ["READ_FILE", "LIST_DIR", "MAX_FILE_BYTES"]

MAX_FILE_BYTES = 20 * 1024 * 1024
_MAX_LINE_CHARS = 2000
_MAX_OUTPUT_CHARS = 60_000
_MAX_ENTRIES = 1000


async def _read_file(args: Arguments, ctx: ToolContext) -> ToolResult:
    raw = args.text("path")
    offset = args.integer("offset", 1, low=1, high=10**9)
    limit = args.integer("limit", 2000, low=1, high=100_000)
    path = await authorize(ctx, "read", raw)
    with opened(open_read(path, protected=protected_files(ctx.policy))) as fd:
        size = os.fstat(fd).st_size
        if size > MAX_FILE_BYTES:
            return ToolResult(
                f"error: {ctx.show(path)} is {size} bytes, over the {MAX_FILE_BYTES}-byte cap; use grep to find "
                "the part you need",
                is_error=True,
            )
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    if b"\x00" in data[:8192]:
        return ToolResult(
            f"error: {ctx.show(path)} is a binary file ({len(data)} bytes); read_file shows text only", is_error=True
        )
    if not data:
        return ToolResult(f"({ctx.show(path)} is empty)")
    lines = data.decode("utf-8", "replace").splitlines()
    if offset > len(lines):
        raise ToolArgumentError(f"`offset` {offset} is past the end ({len(lines)} lines)")
    shown: list[str] = []
    used = 0
    last = offset - 1
    for number in range(offset, min(len(lines), offset + limit - 1) + 1):
        text = lines[number - 1]
        if len(text) > _MAX_LINE_CHARS:
            text = text[:_MAX_LINE_CHARS] + " [line cut]"
        row = f"{number:>6}\t{text}"
        if used + len(row) > _MAX_OUTPUT_CHARS and shown:
            break
        shown.append(row)
        used += len(row) + 1
        last = number
    if last < len(lines):
        shown.append(f"[lines {offset}-{last} of {len(lines)}; call again with offset={last + 1} for more]")
    return ToolResult("\n".join(shown))


async def _list_dir(args: Arguments, ctx: ToolContext) -> ToolResult:
    path = await authorize(ctx, "list", args.text("path", "."))
    entries = list_entries(path)
    linked = [e.info for e in entries[:_MAX_ENTRIES] if e.info is not None and e.info.st_nlink > 1]
    protected = protected_files(ctx.policy).current() if linked else None
    rows = []
    for entry in entries[:_MAX_ENTRIES]:
        if entry.kind == "dir":
            rows.append(f"{entry.name}/")
        elif entry.kind == "symlink":
            rows.append(f"{entry.name} -> {entry.link_target}")
        elif protected is not None and entry.info is not None and protected.holds(entry.info):
            rows.append(f"{entry.name} (a hard link to {PROTECTED_REASON}; not shown)")
        elif entry.kind == "file":
            rows.append(f"{entry.name} ({entry.size} bytes)")
        else:
            rows.append(f"{entry.name} (special file)")
    header = f"{ctx.show(path)}: {len(entries)} entries"
    if len(entries) > _MAX_ENTRIES:
        rows.append(f"[{len(entries) - _MAX_ENTRIES} more entries not shown]")
    return ToolResult("\n".join([header, *rows]))


READ_FILE = LocalTool(
    ToolDefinition(
        name="read_file",
        description=(
            "Read a text file. Lines come numbered (number, tab, text). Relative paths start in your workspace. "
            "Use offset (first line, 1-based) and limit (number of lines) for long files."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to your workspace or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show (default 1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show (default 2000)."},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    _read_file,
)

LIST_DIR = LocalTool(
    ToolDefinition(
        name="list_dir",
        description="List a directory: sub-directories end in '/', files show their size, links show their target.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Directory (default: your workspace)."}},
            "additionalProperties": False,
        },
    ),
    _list_dir,
)
