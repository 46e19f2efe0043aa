"""`glob`: find files by name pattern under a directory the policy lets the run list.

The root is split into uniform pieces (`sandbox.reach`) and each piece is walked through directory
descriptors (`os.fwalk`) without following symlinks, so the walk never leaves what the policy allowed. Patterns
are relative: `*` and `?` stay inside one path component, `**` spans any number of them, and `..` or an
absolute pattern is refused rather than resolved.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import time

from kernel.providers.base import ToolDefinition
from kernel.tools.context import Arguments, LocalTool, ToolArgumentError, ToolContext, authorize
from kernel.tools.result import ToolResult
from sandbox import PathEscapeError, opened, pin_path, search_roots

__all__ = ["GLOB", "glob_regex"]

_WALK_SECONDS = 20.0


def _component_regex(part: str) -> str:
    out = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a relative glob into a regex over `/`-separated relative paths.

    Raises:
        ToolArgumentError: an empty pattern.
        PathEscapeError: an absolute pattern, a NUL byte or a `..` component (it would leave the root).
    """
    if not pattern:
        raise ToolArgumentError("`pattern` must be a relative glob such as '**/*.py'")
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if pattern.startswith("/") or "\x00" in pattern or ".." in parts:
        raise PathEscapeError("a glob pattern may not leave its directory (absolute, '..' or NUL); use `path`")
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _component_regex(part) + ("" if last else "/")
    return re.compile(regex + r"\Z")


def _walk(fd: int, prefix: str, regex: re.Pattern[str], found: list[str], cap: int, deadline: float) -> bool:
    """Add matches under the pinned directory `fd`; False when the cap or the deadline stopped the walk."""
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
        dirnames.sort()
        base = prefix + (dirpath[2:] + "/" if dirpath != "." else "")
        # fwalk lists a symlink to a directory among the directories (and never descends it): it is a name match.
        links = [d for d in dirnames if stat.S_ISLNK(os.stat(d, dir_fd=dir_fd, follow_symlinks=False).st_mode)]
        found.extend(base + name for name in [*filenames, *links] if regex.match(base + name))
        if len(found) > cap or time.monotonic() > deadline:
            return False
    return True


def _collect(ctx: ToolContext, root: str, regex: re.Pattern[str], cap: int) -> tuple[list[str], bool]:
    with opened(pin_path(root)) as fd:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise ToolArgumentError("`path` must be a directory")
        pieces = search_roots(ctx.policy, root, is_dir=True)
    found: list[str] = []
    complete = True
    deadline = time.monotonic() + _WALK_SECONDS
    for piece in pieces:
        relative = piece[len(root) :].lstrip("/")
        with opened(pin_path(piece)) as fd:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                complete = _walk(fd, relative + "/" if relative else "", regex, found, cap, deadline) and complete
            elif regex.match(relative):
                found.append(relative)
        if not complete:
            break
    return sorted(found), complete


async def _glob(args: Arguments, ctx: ToolContext) -> ToolResult:
    regex = glob_regex(args.text("pattern"))
    head_limit = args.integer("head_limit", 200, low=1, high=5000)
    root = await authorize(ctx, "list", args.text("path", "."))
    found, complete = await asyncio.to_thread(_collect, ctx, root, regex, head_limit)
    if not found:
        return ToolResult("no files match" + ("" if complete else " (the walk stopped early; narrow the path)"))
    rows = [ctx.show(f"{root.rstrip('/')}/{relative}") for relative in found[:head_limit]]
    if len(found) > head_limit or not complete:
        rows.append(f"[more files may match; showing {len(rows)}: narrow the pattern or the path]")
    return ToolResult("\n".join(rows))


GLOB = LocalTool(
    ToolDefinition(
        name="glob",
        description=(
            "Find files whose path matches a glob, such as '**/*.py' or 'src/*.md'. `*` matches within one "
            "directory level, `**` across levels. Symbolic links are listed but not followed."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Relative glob, matched against paths under `path`."},
                "path": {"type": "string", "description": "Directory to search (default: your workspace)."},
                "head_limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Most paths (200)."},
            },
            "required": ["pattern"],
            "additionalProperties": False,
        },
    ),
    _glob,
)
